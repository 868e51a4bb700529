import type { ItemIdFn } from './grading.js';
import { isRecord, type JsonRecord } from './util.js';

/** A block as stored or as a learner sees it: `id`, `type` and its fields. */
export interface ViewBlock {
  id: string;
  type: string;
  [field: string]: unknown;
}

const records = (v: unknown): JsonRecord[] => (Array.isArray(v) ? v.filter(isRecord) : []);
const without = (r: JsonRecord, ...keys: string[]): JsonRecord =>
  Object.fromEntries(Object.entries(r).filter(([k]) => !keys.includes(k)));
const byId = (a: { id: unknown }, b: { id: unknown }): number =>
  String(a.id) < String(b.id) ? -1 : String(a.id) > String(b.id) ? 1 : 0;

/**
 * One block as the learner view ships it, with every answer key removed (the rules are listed on
 * @lectern/courses `stripAnswerKeys`, which also drops unknown fields and instructor notes first). Match right
 * sides and ranking items take `itemId` ids and are ordered by them, so the stored (correct) order never shows.
 */
export function learnerBlock<B extends ViewBlock>(block: B, itemId: ItemIdFn): B {
  const b = without(block, 'explanation') as ViewBlock;
  switch (b.type) {
    case 'quiz_single_choice':
    case 'quiz_multiple_choice':
    case 'timed_question':
      if (Array.isArray(b.options)) b.options = records(b.options).map((o) => without(o, 'correct'));
      return b as B;
    case 'quiz_true_false':
      return without(b, 'correct') as B;
    case 'fill_in_blank': {
      const out = without(b, 'caseSensitive') as ViewBlock;
      if (Array.isArray(b.blanks)) out.blanks = records(b.blanks).map((x) => ({ id: x.id }));
      return out as B;
    }
    case 'match': {
      const pairs = records(b.pairs);
      const out = without(b, 'pairs') as ViewBlock;
      out.left = pairs.map((p) => ({ id: p.id, text: p.left }));
      out.right = pairs.map((p) => ({ id: itemId(block.id, String(p.id)), text: p.right })).sort(byId);
      return out as B;
    }
    case 'ranking':
      if (Array.isArray(b.items)) {
        b.items = records(b.items)
          .map((it) => ({ ...it, id: itemId(block.id, String(it.id)) }))
          .sort(byId);
      }
      return b as B;
    case 'hotspot': {
      if (b.showSpots !== true) return without(b, 'spots') as B;
      if (Array.isArray(b.spots)) b.spots = records(b.spots).map((s) => without(s, 'correct'));
      return b as B;
    }
    case 'scenario':
      if (Array.isArray(b.choices))
        b.choices = records(b.choices).map((c) => without(c, 'correct', 'outcome'));
      return b as B;
    default:
      return b as B;
  }
}

/**
 * An item id for a package that grades in the learner's browser: the answer keys travel with the package
 * anyway (docs/scorm.md), so nothing here is secret; the hash only keeps the stored (correct) order of
 * ranking items and match sides from showing. Two FNV-1a rounds, 16 hex digits.
 */
export const unkeyedItemId: ItemIdFn = (blockId, itemId) => {
  const input = `${blockId}\u0000${itemId}`;
  const fnv = (seed: number) => {
    let h = seed >>> 0;
    for (let i = 0; i < input.length; i++) {
      h ^= input.charCodeAt(i);
      h = Math.imul(h, 0x01000193) >>> 0;
    }
    return h.toString(16).padStart(8, '0');
  };
  return `k_${fnv(0x811c9dc5)}${fnv(0x9e3779b9)}`;
};
