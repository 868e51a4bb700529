import { fitsShape } from './shapes.js';
import { isFilled, isRecord } from './util.js';

/**
 * Which blocks are graded and how an answer is judged. Pure and deterministic; garbage answers are simply
 * wrong (false), never an error. No dependency at all, so the server (through @lectern/courses) and the
 * browser player (a SCORM package grades in the learner's browser) run this one implementation.
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
] as const;

export type GradedType = (typeof GRADED_TYPES)[number];

const GRADED_SET: ReadonlySet<string> = new Set(GRADED_TYPES);

export function isGradedType(type: unknown): type is GradedType {
  return typeof type === 'string' && GRADED_SET.has(type);
}

/**
 * The id a learner sees for a ranking item or the right-hand side of a match pair (stored ids often give the
 * answer away). The server keys it with a secret (HMAC, @lectern/courses `learnerItemId`); the caller passes
 * the function so this library needs no crypto.
 */
export type ItemIdFn = (blockId: string, itemId: string) => string;

interface Opt {
  id?: string;
  text?: string;
  correct?: boolean;
  outcome?: string;
}
interface Parsed {
  id: string;
  type: GradedType;
  options?: Opt[];
  choices?: Opt[];
  correct?: boolean;
  blanks?: { id?: string; answers?: string[] }[];
  caseSensitive?: boolean;
  pairs?: { id?: string; left?: string; right?: string }[];
  items?: { id?: string; text?: string }[];
  spots?: { id?: string; x?: number; y?: number; radius?: number; correct?: boolean }[];
  showSpots?: boolean;
  explanation?: string;
}

function parse(block: unknown): Parsed | null {
  if (!isRecord(block) || !isGradedType(block.type) || typeof block.id !== 'string') return null;
  return fitsShape(block.type, block) ? (block as unknown as Parsed) : null;
}

/** Whitespace-trimmed, runs of whitespace collapsed, Unicode NFC; lower-cased unless case matters. */
function normalise(s: string, caseSensitive: boolean): string {
  const t = s.normalize('NFC').trim().replace(/\s+/g, ' ');
  return caseSensitive ? t : t.toLowerCase();
}

const hasId = <T extends { id?: string }>(x: T): x is T & { id: string } => isFilled(x.id);

/** The graded pieces of each type, or null when the block has no usable answer key. */
const keys = {
  choice(b: Parsed) {
    const options = (b.options ?? []).filter(hasId);
    const correct = new Set(options.filter((o) => o.correct === true).map((o) => o.id));
    return correct.size > 0 ? { options, correct } : null;
  },
  blanks(b: Parsed) {
    const blanks = b.blanks ?? [];
    if (blanks.length === 0 || !blanks.every((x) => hasId(x) && (x.answers ?? []).some(isFilled)))
      return null;
    return blanks as { id: string; answers: string[] }[];
  },
  pairs(b: Parsed) {
    const pairs = (b.pairs ?? []).filter((p) => hasId(p) && isFilled(p.left) && isFilled(p.right));
    return pairs.length > 0 ? (pairs as { id: string; left: string; right: string }[]) : null;
  },
  ranking(b: Parsed) {
    const items = b.items ?? [];
    const ids = new Set(items.map((i) => i.id));
    if (items.length < 2 || !items.every(hasId) || ids.size !== items.length) return null;
    return items as { id: string; text?: string }[];
  },
  spots(b: Parsed) {
    const spots = (b.spots ?? []).filter(
      (s) => hasId(s) && typeof s.x === 'number' && typeof s.y === 'number' && typeof s.radius === 'number',
    ) as { id: string; x: number; y: number; radius: number; correct?: boolean }[];
    return spots.some((s) => s.correct === true) ? spots : null;
  },
  scenario(b: Parsed) {
    const choices = (b.choices ?? []).filter(hasId);
    return choices.some((c) => c.correct === true) ? choices : null;
  },
};

function hasAnswerKey(b: Parsed): boolean {
  switch (b.type) {
    case 'quiz_single_choice':
    case 'quiz_multiple_choice':
    case 'timed_question':
      return keys.choice(b) !== null;
    case 'quiz_true_false':
      return typeof b.correct === 'boolean';
    case 'fill_in_blank':
      return keys.blanks(b) !== null;
    case 'match':
      return keys.pairs(b) !== null;
    case 'ranking':
      return keys.ranking(b) !== null;
    case 'hotspot':
      return keys.spots(b) !== null;
    case 'scenario':
      return keys.scenario(b) !== null;
  }
}

/**
 * Whether a block counts towards the score: its type is graded and it carries a usable answer key (a quiz
 * stored without any correct option could never be answered right, so it does not count against the
 * learner). Poll and reflection are never graded.
 */
export function isGraded(block: unknown): boolean {
  const b = parse(block);
  return b !== null && hasAnswerKey(b);
}

const isStringArray = (v: unknown): v is string[] =>
  Array.isArray(v) && v.every((x) => typeof x === 'string');

