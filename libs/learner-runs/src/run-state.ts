import { AppError, invalid, type Issue } from '@lectern/errors';
import { correctAnswer, feedbackFor, gradeAnswer, readableAnswer } from '@lectern/courses';
import type { EventBatch, EventBatchResultDto, EventPayload } from '@lectern/contracts';
import { round2, screenPercent, type CourseIndex, type RunMaterial } from './served.js';
import type { IdentityRef } from './completions.js';

/**
 * The rules of a run's state: what a batch of learner events does to it (screens, answers, time, the finish and
 * its score). Pure: no database, no clock, no ids; `ingest.ts` reads the run, calls `applyEvents` and writes what
 * it answers.
 */

/** An answer larger than this is refused (400): a learner's answer is an id, a few ids or a paragraph. */
export const MAX_ANSWER_BYTES = 16 * 1024;

/** A run as a batch finds it. */
export interface RunSnapshot {
  id: string;
  courseId: string;
  source: 'embed' | 'scorm';
  status: 'in_progress' | 'completed';
  /** The last finished pass, null before the first finish. */
  attempt: number | null;
  /** The pass under way; it is open while `attempt < pass`. */
  pass: number;
  passStartedAt: Date | string;
  passTimeSeconds: number;
  timeSpentSeconds: number;
  contentHash: string;
  lastScreenId: string | null;
  progressPercent: number;
  answers: Record<string, unknown>;
  /** The run's previous call (or its open): reported time is capped by the wall time since. */
  lastEventAt: Date | string;
  course: {
    title: string;
    passingScore: number | null;
    quizFeedback: 'deferred' | 'immediate';
    /** Absent: `free`. */
    completion?: 'free' | 'sequential';
    /** The review after the finish carries the correct answers (absent: false). */
    reviewShowCorrectAnswers?: boolean;
  };
  identity: IdentityRef | null;
}

type BatchEventType = 'course.progress' | 'course.answered' | 'course.completed';
/** An event a batch causes, in the order it happened; the caller stamps and records it. */
export type BatchEvent = { [T in BatchEventType]: { type: T; data: EventPayload<T> } }[BatchEventType];

/** The finish of a pass: the attempt to record. */
export interface RunFinish {
  attempt: number;
  score: number | null;
  passed: boolean | null;
  passingScore: number | null;
  startedAt: string;
}

/** What a batch makes of a run. */
export interface BatchOutcome {
  status: 'in_progress' | 'completed';
  attempt: number | null;
  progress: number;
  lastScreenId: string | null;
  answers: Record<string, unknown>;
  timeSpentSeconds: number;
  passTimeSeconds: number;
  events: BatchEvent[];
  finish: RunFinish | null;
  /** The answer to the batch (and to every later delivery of the same batch id). */
  response: EventBatchResultDto;
}

/** Refuses (400) a batch naming a screen or block the course does not have, or an answer missing or too big. */
export function checkEvents(batch: EventBatch, idx: CourseIndex): void {
  const issues: Issue[] = [];
  batch.events.forEach((e, i) => {
    if (e.type === 'screen' && !idx.screenIndex.has(e.screenId))
      issues.push({
        code: 'unknown_screen',
        path: ['events', i, 'screenId'],
        message: 'no screen with this id in the course',
      });
    if (e.type === 'answer') {
      if (!idx.blocks.has(e.blockId))
        issues.push({
          code: 'unknown_block',
          path: ['events', i, 'blockId'],
          message: 'no block with this id in the course',
        });
      if (e.answer === undefined)
        issues.push({ code: 'required', path: ['events', i, 'answer'], message: 'the answer is missing' });
      else {
        const bytes = Buffer.byteLength(JSON.stringify(e.answer));
        if (bytes > MAX_ANSWER_BYTES)
          issues.push({
            code: 'too_big',
            path: ['events', i, 'answer'],
            message: `the answer is ${bytes} bytes of JSON; an answer may be at most ${ANSWER_LIMIT_WORDS}`,
          });
      }
    }
  });
  if (issues.length) throw invalid(batchProblem(issues), issues);
}

