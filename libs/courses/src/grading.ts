import { createHmac } from 'node:crypto';
import { blockFieldsOf, type BlockData, type BlockType } from '@lectern/contracts';
import { isFilled, isRecord } from './util.js';

/**
 * Which blocks are graded and how an answer is judged. Pure and
 * deterministic; garbage answers are simply wrong (false), never an error.
 */

export const GRADED_TYPES = [
  'quiz_single_choice',
  'quiz_multiple_choice',
  'quiz_true_false',
  'fill_in_blank',
  'match',
  'hotspot',
  'ranking',
  'scenario',
  'timed_question',
] as const satisfies readonly BlockType[];

export type GradedType = (typeof GRADED_TYPES)[number];

const GRADED_SET: ReadonlySet<string> = new Set(GRADED_TYPES);

export function isGradedType(type: unknown): type is GradedType {
  return typeof type === 'string' && GRADED_SET.has(type);
}

export interface AnswerKeyOptions {
  /**
   * Server-side secret that keys the learner-facing ids of ranking items and
   * match right-hand sides (see `learnerItemId`). Without it the ids are
   * still opaque but can be recomputed by anyone who guesses the stored ids.
   */
  secret?: string;
}

/**
 * The id a learner sees for a ranking item or the right-hand side of a match
 * pair. Stored ids often give the answer away (`r1`, `r2`, … in the correct
 * order; a match's right side shares its pair id with the left), so the
 * learner view replaces them with this keyed hash and the grader maps back.
 */
export function learnerItemId(blockId: string, itemId: string, opts: AnswerKeyOptions = {}): string {
  const mac = createHmac('sha256', opts.secret ?? '')
    .update(`${blockId}\u0000${itemId}`)
    .digest('hex');
  return `k_${mac.slice(0, 20)}`;
}

type Parsed<T extends BlockType> = BlockData<T> & { id: string };

function parse<T extends BlockType>(block: Record<string, unknown>, type: T): Parsed<T> | null {
  if (typeof block.id !== 'string') return null;
  const r = blockFieldsOf(type).safeParse(block);
  return r.success ? ({ ...r.data, id: block.id } as Parsed<T>) : null;
}

/** Whitespace-trimmed, runs of whitespace collapsed, Unicode NFC; lower-cased unless case matters. */
function normalise(s: string, caseSensitive: boolean): string {
  const t = s.normalize('NFC').trim().replace(/\s+/g, ' ');
  return caseSensitive ? t : t.toLowerCase();
}

const hasId = <T extends { id?: string }>(x: T): x is T & { id: string } => isFilled(x.id);

/** The graded pieces of each type, or null when the block has no usable answer key. */
const keys = {
  choice(b: Parsed<'quiz_single_choice' | 'quiz_multiple_choice' | 'timed_question'>) {
    const options = (b.options ?? []).filter(hasId);
    const correct = new Set(options.filter((o) => o.correct === true).map((o) => o.id));
    return correct.size > 0 ? { options, correct } : null;
  },
  blanks(b: Parsed<'fill_in_blank'>) {
    const blanks = b.blanks ?? [];
    if (blanks.length === 0 || !blanks.every((x) => hasId(x) && (x.answers ?? []).some(isFilled)))
      return null;
    return blanks as ((typeof blanks)[number] & { id: string; answers: string[] })[];
  },
  pairs(b: Parsed<'match'>) {
    const pairs = (b.pairs ?? []).filter((p) => hasId(p) && isFilled(p.left) && isFilled(p.right));
    return pairs.length > 0 ? (pairs as { id: string; left: string; right: string }[]) : null;
  },
  ranking(b: Parsed<'ranking'>) {
    const items = b.items ?? [];
    const ids = new Set(items.map((i) => i.id));
    if (items.length < 2 || !items.every(hasId) || ids.size !== items.length) return null;
    return items as { id: string; text?: string }[];
  },
  spots(b: Parsed<'hotspot'>) {
    const spots = (b.spots ?? []).filter(
      (s) => hasId(s) && typeof s.x === 'number' && typeof s.y === 'number' && typeof s.radius === 'number',
    ) as { id: string; x: number; y: number; radius: number; correct?: boolean }[];
    return spots.some((s) => s.correct === true) ? spots : null;
  },
  scenario(b: Parsed<'scenario'>) {
    const choices = (b.choices ?? []).filter(hasId);
    return choices.some((c) => c.correct === true) ? choices : null;
  },
};

