/**
 * The player inside a SCORM package (docs/scorm.md): the course arrives whole in the boot
 * configuration, answers are graded here with @lectern/grading, the LMS hears of every change through
 * `ScormSession`, and with track=1 a tracking run of this service is opened beside it. Nothing the LMS or
 * the service does wrong stops the learner: no LMS shows a notice, a refused or unreachable service is logged.
 */
import {
  correctAnswer,
  feedbackFor,
  gradeAnswer,
  isGraded,
  learnerBlock,
  scoreAnswers,
  unkeyedItemId,
} from '@lectern/grading';
import { PlayerClient } from '../core/client.js';
import { ScormSession, findLmsApi, interactionFor, type ScormSnapshot } from '../core/scorm.js';
import { SUSPEND_LIMIT, decodeSuspend, encodeSuspend } from '../core/suspend.js';
import { serverEvent } from '../core/track.js';
import type { PlayerBlock, PlayerCourse, PlayerScormConfig, ReviewItem } from '../core/types.js';
import { Session, type LocalRun, type SessionState } from './session.js';

const itemId = unkeyedItemId;
const round2 = (n: number) => Math.round(n * 100) / 100;
const warn = (message: string) => console.warn(`lectern player: SCORM: ${message}`);

/** What this page renders: the stored course's learner view (instructor notes out, answer keys hidden). */
function learnerCourse(stored: PlayerCourse): PlayerCourse {
  return {
    ...stored,
    screens: stored.screens.map((s) => ({
      id: s.id,
      title: s.title,
      blocks: s.blocks.filter((b) => b.type !== 'instructor_note').map((b) => learnerBlock(b, itemId)),
    })),
  };
}

export function bootScorm(
  config: PlayerScormConfig,
  start: (course: PlayerCourse, session: Session) => void,
): void {
  const stored = config.course;
  const view = learnerCourse(stored);
  const blocks = new Map<string, PlayerBlock>();
  for (const s of stored.screens) for (const b of s.blocks) blocks.set(b.id, b);

  const api = findLmsApi(window, config.scorm);
  const sco = api ? new ScormSession(api, config.scorm, () => Date.now(), warn) : null;
  const opened = sco?.open() ?? null;
  let resume = opened?.suspendData ? decodeSuspend(stored, opened.suspendData, itemId) : null;
  if (resume === null && opened?.location) {
    const index = stored.screens.findIndex((s) => s.id === opened.location);
    if (index !== -1) resume = { index, answers: {} };
  }

  const snapshot = (state: SessionState): ScormSnapshot => ({
    screenId: stored.screens[state.index]?.id ?? '',
    suspendData: encodeSuspend(
      stored,
      { index: state.index, answers: state.answers },
      SUSPEND_LIMIT[config.scorm],
      itemId,
    ).data,
    finished: state.finished,
    result: state.result ? { percent: state.result.score, passed: state.result.passed } : null,
    interactions: Object.keys(state.answers)
      .filter((id) => state.submitted[id] && isGraded(blocks.get(id)))
      .map((id) => {
        const block = blocks.get(id)!;
        return interactionFor(block, state.answers[id], gradeAnswer(block, state.answers[id], itemId));
      }),
  });

  /** The review of the finish, as the Player API builds it (docs/player-api.md "Review"), from the kept keys. */
  const showCorrect = stored.review?.showCorrectAnswers === true;
  const reviewOf = (answers: Record<string, unknown>): ReviewItem[] =>
    stored.screens.flatMap((s) =>
      s.blocks.filter(isGraded).map((block) => {
        const answered = Object.hasOwn(answers, block.id);
        const fb = answered ? feedbackFor(block, answers[block.id], itemId) : null;
        const right = showCorrect ? correctAnswer(block, itemId) : undefined;
        const explanation = typeof block.explanation === 'string' ? block.explanation.trim() : '';
        return {
          blockId: block.id,
          screenId: s.id,
          correct: fb?.correct ?? false,
          ...(answered ? { answer: answers[block.id] } : {}),
          ...(right !== undefined ? { correctAnswer: right } : {}),
          ...(explanation ? { explanation: block.explanation as string } : {}),
          ...(fb?.outcome?.trim() ? { outcome: fb.outcome } : {}),
        };
      }),
    );

  const local: LocalRun = {
    resume,
    noLms: sco === null || opened === null,
    grade(blockId, answer) {
      const block = blocks.get(blockId);
      if (!isGraded(block)) return null;
      return { blockId, ...feedbackFor(block, answer, itemId) };
    },
    finish(answers, attempt) {
      const score = scoreAnswers(stored.screens, answers, itemId);
      const percent = score.percent === null ? null : round2(score.percent);
      const passing = stored.passingScore ?? null;
      // As the Player API judges (libs/learner-runs): nothing graded passes; else the rounded percent decides.
      const passed = passing === null ? null : percent === null ? true : percent >= passing;
      return { score: percent, passed, attempt, review: reviewOf(answers) };
    },
    onChange(state, why) {
      sco?.report(snapshot(state), why !== 'answer');
    },
    outgoing: (event, run) => serverEvent(event, view, run.course),
  };

  const session = new Session(view, null, local);
  window.addEventListener('pagehide', () => sco?.close(snapshot(session.state)));
  start(view, session);

  if (config.track && opened && opened.learner.id) {
    const track = config.track;
    const client = new PlayerClient(track.apiBase, (url, init) => fetch(url, init));
    const open = () =>
      client.openRun({
        courseId: stored.id,
        lang: config.lang,
        tracking: {
          token: track.token,
          learnerId: opened.learner.id,
          ...(opened.learner.name ? { learnerName: opened.learner.name } : {}),
        },
      });
    open().then(
      // The LMS names its learner; the certificate shows only where the service is reachable (the run opened).
      (run) => session.attach({ ...run, client, reopen: open, identified: true }),
      (err: unknown) => warn(`tracking run not opened (${err instanceof Error ? err.message : String(err)})`),
    );
  }
}
