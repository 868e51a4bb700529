/**
 * Match and ranking answers as a customer can read them (docs/player-api.md "Readable answers"). The learner
 * answers with the keyed ids of the learner view (`learnerItemId`: a match's right-hand sides, a ranking's items),
 * which mean nothing outside the service; this maps them back to the stored item ids and texts, beside the ids
 * the learner sent. Pure: the caller passes the block as stored and the server's answer-key secret.
 */
import { learnerItemId, type AnswerKeyOptions } from './grading.js';
import { isRecord } from './util.js';

/** One item as the author stored it; `id` and `text` are null when the learner's id names no item (any more). */
export interface ReadableItem {
  /** The id the learner's answer holds (for a match's left side, the pair id itself). */
  answerId: string;
  id: string | null;
  text: string | null;
}

export type ReadableAnswer =
  | { type: 'match'; pairs: { left: ReadableItem; right: ReadableItem }[] }
  | { type: 'ranking'; order: ReadableItem[] };

const str = (v: unknown): string | null => (typeof v === 'string' ? v : null);

/** Match answers arrive as `{left: right}`, `[[left, right]]` or `[{left, right}]` (the grader's shapes). */
function matchEntries(answer: unknown): [string, string][] {
  const out: [string, string][] = [];
  const put = (l: unknown, r: unknown) => {
    if (typeof l === 'string' && typeof r === 'string') out.push([l, r]);
  };
  if (Array.isArray(answer)) {
    for (const e of answer) {
      if (Array.isArray(e) && e.length === 2) put(e[0], e[1]);
      else if (isRecord(e)) put(e.left, e.right);
    }
  } else if (isRecord(answer)) {
    for (const [l, r] of Object.entries(answer)) put(l, r);
  }
  return out;
}

/**
 * The readable form of a match or ranking answer; null for any other block type or an answer of no known shape
 * (nothing to map). Items are named by the block as it is now: an item deleted since the answer reads `id: null`.
 */
export function readableAnswer(
  block: unknown,
  answer: unknown,
  opts: AnswerKeyOptions,
): ReadableAnswer | null {
  if (!isRecord(block) || typeof block.id !== 'string') return null;
  const blockId = block.id;
  if (block.type === 'match') {
    const pairs = (Array.isArray(block.pairs) ? block.pairs : []).filter(
      (p): p is Record<string, unknown> & { id: string } => isRecord(p) && typeof p.id === 'string',
    );
    const byId = new Map(pairs.map((p) => [p.id, p]));
    const byRight = new Map(pairs.map((p) => [learnerItemId(blockId, p.id, opts), p]));
    const entries = matchEntries(answer);
    if (entries.length === 0 && !isRecord(answer) && !Array.isArray(answer)) return null;
    return {
      type: 'match',
      pairs: entries.map(([l, r]) => {
        const left = byId.get(l);
        const right = byRight.get(r);
        return {
          left: { answerId: l, id: left ? left.id : null, text: left ? str(left.left) : null },
          right: { answerId: r, id: right ? right.id : null, text: right ? str(right.right) : null },
        };
      }),
    };
  }
  if (block.type === 'ranking') {
    if (!Array.isArray(answer)) return null;
    const items = (Array.isArray(block.items) ? block.items : []).filter(
      (i): i is Record<string, unknown> & { id: string } => isRecord(i) && typeof i.id === 'string',
    );
    const byLearnerId = new Map(items.map((i) => [learnerItemId(blockId, i.id, opts), i]));
    return {
      type: 'ranking',
      order: answer
        .filter((id): id is string => typeof id === 'string')
        .map((id) => {
          const item = byLearnerId.get(id);
          return { answerId: id, id: item ? item.id : null, text: item ? str(item.text) : null };
        }),
    };
  }
  return null;
}

/** Every readable answer of a run, by block id, over the stored screens (blocks of other types are left out). */
export function readableAnswers(
  screens: unknown,
  answers: Record<string, unknown>,
  opts: AnswerKeyOptions,
): Record<string, ReadableAnswer> {
  const out: Record<string, ReadableAnswer> = {};
  for (const s of Array.isArray(screens) ? screens : []) {
    if (!isRecord(s) || !Array.isArray(s.blocks)) continue;
    for (const b of s.blocks) {
      if (!isRecord(b) || typeof b.id !== 'string' || !Object.hasOwn(answers, b.id) || out[b.id]) continue;
      const readable = readableAnswer(b, answers[b.id], opts);
      if (readable) out[b.id] = readable;
    }
  }
  return out;
}
