/**
 * The SCO side of the SCORM run-time: finds the LMS's API object, opens the session once, reports where the
 * learner is, what they answered and how they did, and closes the session exactly once. Pure (the window
 * and the API are passed in), so it is unit-tested with a fake API; test/e2e/scorm-runtime.test.ts runs it
 * against a real runtime. What is written where: docs/scorm.md.
 */

export type ScormVersion = '1.2' | '2004';

/** The SCORM 1.2 API object (RTE 3.3). Every call answers a string ("true"/"false" or the value). */
export interface Scorm12Api {
  LMSInitialize(arg: ''): string;
  LMSFinish(arg: ''): string;
  LMSGetValue(element: string): string;
  LMSSetValue(element: string, value: string): string;
  LMSCommit(arg: ''): string;
  LMSGetLastError(): string | number;
}

/** The SCORM 2004 API object (RTE 3.1). */
export interface Scorm2004Api {
  Initialize(arg: ''): string;
  Terminate(arg: ''): string;
  GetValue(element: string): string;
  SetValue(element: string, value: string): string;
  Commit(arg: ''): string;
  GetLastError(): string | number;
}

/** What the API search needs of a window: its parent and opener (and, via indexing, the API property). */
export interface FrameLike {
  parent?: FrameLike | null;
  opener?: FrameLike | null;
}

const API_NAME = { '1.2': 'API', '2004': 'API_1484_11' } as const;
/** The standard's search: at most this many parents up from a window before giving up on that chain. */
const MAX_PARENTS = 7;

function lookIn(win: FrameLike, name: string): unknown {
  try {
    return (win as Record<string, unknown>)[name] ?? null;
  } catch {
    // A cross-origin frame throws on any property read: not our LMS.
    return null;
  }
}

function climb(start: FrameLike | null | undefined, name: string): unknown {
  let win = start ?? null;
  for (let hops = 0; win !== null && hops <= MAX_PARENTS; hops++) {
    const api = lookIn(win, name);
    if (api) return api;
    let parent: FrameLike | null = null;
    try {
      parent = win.parent ?? null;
    } catch {
      parent = null;
    }
    if (parent === null || parent === win) break;
    win = parent;
  }
  return null;
}

/**
 * The LMS's API object as the standards say to find it: this window and up to seven parents, then the
 * opener and its parents. Null when there is none (the course then plays without an LMS).
 */
export function findLmsApi(win: FrameLike, version: ScormVersion): Scorm12Api | Scorm2004Api | null {
  const name = API_NAME[version];
  let api = climb(win, name);
  if (!api) {
    let opener: FrameLike | null = null;
    try {
      opener = win.opener ?? null;
    } catch {
      opener = null;
    }
    api = climb(opener, name);
  }
  return (api as Scorm12Api | Scorm2004Api | null) ?? null;
}

/** SCORM 1.2 CMITimespan: `HHHH:MM:SS.SS`. */
export function timespan12(seconds: number): string {
  const cs = Math.max(0, Math.round(seconds * 100));
  const h = Math.floor(cs / 360000);
  const m = Math.floor((cs % 360000) / 6000);
  const s = (cs % 6000) / 100;
  const pad = (n: number, w: number) => String(n).padStart(w, '0');
  return `${pad(Math.min(h, 9999), 4)}:${pad(m, 2)}:${s.toFixed(2).padStart(5, '0')}`;
}

/** SCORM 2004 timeinterval: an ISO 8601 duration, `PT#H#M#S` with at most two decimals of seconds. */
export function duration2004(seconds: number): string {
  const cs = Math.max(0, Math.round(seconds * 100));
  const h = Math.floor(cs / 360000);
  const m = Math.floor((cs % 360000) / 6000);
  const s = (cs % 6000) / 100;
  return `PT${h}H${m}M${Number(s.toFixed(2))}S`;
}

/** One answered graded block, as `cmi.interactions.n` takes it (2004). */
export interface ScormInteraction {
  id: string;
  type: 'choice' | 'true-false' | 'fill-in' | 'matching' | 'sequencing' | 'other';
  response: string;
  correct: boolean;
}

/** What the player tells the LMS at each report. */
export interface ScormSnapshot {
  screenId: string;
  suspendData: string;
  /** The learner reached the last screen of this pass. */
  finished: boolean;
  /** Set when finished: the score in percent (null: the course has nothing graded) and the verdict. */
  result: { percent: number | null; passed: boolean | null } | null;
  interactions: ScormInteraction[];
}

export interface ScormOpened {
  learner: { id: string; name: string };
  /** `cmi.suspend_data` when the LMS resumes this attempt (else ''). */
  suspendData: string;
  location: string;
  resumed: boolean;
}

interface Lms {
  init(): boolean;
  get(element: string): string;
  set(element: string, value: string): boolean;
  commit(): void;
  finish(): void;
}