function hasAnswerKey(block: Record<string, unknown>, type: GradedType): boolean {
  switch (type) {
    case 'quiz_single_choice':
    case 'quiz_multiple_choice':
    case 'timed_question': {
      const b = parse(block, type);
      return b !== null && keys.choice(b) !== null;
    }
    case 'quiz_true_false': {
      const b = parse(block, type);
      return b !== null && typeof b.correct === 'boolean';
    }
    case 'fill_in_blank': {
      const b = parse(block, type);
      return b !== null && keys.blanks(b) !== null;
    }
    case 'match': {
      const b = parse(block, type);
      return b !== null && keys.pairs(b) !== null;
    }
    case 'ranking': {
      const b = parse(block, type);
      return b !== null && keys.ranking(b) !== null;
    }
    case 'hotspot': {
      const b = parse(block, type);
      return b !== null && keys.spots(b) !== null;
    }
    case 'scenario': {
      const b = parse(block, type);
      return b !== null && keys.scenario(b) !== null;
    }
  }
}

/**
 * Whether a block counts towards the score: its type is graded and it carries
 * a usable answer key (a quiz stored without any correct option could never
 * be answered right, so it does not count against the learner). Poll and
 * reflection are never graded.
 */
export function isGraded(block: unknown): boolean {
  return isRecord(block) && isGradedType(block.type) && hasAnswerKey(block, block.type);
}

const isStringArray = (v: unknown): v is string[] =>
  Array.isArray(v) && v.every((x) => typeof x === 'string');

/**
 * Judges one answer. Answer shapes (ids are the ones the learner view shows):
 * - quiz_single_choice, timed_question: the chosen option id
 * - quiz_multiple_choice: array of option ids, equal as a set to the correct ones
 * - quiz_true_false: a boolean
 * - fill_in_blank: a string (one blank), an array of strings in blank order,
 *   or an object blank id → string; trimmed, whitespace collapsed,
 *   case-insensitive unless `caseSensitive`; any accepted answer matches
 * - match: object left id → right id, or an array of `[left, right]` /
 *   `{left, right}`; every pair must be matched
 * - ranking: array of item ids (learner-view ids) in the correct order
 * - hotspot: `{x, y}` inside a correct spot (the nearest spot containing
 *   the point decides), or a spot id when the spots are shown
 * - scenario: the id of a correct choice
 * A block that is not graded (see `isGraded`) never grades true.
 */
export function gradeAnswer(block: unknown, answer: unknown, opts: AnswerKeyOptions = {}): boolean {
  if (!isRecord(block) || !isGradedType(block.type)) return false;
  switch (block.type) {
    case 'quiz_single_choice':
    case 'timed_question': {
      const b = parse(block, block.type);
      const key = b && keys.choice(b);
      return key !== null && typeof answer === 'string' && key.correct.has(answer);
    }
    case 'quiz_multiple_choice': {
      const b = parse(block, block.type);
      const key = b && keys.choice(b);
      if (!key || !isStringArray(answer)) return false;
      const given = new Set(answer);
      return given.size === key.correct.size && [...given].every((id) => key.correct.has(id));
    }
    case 'quiz_true_false': {
      const b = parse(block, block.type);
      return b !== null && typeof b.correct === 'boolean' && answer === b.correct;
    }
    case 'fill_in_blank': {
      const b = parse(block, block.type);
      const blanks = b && keys.blanks(b);
      return blanks !== null && gradeBlanks(blanks, answer, b?.caseSensitive === true);
    }
    case 'match': {
      const b = parse(block, block.type);
      const pairs = b && keys.pairs(b);
      return b !== null && pairs !== null && gradeMatch(b.id, pairs, answer, opts);
    }
    case 'ranking': {
      const b = parse(block, block.type);
      const items = b && keys.ranking(b);
      return b !== null && items !== null && gradeRanking(b.id, items, answer, opts);
    }
    case 'hotspot': {
      const b = parse(block, block.type);
      const spots = b && keys.spots(b);
      return spots !== null && gradeHotspot(spots, answer, b?.showSpots === true);
    }
    case 'scenario': {
      const b = parse(block, block.type);
      const choices = b && keys.scenario(b);
      return (
        choices !== null &&
        typeof answer === 'string' &&
        choices.some((c) => c.id === answer && c.correct === true)
      );
    }
  }
}

function gradeBlanks(
  blanks: { id: string; answers: string[] }[],
  answer: unknown,
  caseSensitive: boolean,
): boolean {
  let given: unknown[];
  if (typeof answer === 'string' && blanks.length === 1) given = [answer];
  else if (Array.isArray(answer) && answer.length === blanks.length) given = answer;
  else if (isRecord(answer))
    given = blanks.map((b) => (Object.hasOwn(answer, b.id) ? answer[b.id] : undefined));
  else return false;
  return blanks.every((blank, i) => {
    const g = given[i];
    if (typeof g !== 'string' || g.trim() === '') return false;
    const n = normalise(g, caseSensitive);
    return blank.answers.some((a) => isFilled(a) && normalise(a, caseSensitive) === n);
  });
}

