/**
 * One learner's session in the page: where they are, what they answered, what the server said. In `run`
 * mode every move and answer goes through the event outbox to the Player API; in `preview` mode the same
 * state lives only in memory and nothing is sent. In `scorm` mode answers are graded here (`LocalRun`), the
 * LMS is told of every change, and a tracking run (track=1) may be attached to the session later.
 */
import { PlayerApiError, PlayerClient, type OpenedRun } from '../core/client.js';
import { EventQueue, type Batch, type KeyValueStore } from '../core/queue.js';
import type {
  IssuedCertificateRef,
  EventsResponse,
  Feedback,
  HostMessage,
  PlayerCourse,
  PlayerEvent,
  PollResults,
  RunResult,
} from '../core/types.js';
import { HOST_MESSAGE_SOURCE } from '../core/types.js';
import { isGradedType } from '@lectern/grading';
import { Drafts, draftsKey } from '../core/drafts.js';

export interface SessionState {
  course: PlayerCourse;
  index: number;
  answers: Record<string, unknown>;
  /** Blocks whose answer has been handed in (restored answers count). */
  submitted: Record<string, boolean>;
  feedback: Record<string, Feedback>;
  result: RunResult | null;
  /** The run reached the last screen (the server finishes it there). */
  finished: boolean;
  /** This page sent the finishing move and waits for the server's result. */
  awaitingResult: boolean;
  offline: boolean;
  preview: boolean;
  /** Bumped on every screen change made by the learner, so the view knows when to move focus. */
  moves: number;
  /** A SCORM package found no LMS: the course plays, nothing is recorded. */
  noLms: boolean;
  /** The furthest screen reached in the pass (a sequential course opens the next one at most). */
  furthest: number;
  /** Screens the learner has seen (ids). */
  visited: Record<string, true>;
  /** A sequential course held the learner on this screen: its graded blocks are not all answered. */
  blocked: boolean;
  /** Immediate mode: the screen the learner asked for while an answer was chosen but not checked. */
  confirm: number | null;
  /** Ungraded scenarios: the outcome text of the chosen choice, from the server. */
  outcomes: Record<string, string>;
  /** Polls that show results, once voted: the votes so far. */
  polls: Record<string, PollResults>;
}

/** A question on the screen with a chosen answer not handed in; `submit` hands it in. */
export interface PendingAnswer {
  graded: boolean;
  submit(): void;
}

/** Why the state changed, for a `LocalRun` listener: a new screen, an answer, a finished pass. */
export type LocalChange = 'screen' | 'answer' | 'finish';

/** Grading in the page (a SCORM package carries its answer keys): the session asks this instead of a server. */
export interface LocalRun {
  resume: { index: number; answers: Record<string, unknown> } | null;
  noLms: boolean;
  /** Feedback on a graded block's answer; null when the block is not graded. */
  grade(blockId: string, answer: unknown): Feedback | null;
  /** The result of the pass once the learner reaches the last screen. */
  finish(answers: Record<string, unknown>, attempt: number): RunResult;
  onChange(state: SessionState, why: LocalChange): void;
  /** An event as the attached tracking run's server expects it (its learner item ids). */
  outgoing(event: PlayerEvent, run: OpenedRun): PlayerEvent;
}

type AttachedRun = OpenedRun & {
  client: PlayerClient;
  reopen: () => Promise<OpenedRun>;
  /** A named learner (a signed identity, an LMS learner): only they can earn a certificate. */
  identified?: boolean;
};

/** What the certificate download needs of the session (browser/certificate.tsx). */
export interface CertificateRun {
  client: PlayerClient;
  completionId: string;
  /** The run token now (a renewed one after `renew`). */
  token(): string;
  /** Re-opens the run for a fresh token (the first one expired). */
  renew(): Promise<void>;
  /** Sends what is still queued (the finishing move above all), so the server judges the run as the page does. */
  settle(): Promise<void>;
  /** The run's certificate when it is known to be issued (at the open, or by a download of this page). */
  issued(): IssuedCertificateRef | null;
  remember(certificate: IssuedCertificateRef): void;
}

const FLUSH_EVERY_MS = 4000;
/** Learner time is counted while the page is visible, and an idle tab counts at most this much per flush. */
const MAX_SECONDS_PER_FLUSH = 120;

function storage(): KeyValueStore | null {
  try {
    return window.localStorage;
  } catch {
    return null;
  }
}