const ANSWER_LIMIT_WORDS = `${MAX_ANSWER_BYTES / 1024} KiB (${MAX_ANSWER_BYTES} bytes) of JSON`;

/** The refusal's headline says what is actually wrong: unknown ids, a missing answer, an answer too large. */
function batchProblem(issues: Issue[]): string {
  const has = (code: string) => issues.some((i) => i.code === code);
  const parts: string[] = [];
  if (has('unknown_screen') || has('unknown_block'))
    parts.push('names screens or blocks the course does not have');
  if (has('required')) parts.push('has an answer event without an answer');
  if (has('too_big')) parts.push(`has an answer that is too large: at most ${ANSWER_LIMIT_WORDS} per answer`);
  return `The batch ${parts.join('; ')}`;
}

/** Reported time never exceeds the wall time since the run's previous call (or its open), in whole seconds. */
export function creditedSeconds(claimed: number, lastEventAt: Date | string, now: Date): number {
  const wall = Math.max(0, Math.ceil((now.getTime() - new Date(lastEventAt).getTime()) / 1000));
  return Math.min(claimed, wall);
}

export interface Verdicts {
  answers: { blockId: string; correct: boolean }[];
  correct: number;
  /** Percentage of graded blocks answered correctly, 2 decimals; null when the course grades nothing. */
  percent: number | null;
  /** Null without a passing score; a course that grades nothing is passed. */
  passed: boolean | null;
}

/**
 * A verdict of course.completed with, for an answered match or ranking block, its answer read back to the course's
 * item ids and texts in the source language (events name things as the customer's systems know them).
 */
function withItems(
  verdict: { blockId: string; correct: boolean },
  source: CourseIndex,
  answers: Record<string, unknown>,
  secret: string,
) {
  const raw = source.blocks.get(verdict.blockId)?.block.raw;
  if (!raw || !Object.hasOwn(answers, verdict.blockId)) return verdict;
  const answerItems = readableAnswer(raw, answers[verdict.blockId], { secret });
  return answerItems ? { ...verdict, answerItems } : verdict;
}

/** Judges every graded block of the served course (an unanswered one is wrong) against the passing score. */
export function judgePass(
  served: CourseIndex,
  answers: Record<string, unknown>,
  passingScore: number | null,
  secret: string,
): Verdicts {
  const verdicts = served.graded.map((blockId) => ({
    blockId,
    correct:
      Object.hasOwn(answers, blockId) &&
      gradeAnswer(served.blocks.get(blockId)!.block.raw, answers[blockId], { secret }),
  }));
  const correct = verdicts.filter((v) => v.correct).length;
  const percent = verdicts.length ? round2((correct / verdicts.length) * 100) : null;
  const passed = passingScore === null ? null : percent === null ? true : percent >= passingScore;
  return { answers: verdicts, correct, percent, passed };
}

/** The furthest screen reached in the pass (its progress is that screen's percentage); -1 before the first. */
export function furthestScreen(progress: number, total: number): number {
  let furthest = -1;
  while (furthest + 1 < total && screenPercent(furthest + 1, total) <= progress) furthest++;
  return furthest;
}

/**
 * The rule of a `sequential` course (docs/player-api.md "Completion rules"): the learner moves past the furthest
 * screen reached one screen at a time, and only once every graded block of the screens before is answered (in
 * the run or earlier in the same batch). A batch that breaks it is refused whole (409): nothing of it counts, so
 * a jump to the last screen never finishes the run.
 */