function lmsOf(api: Scorm12Api | Scorm2004Api, version: ScormVersion): Lms {
  const ok = (answer: unknown) => String(answer) === 'true';
  if (version === '1.2') {
    const a = api as Scorm12Api;
    return {
      init: () => ok(a.LMSInitialize('')),
      get: (k) => String(a.LMSGetValue(k) ?? ''),
      set: (k, v) => ok(a.LMSSetValue(k, v)),
      commit: () => void a.LMSCommit(''),
      finish: () => void a.LMSFinish(''),
    };
  }
  const a = api as Scorm2004Api;
  return {
    init: () => ok(a.Initialize('')),
    get: (k) => String(a.GetValue(k) ?? ''),
    set: (k, v) => ok(a.SetValue(k, v)),
    commit: () => void a.Commit(''),
    finish: () => void a.Terminate(''),
  };
}

const round2 = (n: number) => Math.round(n * 100) / 100;

/**
 * One SCO session with the LMS. `open` initializes (once), `report` writes what changed since the last
 * report and commits when asked, `close` writes the exit and session time, commits and terminates (once;
 * later calls do nothing). Any LMS failure is logged and swallowed: the learner keeps learning.
 */
export class ScormSession {
  private readonly lms: Lms;
  private state: 'new' | 'open' | 'closed' | 'failed' = 'new';
  private readonly written = new Map<string, string>();
  private readonly interactionIndex = new Map<string, number>();
  private interactionCount = 0;
  private startedAt = 0;
  /** Once a pass finished, status and score stay as reported until another finish (a retake does not undo). */
  private reportedFinish = false;

  constructor(
    api: Scorm12Api | Scorm2004Api,
    readonly version: ScormVersion,
    private readonly now: () => number = () => Date.now(),
    private readonly warn: (message: string) => void = () => undefined,
  ) {
    this.lms = lmsOf(api, version);
  }

  get isOpen(): boolean {
    return this.state === 'open';
  }

  open(): ScormOpened | null {
    if (this.state !== 'new') return null;
    let ok = false;
    try {
      ok = this.lms.init();
    } catch (err) {
      this.warn(`Initialize threw: ${String(err)}`);
    }
    if (!ok) {
      this.state = 'failed';
      this.warn('the LMS refused Initialize');
      return null;
    }
    this.state = 'open';
    this.startedAt = this.now();
    const v12 = this.version === '1.2';
    const get = (k: string) => this.safeGet(k);
    const entry = get(v12 ? 'cmi.core.entry' : 'cmi.entry');
    const status = get(v12 ? 'cmi.core.lesson_status' : 'cmi.completion_status');
    this.reportedFinish = ['completed', 'passed', 'failed'].includes(status);
    if (!v12) {
      const count = Number(get('cmi.interactions._count')) || 0;
      for (let n = 0; n < count; n++) this.interactionIndex.set(get(`cmi.interactions.${n}.id`), n);
      this.interactionCount = count;
    }
    return {
      learner: {
        id: get(v12 ? 'cmi.core.student_id' : 'cmi.learner_id'),
        name: get(v12 ? 'cmi.core.student_name' : 'cmi.learner_name'),
      },
      suspendData: get('cmi.suspend_data'),
      location: get(v12 ? 'cmi.core.lesson_location' : 'cmi.location'),
      resumed: entry === 'resume',
    };
  }

  /** Writes what changed; commits when `commit` (every screen change) or when the pass just finished. */
  report(snap: ScormSnapshot, commit: boolean): void {
    if (this.state !== 'open') return;
    const v12 = this.version === '1.2';
    this.put(v12 ? 'cmi.core.lesson_location' : 'cmi.location', snap.screenId);
    this.put('cmi.suspend_data', snap.suspendData);
    const finishing = snap.finished && snap.result !== null;
    if (finishing) {
      const { percent, passed } = snap.result!;
      if (v12) {
        this.put(
          'cmi.core.lesson_status',
          passed === true ? 'passed' : passed === false ? 'failed' : 'completed',
        );
      } else {
        this.put('cmi.completion_status', 'completed');
        this.put('cmi.success_status', passed === true ? 'passed' : passed === false ? 'failed' : 'unknown');
      }
      if (percent !== null) {
        const prefix = v12 ? 'cmi.core.score' : 'cmi.score';
        // min/max first: some 1.2 runtimes check raw against them.
        this.put(`${prefix}.min`, '0');
        this.put(`${prefix}.max`, '100');
        this.put(`${prefix}.raw`, String(round2(percent)));
        if (!v12) this.put('cmi.score.scaled', String(round2(percent) / 100));
      }
      this.reportedFinish = true;
    } else if (!this.reportedFinish) {
      this.put(v12 ? 'cmi.core.lesson_status' : 'cmi.completion_status', 'incomplete');
    }
    if (!v12) for (const it of snap.interactions) this.putInteraction(it);
    this.put(v12 ? 'cmi.core.exit' : 'cmi.exit', snap.finished ? (v12 ? '' : 'normal') : 'suspend');
    if (commit || finishing) this.commit();
  }