function randomId(): string {
  if (typeof crypto !== 'undefined' && typeof crypto.randomUUID === 'function') return crypto.randomUUID();
  return Array.from({ length: 4 }, () => Math.random().toString(36).slice(2, 10)).join('');
}

/** The furthest screen a pass reached, from its progress (the server's `screenPercent` of that screen). */
export function furthestScreen(progress: number, total: number): number {
  let furthest = -1;
  while (furthest + 1 < total && Math.round(((furthest + 2) / total) * 10_000) / 100 <= progress) furthest++;
  return furthest;
}

export function postToHost(message: HostMessage): void {
  if (window.parent === window) return;
  // The messages carry no secret (progress, score), and the player cannot know the host's origin in advance.
  window.parent.postMessage({ source: HOST_MESSAGE_SOURCE, ...message }, '*');
}

export class Session {
  state: SessionState;
  private listeners = new Set<() => void>();
  private queue: EventQueue | null = null;
  private timer: number | undefined;
  private visibleSince: number | null = null;
  private carriedMs = 0;
  private run: AttachedRun | null;
  private attempt = 1;
  private readonly pending = new Map<string, PendingAnswer>();
  private readonly drafts: Drafts;
  /** Polls voted whose results are still to be asked for (fetchPolls). */
  private readonly pollsWanted = new Set<string>();
  /** The run was finished when the page opened and not retaken since: the learner reviews, in any order. */
  private reviewing: boolean;

  constructor(
    course: PlayerCourse,
    run: AttachedRun | null,
    private readonly local: LocalRun | null = null,
  ) {
    this.run = run;
    const answers = (local ? (local.resume?.answers ?? {}) : (run?.completion.answers ?? {})) as Record<
      string,
      unknown
    >;
    const last = run?.completion.lastScreenId ?? null;
    const found = local
      ? (local.resume?.index ?? -1)
      : last === null
        ? -1
        : course.screens.findIndex((s) => s.id === last);
    const index = Math.max(0, found);
    const known = new Set(course.screens.flatMap((s) => s.blocks.map((b) => b.id)));
    this.drafts = new Drafts(storage(), run && !local ? draftsKey(run.completion.id) : null, known);
    this.reviewing = run?.completion.status === 'completed';
    const furthest = Math.max(
      index,
      furthestScreen(run?.completion.progressPercent ?? 0, course.screens.length),
    );
    const atEnd = index === course.screens.length - 1;
    // A one-screen course is finished as soon as it shows; elsewhere the learner has to arrive at the end.
    const endedHere = atEnd && (found !== -1 || course.screens.length === 1);
    this.state = {
      course,
      index,
      answers: { ...answers },
      submitted: Object.fromEntries(Object.keys(answers).map((k) => [k, true])),
      // Immediate mode: a resumed run shows the verdicts already given, not reopened questions.
      feedback:
        course.quizFeedback === 'immediate' && !local
          ? Object.fromEntries(
              (run?.completion.feedback ?? [])
                .filter((f) => Object.hasOwn(answers, f.blockId))
                .map((f) => [f.blockId, f]),
            )
          : {},
      result: local
        ? endedHere
          ? local.finish(answers, this.attempt)
          : null
        : run?.completion.status === 'completed' && atEnd
          ? (run.completion.result ?? null)
          : null,
      finished: local ? endedHere : run?.completion.status === 'completed' && atEnd,
      awaitingResult: false,
      offline: false,
      preview: run === null && local === null,
      moves: 0,
      noLms: local?.noLms ?? false,
      furthest,
      // On a resumed run the screens up to the furthest reached count as seen.
      visited: Object.fromEntries(course.screens.slice(0, furthest + 1).map((s) => [s.id, true as const])),
      blocked: false,
      confirm: null,
      outcomes: {},
      polls: {},
    };
    // A resumed run's votes: their results show again.
    for (const id of Object.keys(answers)) if (this.showsResults(id)) this.pollsWanted.add(id);
    if (run !== null) this.startRun(run, found === -1);
    local?.onChange(this.state, this.state.result ? 'finish' : 'screen');
  }

  /** Attaches a tracking run opened after the page started (track=1 in a SCORM package). */
  attach(run: AttachedRun): void {
    if (this.run !== null) return;
    this.run = run;
    this.startRun(run, run.completion.lastScreenId === null);
    // Redraw: what depends on a tracked run (the certificate download) may show now.
    this.set({});
    const here = this.state.course.screens[this.state.index];
    if (here && run.completion.lastScreenId !== here.id && this.state.index > 0)
      this.send({ type: 'screen', screenId: here.id }, true);
  }