/**
 * Judges one answer. Answer shapes (ids are the ones the learner view shows):
 * - quiz_single_choice, timed_question: the chosen option id
 * - quiz_multiple_choice: array of option ids, equal as a set to the correct ones
 * - quiz_true_false: a boolean
 * - fill_in_blank: a string (one blank), an array of strings in blank order, or an object blank id → string;
 *   trimmed, whitespace collapsed, case-insensitive unless `caseSensitive`; any accepted answer matches
 * - match: object left id → right id, or an array of `[left, right]` / `{left, right}`; every pair must be
 *   matched
 * - ranking: array of item ids (learner-view ids) in the correct order
 * - hotspot: `{x, y}` inside a correct spot (the nearest spot containing the point decides), or a spot id
 *   when the spots are shown
 * - scenario: the id of a correct choice
 * A block that is not graded (see `isGraded`) never grades true.
 */
export function gradeAnswer(block: unknown, answer: unknown, itemId: ItemIdFn): boolean {
  const b = parse(block);
  if (b === null) return false;
  switch (b.type) {
    case 'quiz_single_choice':
    case 'timed_question': {
      const key = keys.choice(b);
      return key !== null && typeof answer === 'string' && key.correct.has(answer);
    }
    case 'quiz_multiple_choice': {
      const key = keys.choice(b);
      if (!key || !isStringArray(answer)) return false;
      const given = new Set(answer);
      return given.size === key.correct.size && [...given].every((id) => key.correct.has(id));
    }
    case 'quiz_true_false':
      return typeof b.correct === 'boolean' && answer === b.correct;
    case 'fill_in_blank': {
      const blanks = keys.blanks(b);
      return blanks !== null && gradeBlanks(blanks, answer, b.caseSensitive === true);
    }
    case 'match': {
      const pairs = keys.pairs(b);
      return pairs !== null && gradeMatch(b.id, pairs, answer, itemId);
    }
    case 'ranking': {
      const items = keys.ranking(b);
      return items !== null && gradeRanking(b.id, items, answer, itemId);
    }
    case 'hotspot': {
      const spots = keys.spots(b);
      return spots !== null && gradeHotspot(spots, answer, b.showSpots === true);
    }
    case 'scenario': {
      const choices = keys.scenario(b);
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
  itemId: ItemIdFn,
): boolean {
  const entries = matchEntries(answer);
  if (!entries || entries.size !== pairs.length) return false;
  const byRightId = new Map(pairs.map((p) => [itemId(blockId, p.id), p]));
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
  itemId: ItemIdFn,
): boolean {
  if (!isStringArray(answer) || answer.length !== items.length || new Set(answer).size !== answer.length)
    return false;
  const byLearnerId = new Map(items.map((it) => [itemId(blockId, it.id), it]));
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

/**
 * A right answer to a graded block in the shape `gradeAnswer` takes (the ids the learner view shows), for the
 * review after a finished run when the course shows correct answers (docs/player-api.md "Review"). Undefined
 * for a block that is not graded, and for a hotspot whose spots are hidden (a point is not a fair solution).
 */
export function correctAnswer(block: unknown, itemId: ItemIdFn): unknown {
  const b = parse(block);
  if (b === null || !hasAnswerKey(b)) return undefined;
  switch (b.type) {
    case 'quiz_single_choice':
    case 'timed_question':
      return [...keys.choice(b)!.correct][0];
    case 'quiz_multiple_choice':
      return [...keys.choice(b)!.correct];
    case 'quiz_true_false':
      return b.correct;
    case 'fill_in_blank':
      return Object.fromEntries(keys.blanks(b)!.map((x) => [x.id, x.answers.find(isFilled)!]));
    case 'match':
      return Object.fromEntries(keys.pairs(b)!.map((p) => [p.id, itemId(b.id, p.id)]));
    case 'ranking':
      return keys.ranking(b)!.map((it) => itemId(b.id, it.id));
    case 'hotspot':
      return b.showSpots === true
        ? keys
            .spots(b)!
            .filter((x) => x.correct === true)
            .map((x) => x.id)
        : undefined;
    case 'scenario':
      return keys.scenario(b)!.find((c) => c.correct === true)!.id;
  }
}

export interface Feedback {
  correct: boolean;
  /** The block's explanation, for showing after the answer. */
  explanation?: string;
  /** For a scenario: the outcome of the chosen choice. */
  outcome?: string;
}

/** What the player may reveal once an answer is in: the verdict plus the texts withheld from the learner view. */
export function feedbackFor(block: unknown, answer: unknown, itemId: ItemIdFn): Feedback {
  const out: Feedback = { correct: gradeAnswer(block, answer, itemId) };
  if (!isRecord(block)) return out;
  if (isFilled(block.explanation)) out.explanation = block.explanation;
  if (block.type === 'scenario' && typeof answer === 'string') {
    const b = parse(block);
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

/** Scores a run: every graded block of the course counts, an unanswered one as wrong. `answers` by block id. */
export function scoreAnswers(screens: unknown, answers: Record<string, unknown>, itemId: ItemIdFn): Score {
  let correct = 0;
  let total = 0;
  for (const screen of Array.isArray(screens) ? screens : []) {
    if (!isRecord(screen) || !Array.isArray(screen.blocks)) continue;
    for (const block of screen.blocks) {
      if (!isGraded(block) || !isRecord(block) || typeof block.id !== 'string') continue;
      total += 1;
      if (Object.hasOwn(answers, block.id) && gradeAnswer(block, answers[block.id], itemId)) correct += 1;
    }
  }
  return { correct, total, percent: total === 0 ? null : (correct / total) * 100 };
}