  /** The last report, the session time, a commit and Terminate/LMSFinish; only the first call does anything. */
  close(snap: ScormSnapshot): void {
    if (this.state !== 'open') return;
    this.report(snap, false);
    this.commit();
    this.state = 'closed';
    try {
      this.lms.finish();
    } catch (err) {
      this.warn(`Terminate threw: ${String(err)}`);
    }
  }

  private commit(): void {
    const seconds = (this.now() - this.startedAt) / 1000;
    this.put(
      this.version === '1.2' ? 'cmi.core.session_time' : 'cmi.session_time',
      this.version === '1.2' ? timespan12(seconds) : duration2004(seconds),
    );
    try {
      this.lms.commit();
    } catch (err) {
      this.warn(`Commit threw: ${String(err)}`);
    }
  }

  private putInteraction(it: ScormInteraction): void {
    const key = `${it.type}|${it.response}|${it.correct}`;
    let n = this.interactionIndex.get(it.id);
    if (n !== undefined && this.written.get(`interaction:${it.id}`) === key) return;
    if (n === undefined) {
      n = this.interactionCount++;
      this.interactionIndex.set(it.id, n);
      this.put(`cmi.interactions.${n}.id`, it.id);
    }
    this.put(`cmi.interactions.${n}.type`, it.type);
    this.put(`cmi.interactions.${n}.learner_response`, it.response);
    this.put(`cmi.interactions.${n}.result`, it.correct ? 'correct' : 'incorrect');
    // time(second,10,0) with an explicit UTC zone; the pattern needs fractional seconds before the `Z`.
    this.put(`cmi.interactions.${n}.timestamp`, new Date(this.now()).toISOString().slice(0, 22) + 'Z');
    this.written.set(`interaction:${it.id}`, key);
  }

  private put(element: string, value: string): void {
    if (this.written.get(element) === value) return;
    let ok = false;
    try {
      ok = this.lms.set(element, value);
    } catch (err) {
      this.warn(`SetValue(${element}) threw: ${String(err)}`);
      return;
    }
    if (ok) this.written.set(element, value);
    else this.warn(`the LMS refused ${element}`);
  }

  private safeGet(element: string): string {
    try {
      return this.lms.get(element);
    } catch {
      return '';
    }
  }
}

/** SCORM 2004 short_identifier_type, as runtimes check it. */
const SHORT_ID = /^(?=.*\w)[\w\-()+.:=@;$!*'%/#]{1,250}$/;
const idList = (v: unknown): string[] | null =>
  Array.isArray(v) && v.length <= 36 && v.every((x) => typeof x === 'string' && SHORT_ID.test(x))
    ? (v as string[])
    : null;

/**
 * `cmi.interactions.n` of one answered graded block: the SCORM interaction type closest to the block, the
 * learner's response in that type's format, and the verdict. A response that does not fit its type's
 * format (ids with spaces, more than 36 choices, a hotspot point) is reported as `other`, its JSON.
 */
export function interactionFor(
  block: { id: string; type: string },
  answer: unknown,
  correct: boolean,
): ScormInteraction {
  const id = block.id;
  const other = (): ScormInteraction => ({
    id,
    type: 'other',
    response: (JSON.stringify(answer ?? null) ?? 'null').slice(0, 4000),
    correct,
  });
  switch (block.type) {
    case 'quiz_single_choice':
    case 'timed_question':
    case 'scenario':
    case 'quiz_multiple_choice': {
      const list = idList(typeof answer === 'string' ? [answer] : answer);
      return list && list.length > 0 ? { id, type: 'choice', response: list.join('[,]'), correct } : other();
    }
    case 'quiz_true_false':
      return typeof answer === 'boolean'
        ? { id, type: 'true-false', response: String(answer), correct }
        : other();
    case 'ranking': {
      const list = idList(answer);
      return list && list.length > 0
        ? { id, type: 'sequencing', response: list.join('[,]'), correct }
        : other();
    }
    case 'match': {
      if (typeof answer !== 'object' || answer === null || Array.isArray(answer)) return other();
      const pairs = Object.entries(answer);
      const flat = idList(pairs.flat());
      return flat && pairs.length > 0 && pairs.length <= 36
        ? { id, type: 'matching', response: pairs.map(([l, r]) => `${l}[.]${r}`).join('[,]'), correct }
        : other();
    }
    case 'fill_in_blank': {
      const values = typeof answer === 'string' ? [answer] : Array.isArray(answer) ? answer : null;
      const fits =
        values !== null &&
        values.length > 0 &&
        values.length <= 10 &&
        values.every((v) => typeof v === 'string' && v.length <= 250 && !/[{}[\]]/.test(v));
      return fits ? { id, type: 'fill-in', response: (values as string[]).join('[,]'), correct } : other();
    }
    default:
      return other();
  }
}