  subscribe(fn: () => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  private set(patch: Partial<SessionState>): void {
    this.state = { ...this.state, ...patch };
    for (const fn of this.listeners) fn();
  }

  get total(): number {
    return this.state.course.screens.length;
  }

  percent(index = this.state.index): number {
    return this.total === 0 ? 0 : Math.round(((index + 1) / this.total) * 1000) / 10;
  }

  // ------------------------------------------------------------------ navigation

  go(index: number, force = false, leaveUnchecked = false): void {
    if (index < 0 || index >= this.total || (index === this.state.index && !force)) return;
    if (index > this.state.index && !force) {
      if (!this.handInPending(index, leaveUnchecked)) return;
      if (!this.canReach(index)) {
        this.set({ blocked: true, confirm: null });
        return;
      }
    }
    const screen = this.state.course.screens[index];
    const last = index === this.total - 1;
    const localResult =
      last && this.local !== null ? this.local.finish(this.state.answers, this.attempt) : null;
    this.set({
      index,
      moves: this.state.moves + 1,
      finished: this.state.finished || last,
      furthest: Math.max(this.state.furthest, index),
      visited: this.state.visited[screen.id]
        ? this.state.visited
        : { ...this.state.visited, [screen.id]: true },
      blocked: false,
      confirm: null,
      awaitingResult: last && this.local === null && this.run !== null && this.state.result === null,
      ...(localResult ? { result: localResult } : {}),
    });
    this.send({ type: 'screen', screenId: screen.id }, true);
    this.local?.onChange(this.state, localResult ? 'finish' : 'screen');
    postToHost({
      type: 'progress',
      courseId: this.state.course.id,
      screenId: screen.id,
      index,
      percent: this.percent(index),
    });
    if (localResult) this.announceCompleted(localResult);
    else if (last && this.run === null) this.announceCompleted(null);
  }

  /** A sequential course opens a screen once every graded block before it is answered, one new screen at a time. */
  canReach(index: number): boolean {
    const { course, furthest, finished } = this.state;
    if (course.completion !== 'sequential' || finished || this.reviewing || this.state.preview) return true;
    if (index <= furthest) return true;
    return index === furthest + 1 && this.unanswered(index).length === 0;
  }

  /** Graded blocks of the screens before `index` with no answer. */
  unanswered(index: number): string[] {
    return this.state.course.screens
      .slice(0, index)
      .flatMap((s) => s.blocks)
      .filter((b) => isGradedType(b.type) && !Object.hasOwn(this.state.answers, b.id))
      .map((b) => b.id);
  }

  /** A screen whose graded blocks all have an answer (one without graded blocks once seen). */
  complete(screenIndex: number): boolean {
    const s = this.state.course.screens[screenIndex];
    if (!s || !this.state.visited[s.id]) return false;
    return s.blocks.every((b) => !isGradedType(b.type) || Object.hasOwn(this.state.answers, b.id));
  }

  /**
   * Moving on with a chosen answer not handed in: deferred mode hands it in; immediate mode asks first (false:
   * the learner is asked, the move waits), unless the learner chose to leave it. Ungraded answers (a poll's vote,
   * a reflection) are handed in either way.
   */
  private handInPending(target: number, leaveUnchecked: boolean): boolean {
    const waiting = [...this.pending.entries()].filter(([id]) => !this.state.submitted[id]);
    const ask = this.state.course.quizFeedback === 'immediate' && !this.state.preview && this.local === null;
    if (ask && !leaveUnchecked && waiting.some(([, p]) => p.graded)) {
      this.set({ confirm: target, blocked: false });
      return false;
    }
    for (const [, p] of waiting) if (!(ask && p.graded)) p.submit();
    return true;
  }

  /** Immediate mode, asked on leaving: check the chosen answers now and stay to see the verdicts. */
  checkPending(): void {
    for (const [id, p] of [...this.pending.entries()]) if (!this.state.submitted[id]) p.submit();
    this.set({ confirm: null });
  }

  /** Immediate mode, asked on leaving: go on without checking (a sequential course still needs the answers). */
  leavePending(): void {
    const target = this.state.confirm;
    this.set({ confirm: null });
    if (target !== null) this.go(target, false, true);
  }

  dismissConfirm(): void {
    if (this.state.confirm !== null) this.set({ confirm: null });
  }

  /** A question block tells the session what it would hand in (null: nothing chosen, or nothing to hand in). */
  setPending(blockId: string, pending: PendingAnswer | null): void {
    if (pending) this.pending.set(blockId, pending);
    else this.pending.delete(blockId);
  }

  draft(blockId: string): unknown {
    return this.drafts.get(blockId);
  }

  saveDraft(blockId: string, value: unknown): void {
    this.drafts.set(blockId, value);
  }

  goToScreen(screenId: string): void {
    const i = this.state.course.screens.findIndex((s) => s.id === screenId);
    if (i !== -1) this.go(i);
  }

  // ------------------------------------------------------------------ answers

  /** A graded or ungraded answer the learner handed in; sent at once, since they may be waiting for feedback. */
  submit(blockId: string, answer: unknown): void {
    const feedback = { ...this.state.feedback };
    delete feedback[blockId];
    const verdict = this.local?.grade(blockId, answer) ?? null;
    if (verdict && this.state.course.quizFeedback === 'immediate') feedback[blockId] = verdict;
    this.drafts.delete(blockId);
    this.set({
      answers: { ...this.state.answers, [blockId]: answer },
      submitted: { ...this.state.submitted, [blockId]: true },
      feedback,
      blocked: false,
    });
    this.send({ type: 'answer', blockId, answer }, true);
    this.local?.onChange(this.state, 'answer');
  }

  /** A running answer (checklist ticks): recorded with the next flush. */
  record(blockId: string, answer: unknown): void {
    this.set({ answers: { ...this.state.answers, [blockId]: answer } });
    this.send({ type: 'answer', blockId, answer }, false);
    this.local?.onChange(this.state, 'answer');
  }

  /** "Try again": the block is open for a new answer, which will replace the stored one. */
  reopen(blockId: string): void {
    const feedback = { ...this.state.feedback };
    delete feedback[blockId];
    this.set({ submitted: { ...this.state.submitted, [blockId]: false }, feedback });
  }

  async retake(): Promise<void> {
    if (this.run !== null) {
      await this.queue?.flush(true);
      try {
        await this.run.client.retake(this.run.completion.id, this.run.runToken);
      } catch (err) {
        console.warn('lectern player: retake failed', err);
        // Nothing was reset on the server, so nothing is reset here; the learner can press Retake again.
        // A SCORM package's record is the LMS's: a tracking run that refuses does not hold the learner back.
        if (this.local === null) {
          this.set({ offline: true });
          return;
        }
      }
    }
    this.attempt += 1;
    this.reviewing = false;
    this.drafts.clear();
    this.pollsWanted.clear();
    this.set({
      answers: {},
      submitted: {},
      feedback: {},
      outcomes: {},
      polls: {},
      result: null,
      finished: false,
      offline: false,
      furthest: 0,
      visited: {},
      blocked: false,
      confirm: null,
    });
    this.go(0, true);
  }

  // ------------------------------------------------------------------ run mode

  private startRun(run: NonNullable<Session['run']>, firstVisit: boolean): void {
    const completionId = run.completion.id;
    this.queue = new EventQueue({
      storage: storage(),
      storageKey: `lectern:outbox:${completionId}`,
      newBatchId: randomId,
      send: (batch, opts) => run.client.sendEvents(completionId, run.runToken, batch, opts.keepalive),
      takeSeconds: () => this.takeSeconds(),
      onResponse: (response, batch) => this.apply(response, batch),
      onRejected: (batch, status) =>
        console.warn(`lectern player: batch ${batch.batchId} refused (${status})`),
      onUnauthorized: async () => {
        const fresh = await run.reopen();
        run.runToken = fresh.runToken;
        return true;
      },
      // A SCORM package's record is the LMS's: a tracking service that cannot be reached is not the learner's concern.
      onBacklog: (waiting) => (this.local === null ? this.set({ offline: waiting }) : undefined),
    });
    if (firstVisit && this.total > 0) {
      this.queue.add({ type: 'screen', screenId: this.state.course.screens[0].id });
      if (this.total === 1 && this.local === null) this.set({ finished: true, awaitingResult: true });
    }
    this.visibleSince = document.visibilityState === 'visible' ? Date.now() : null;
    void this.queue.flush(true);
    this.timer = window.setInterval(() => void this.queue?.flush(), FLUSH_EVERY_MS);
    window.addEventListener('online', () => void this.queue?.flush(true));
    window.addEventListener('pagehide', () => this.queue?.flushOnExit());
    document.addEventListener('visibilitychange', () => {
      if (document.visibilityState === 'hidden') {
        this.pauseClock();
        this.queue?.flushOnExit();
      } else {
        this.visibleSince = Date.now();
      }
    });
  }

  private send(event: PlayerEvent, now: boolean): void {
    if (this.queue === null) return;
    this.queue.add(this.local && this.run ? this.local.outgoing(event, this.run) : event);
    if (now) void this.queue.flush(true);
  }

  private pauseClock(): void {
    if (this.visibleSince !== null) this.carriedMs += Date.now() - this.visibleSince;
    this.visibleSince = null;
  }

  private takeSeconds(): number {
    const running = this.visibleSince !== null ? Date.now() - this.visibleSince : 0;
    const total = this.carriedMs + running;
    const seconds = Math.min(MAX_SECONDS_PER_FLUSH, Math.floor(total / 1000));
    this.carriedMs = total - Math.floor(total / 1000) * 1000;
    if (this.visibleSince !== null) this.visibleSince = Date.now();
    return seconds;
  }

  private apply(response: EventsResponse, batch: Batch): void {
    // Graded here already: the tracking run's answers only record what the learner did.
    if (this.local !== null) return;
    // A vote's results are asked for once the batch carrying it is applied: asked for before, while the vote is
    // still queued or on its way, the server refuses them (403), an error in the learner's console.
    for (const e of batch.events)
      if (e.type === 'answer' && this.state.submitted[e.blockId] && this.showsResults(e.blockId))
        this.pollsWanted.add(e.blockId);
    const patch: Partial<SessionState> = {};
    if (Array.isArray(response.feedback) && response.feedback.length > 0) {
      const feedback = { ...this.state.feedback };
      for (const f of response.feedback) {
        if (this.state.submitted[f.blockId]) feedback[f.blockId] = f;
      }
      patch.feedback = feedback;
    }
    if (Array.isArray(response.outcomes) && response.outcomes.length > 0)
      patch.outcomes = {
        ...this.state.outcomes,
        ...Object.fromEntries(response.outcomes.map((o) => [o.blockId, o.outcome])),
      };
    if (response.result) {
      patch.result = response.result;
      patch.finished = true;
      patch.awaitingResult = false;
    }
    if (Object.keys(patch).length > 0) this.set(patch);
    if (response.result) this.announceCompleted(response.result);
    void this.fetchPolls();
  }

  /** A poll block whose author shows its results after the vote (docs/blocks.md `showResults`). */
  private showsResults(blockId: string): boolean {
    return this.state.course.screens.some((s) =>
      s.blocks.some((b) => b.id === blockId && b.type === 'poll' && b.showResults === true),
    );
  }

  /**
   * Asks for the results of the polls whose votes the server has applied since the last answer (or that a resumed
   * run had cast). Should one still be refused (403), it stays wanted and is asked for again after the next batch.
   */
  private async fetchPolls(): Promise<void> {
    const run = this.run;
    if (!run || this.local !== null) return;
    for (const blockId of [...this.pollsWanted]) {
      this.pollsWanted.delete(blockId);
      try {
        const results = await run.client.pollResults(run.completion.id, run.runToken, blockId);
        this.set({ polls: { ...this.state.polls, [blockId]: results } });
      } catch (err) {
        if (err instanceof PlayerApiError && err.status === 403 && this.state.submitted[blockId])
          this.pollsWanted.add(blockId);
      }
    }
  }

  private announceCompleted(result: RunResult | null): void {
    postToHost({
      type: 'completed',
      courseId: this.state.course.id,
      score: result?.score ?? null,
      passed: result?.passed ?? null,
      attempt: result?.attempt ?? null,
    });
  }

  /** The run's certificate download; null without a tracked run of a named learner (preview, anonymous, no LMS). */
  certificateRun(): CertificateRun | null {
    const run = this.run;
    if (run === null || run.identified !== true) return null;
    return {
      client: run.client,
      completionId: run.completion.id,
      token: () => run.runToken,
      renew: async () => {
        run.runToken = (await run.reopen()).runToken;
      },
      settle: async () => {
        await this.queue?.flush(true);
      },
      issued: () => run.completion.certificate ?? null,
      remember: (certificate) => {
        run.completion.certificate = certificate;
      },
    };
  }

  dispose(): void {
    window.clearInterval(this.timer);
  }
}