function checkInOrder(
  source: CourseIndex,
  answers: Record<string, unknown>,
  index: number,
  furthest: number,
): void {
  if (index > furthest + 1) {
    const next = source.screens[furthest + 1];
    throw new AppError(
      'conflict',
      `This course is taken in order: screen "${source.screens[index].id}" comes after screen "${next.id}", which the learner has not reached yet`,
      { details: { reason: 'out_of_order', screenId: source.screens[index].id, nextScreenId: next.id } },
    );
  }
  const missing = source.graded.filter(
    (id) => source.screenIndex.get(source.blocks.get(id)!.screen.id)! < index && !Object.hasOwn(answers, id),
  );
  if (missing.length)
    throw new AppError(
      'conflict',
      `This course is taken in order: answer the graded blocks of the earlier screens first (${missing.join(', ')})`,
      { details: { reason: 'unanswered', screenId: source.screens[index].id, blockIds: missing } },
    );
}

type ReviewItem = NonNullable<NonNullable<EventBatchResultDto['result']>['review']>[number];

/**
 * The review of a finished pass (docs/player-api.md "Review"): each graded block in course order, right or wrong,
 * the learner's answer, the explanation and a scenario's outcome; the correct answer only when the author shows
 * them. Built only at the finish, so nothing of the answer keys leaves the server while the pass is open.
 */
function reviewOf(
  served: CourseIndex,
  answers: Record<string, unknown>,
  v: Verdicts,
  showCorrect: boolean,
  secret: string,
): ReviewItem[] {
  return v.answers.map(({ blockId, correct }) => {
    const at = served.blocks.get(blockId)!;
    const answered = Object.hasOwn(answers, blockId);
    const fb = answered ? feedbackFor(at.block.raw, answers[blockId], { secret }) : null;
    const explanation = typeof at.block.raw.explanation === 'string' ? at.block.raw.explanation.trim() : '';
    const right = showCorrect ? correctAnswer(at.block.raw, { secret }) : undefined;
    return {
      blockId,
      screenId: at.screen.id,
      correct,
      ...(answered ? { answer: answers[blockId] } : {}),
      ...(right !== undefined ? { correctAnswer: right } : {}),
      ...(explanation ? { explanation: at.block.raw.explanation as string } : {}),
      ...(fb?.outcome?.trim() ? { outcome: fb.outcome } : {}),
    };
  });
}

/**
 * The review of a run's finished pass when it is opened again (docs/player-api.md "Review"): the same items its
 * finishing batch answered, judged again from the stored answers against the same material.
 */
export function reviewOfFinishedPass(
  served: CourseIndex,
  answers: Record<string, unknown>,
  course: { passingScore: number | null; reviewShowCorrectAnswers?: boolean },
  secret: string,
): ReviewItem[] {
  const v = judgePass(served, answers, course.passingScore, secret);
  return reviewOf(served, answers, v, course.reviewShowCorrectAnswers === true, secret);
}

/**
 * Applies a batch (already checked with `checkEvents` against `material.source`) to a run. A screen moves the
 * position (an event each time it changes) and, during an open pass, the progress; arriving at the last screen
 * during an open pass finishes it, judged after the whole batch (answers sent beside the last screen count).
 * Answers are stored and graded only during an open pass (a learner reviewing after the finish changes nothing).
 * Events name the course by its source title; grading reads the material of the locale served.
 */
