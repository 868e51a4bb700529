import type { Block, Screen } from '@lectern/contracts';
import { learnerItemId, type AnswerKeyOptions } from './grading.js';
import { projectScreens } from './project.js';
import { isRecord, type JsonRecord } from './util.js';

/**
 * What the player sends to a learner: the screens with every answer key
 * removed, so reading the network traffic gives nothing away.
 *
 * - Only known fields travel (an unknown or misspelled field could hold
 *   anything); screens carry `id`, `title`, `blocks`.
 * - `correct` flags go from options, choices and spots; `explanation` goes
 *   from every block and a scenario choice's `outcome` too (both tend to
 *   state the answer). `feedbackFor` returns them once an answer is in.
 * - fill_in_blank keeps the text with its `{{id}}` markers and `blanks` as
 *   `[{id}]`; the accepted answers and `caseSensitive` go.
 * - match becomes `left: [{id, text}]` (pair ids, stored order) and
 *   `right: [{id, text}]` (ids from `learnerItemId`, ordered by that id);
 *   `pairs` goes.
 * - ranking `items` get `learnerItemId` ids and are ordered by them, not in
 *   the stored (correct) order.
 * - hotspot keeps its spots (without `correct`) only when `showSpots` is
 *   true; otherwise the spots are the answer and go.
 * - instructor_note blocks are for the author and facilitators and are left
 *   out entirely.
 */
export function stripAnswerKeys(screens: unknown, opts: AnswerKeyOptions = {}): Screen[] {
  return projectScreens(screens).map((screen) => ({
    id: screen.id,
    title: screen.title,
    blocks: screen.blocks.filter((b) => b.type !== 'instructor_note').map((b) => learnerBlock(b, opts)),
  }));
}

const records = (v: unknown): JsonRecord[] => (Array.isArray(v) ? v.filter(isRecord) : []);
const without = (r: JsonRecord, ...keys: string[]): JsonRecord =>
  Object.fromEntries(Object.entries(r).filter(([k]) => !keys.includes(k)));
const byId = (a: { id: unknown }, b: { id: unknown }): number =>
  String(a.id) < String(b.id) ? -1 : String(a.id) > String(b.id) ? 1 : 0;

function learnerBlock(block: Block, opts: AnswerKeyOptions): Block {
  const b = without(block, 'explanation') as Block;
  switch (b.type) {
    case 'quiz_single_choice':
    case 'quiz_multiple_choice':
    case 'timed_question':
      if (Array.isArray(b.options)) b.options = records(b.options).map((o) => without(o, 'correct'));
      return b;
    case 'quiz_true_false':
      return without(b, 'correct') as Block;
    case 'fill_in_blank': {
      const out = without(b, 'caseSensitive') as Block;
      if (Array.isArray(b.blanks)) out.blanks = records(b.blanks).map((x) => ({ id: x.id }));
      return out;
    }
    case 'match': {
      const pairs = records(b.pairs);
      const out = without(b, 'pairs') as Block;
      out.left = pairs.map((p) => ({ id: p.id, text: p.left }));
      out.right = pairs
        .map((p) => ({ id: learnerItemId(block.id, String(p.id), opts), text: p.right }))
        .sort(byId);
      return out;
    }
    case 'ranking':
      if (Array.isArray(b.items)) {
        b.items = records(b.items)
          .map((it) => ({ ...it, id: learnerItemId(block.id, String(it.id), opts) }))
          .sort(byId);
      }
      return b;
    case 'hotspot': {
      if (b.showSpots !== true) return without(b, 'spots') as Block;
      if (Array.isArray(b.spots)) b.spots = records(b.spots).map((s) => without(s, 'correct'));
      return b;
    }
    case 'scenario':
      if (Array.isArray(b.choices))
        b.choices = records(b.choices).map((c) => without(c, 'correct', 'outcome'));
      return b;
    default:
      return b;
  }
}