/** left id → right ref; null when the answer is not a well-formed, unambiguous mapping. */
function matchEntries(answer: unknown): Map<string, string> | null {
  const out = new Map<string, string>();
  const put = (l: unknown, r: unknown): boolean => {
    if (typeof l !== 'string' || typeof r !== 'string' || out.has(l)) return false;
    out.set(l, r);
    return true;
  };
  if (Array.isArray(answer)) {
    for (const e of answer) {
      const ok = Array.isArray(e) ? e.length === 2 && put(e[0], e[1]) : isRecord(e) && put(e.left, e.right);
      if (!ok) return null;
    }
    return out;
  }
  if (isRecord(answer)) {
    for (const [l, r] of Object.entries(answer)) if (!put(l, r)) return null;
    return out;
  }
  return null;
}

function gradeMatch(
  blockId: string,
  pairs: { id: string; left: string; right: string }[],
  answer: unknown,
  opts: AnswerKeyOptions,
): boolean {
  const entries = matchEntries(answer);
  if (!entries || entries.size !== pairs.length) return false;
  const byRightId = new Map(pairs.map((p) => [learnerItemId(blockId, p.id, opts), p]));
  return pairs.every((p) => {
    const chosen = byRightId.get(entries.get(p.id) ?? '');
    // Two identical right-hand texts are indistinguishable to the learner: either is right.
    return chosen !== undefined && normalise(chosen.right, true) === normalise(p.right, true);
  });
}

function gradeRanking(
  blockId: string,
  items: { id: string; text?: string }[],
  answer: unknown,
  opts: AnswerKeyOptions,
): boolean {
  if (!isStringArray(answer) || answer.length !== items.length || new Set(answer).size !== answer.length)
    return false;
  const byLearnerId = new Map(items.map((it) => [learnerItemId(blockId, it.id, opts), it]));
  return answer.every((id, i) => {
    const chosen = byLearnerId.get(id);
    if (!chosen) return false;
    const expected = items[i];
    // Items with identical text look the same to the learner, so their order is free.
    return (
      chosen === expected || (isFilled(chosen.text) && chosen.text.trim() === (expected.text ?? '').trim())
    );
  });
}

function gradeHotspot(
  spots: { id: string; x: number; y: number; radius: number; correct?: boolean }[],
  answer: unknown,
  showSpots: boolean,
): boolean {
  if (typeof answer === 'string')
    return showSpots && spots.some((s) => s.id === answer && s.correct === true);
  if (!isRecord(answer)) return false;
  const { x, y } = answer;
  if (typeof x !== 'number' || typeof y !== 'number' || !Number.isFinite(x) || !Number.isFinite(y))
    return false;
  let nearest: { d2: number; correct: boolean } | null = null;
  for (const s of spots) {
    const d2 = (x - s.x) ** 2 + (y - s.y) ** 2;
    if (d2 <= s.radius ** 2 && (nearest === null || d2 < nearest.d2))
      nearest = { d2, correct: s.correct === true };
  }
  return nearest !== null && nearest.correct;
}

export interface Feedback {
  correct: boolean;
  /** The block's explanation, for showing after the answer. */
  explanation?: string;
  /** For a scenario: the outcome of the chosen choice. */
  outcome?: string;
}

/**
 * What the player may reveal once an answer is in: the verdict plus the
 * texts withheld from the learner view (explanation, scenario outcome).
 */
export function feedbackFor(block: unknown, answer: unknown, opts: AnswerKeyOptions = {}): Feedback {
  const out: Feedback = { correct: gradeAnswer(block, answer, opts) };
  if (!isRecord(block)) return out;
  if (isFilled(block.explanation)) out.explanation = block.explanation;
  if (block.type === 'scenario' && typeof answer === 'string') {
    const b = parse(block, 'scenario');
    const choice = b?.choices?.find((c) => c.id === answer);
    if (choice && isFilled(choice.outcome)) out.outcome = choice.outcome;
  }
  return out;
}

export interface Score {
  correct: number;
  total: number;
  /** correct / total × 100, unrounded; null when the course has no graded block (null is not zero). */
  percent: number | null;
}

/**
 * Scores a run: every graded block of the course counts, an unanswered one
 * as wrong. `answers` is keyed by block id.
 */
export function scoreAnswers(
  screens: unknown,
  answers: Record<string, unknown>,
  opts: AnswerKeyOptions = {},
): Score {
  let correct = 0;
  let total = 0;
  for (const screen of Array.isArray(screens) ? screens : []) {
    if (!isRecord(screen) || !Array.isArray(screen.blocks)) continue;
    for (const block of screen.blocks) {
      if (!isGraded(block) || !isRecord(block) || typeof block.id !== 'string') continue;
      total += 1;
      if (Object.hasOwn(answers, block.id) && gradeAnswer(block, answers[block.id], opts)) correct += 1;
    }
  }
  return { correct, total, percent: total === 0 ? null : (correct / total) * 100 };
}