export function applyEvents(
  run: RunSnapshot,
  batch: EventBatch,
  material: RunMaterial,
  opts: { secret: string; now: Date },
): BatchOutcome {
  const { source, served } = material;
  const { course, identity } = run;
  const courseRef = { id: run.courseId, title: course.title };
  const events: BatchEvent[] = [];
  const passOpen = (run.attempt ?? 0) < run.pass;
  const answers = { ...run.answers };
  let lastScreenId = run.lastScreenId;
  let progress = run.progressPercent;
  let reachedEnd = false;
  let claimed = 0;
  const feedback: NonNullable<EventBatchResultDto['feedback']> = [];
  const outcomes: NonNullable<EventBatchResultDto['outcomes']> = [];
  const total = source.screens.length;
  const sequential = passOpen && course.completion === 'sequential';
  let furthest = sequential ? furthestScreen(progress, total) : -1;

  for (const e of batch.events) {
    if (e.type === 'time') {
      claimed += e.seconds;
    } else if (e.type === 'screen') {
      if (e.screenId === lastScreenId) continue;
      const index = source.screenIndex.get(e.screenId)!;
      if (sequential && index > furthest) {
        checkInOrder(source, answers, index, furthest);
        furthest = index;
      }
      const percent = screenPercent(index, total);
      lastScreenId = e.screenId;
      events.push({
        type: 'course.progress',
        data: {
          course: { ...courseRef, totalScreens: total },
          screen: { id: e.screenId, title: source.screens[index].title, index },
          percent,
          identity,
        },
      });
      if (passOpen) {
        progress = Math.max(progress, percent);
        if (index === total - 1) reachedEnd = true;
      }
    } else if (passOpen) {
      answers[e.blockId] = e.answer;
      const at = served.blocks.get(e.blockId)!;
      if (!served.graded.includes(e.blockId)) {
        // An ungraded scenario is a branching moment: the learner reads what their choice led to, in any mode.
        const outcome =
          at.block.raw.type === 'scenario'
            ? feedbackFor(at.block.raw, e.answer, { secret: opts.secret }).outcome
            : undefined;
        if (outcome?.trim()) outcomes.push({ blockId: e.blockId, outcome });
        continue;
      }
      const correct = gradeAnswer(at.block.raw, e.answer, { secret: opts.secret });
      const src = source.blocks.get(e.blockId)!;
      events.push({
        type: 'course.answered',
        data: {
          course: courseRef,
          screen: { id: src.screen.id, title: src.screen.title },
          block: { id: e.blockId, type: src.block.type },
          correct,
          identity,
        },
      });
      if (course.quizFeedback === 'immediate') {
        // The explanation and, for a scenario, the chosen choice's outcome (served locale).
        const { explanation, outcome } = feedbackFor(at.block.raw, e.answer, { secret: opts.secret });
        feedback.push({
          blockId: e.blockId,
          correct,
          ...(explanation?.trim() ? { explanation } : {}),
          ...(outcome?.trim() ? { outcome } : {}),
        });
      }
    }
  }

  const credit = creditedSeconds(claimed, run.lastEventAt, opts.now);
  const passTimeSeconds = run.passTimeSeconds + credit;
  let status = run.status;
  let attempt = run.attempt;
  let finish: RunFinish | null = null;
  let review: ReviewItem[] = [];
  if (reachedEnd) {
    const v = judgePass(served, answers, course.passingScore, opts.secret);
    const startedAt = new Date(run.passStartedAt).toISOString();
    progress = 100;
    status = 'completed';
    attempt = run.pass;
    events.push({
      type: 'course.completed',
      data: {
        course: { ...courseRef, contentHash: run.contentHash },
        identity,
        completionId: run.id,
        attempt: run.pass,
        source: run.source,
        score: { correct: v.correct, total: v.answers.length, percent: v.percent },
        passed: v.passed,
        passingScore: course.passingScore,
        answers: v.answers.map((a) => withItems(a, source, answers, opts.secret)),
        startedAt,
        completedAt: opts.now.toISOString(),
        timeSpentSeconds: passTimeSeconds,
      },
    });
    review = reviewOf(served, answers, v, course.reviewShowCorrectAnswers === true, opts.secret);
    finish = {
      attempt: run.pass,
      score: v.percent,
      passed: v.passed,
      passingScore: course.passingScore,
      startedAt,
    };
  }

  const response: EventBatchResultDto = {
    completion: { status, attempt, progressPercent: progress, lastScreenId },
    ...(course.quizFeedback === 'immediate' ? { feedback } : {}),
    ...(outcomes.length > 0 ? { outcomes } : {}),
    ...(finish
      ? { result: { score: finish.score, passed: finish.passed, attempt: finish.attempt, review } }
      : {}),
  };
  return {
    status,
    attempt,
    progress,
    lastScreenId,
    answers,
    timeSpentSeconds: run.timeSpentSeconds + credit,
    passTimeSeconds,
    events,
    finish,
    response,
  };
}
