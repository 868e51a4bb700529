import type { Screen } from '@lectern/contracts';
import { learnerBlock } from '@lectern/grading';
import { itemIds, type AnswerKeyOptions } from './grading.js';
import { projectScreens } from './project.js';

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
    blocks: screen.blocks
      .filter((b) => b.type !== 'instructor_note')
      .map((b) => learnerBlock(b, itemIds(opts))),
  }));
}

/**
 * What a SCORM package ships (docs/scorm.md): the screens as the learner view reads them (known fields only,
 * instructor notes out) with the answer keys KEPT, because an LMS has no server of ours to grade and the package
 * grades in the browser (the player hides the keys on the page itself).
 */
export function keyedScreens(screens: unknown): Screen[] {
  return projectScreens(screens).map((screen) => ({
    id: screen.id,
    title: screen.title,
    blocks: screen.blocks.filter((b) => b.type !== 'instructor_note'),
  }));
}
