import { createHmac } from 'node:crypto';
import type { BlockType } from '@lectern/contracts';
import * as core from '@lectern/grading';

/**
 * Grading as the server runs it: the rules live in @lectern/grading (shared with the browser player, which
 * grades SCORM packages); here the learner-facing item ids are keyed with the server's secret.
 */

export const GRADED_TYPES = core.GRADED_TYPES satisfies readonly BlockType[];
export type GradedType = core.GradedType;
export type Feedback = core.Feedback;
export type Score = core.Score;
export const isGradedType = core.isGradedType;
export const isGraded = core.isGraded;

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

export const itemIds =
  (opts: AnswerKeyOptions = {}): core.ItemIdFn =>
  (blockId, itemId) =>
    learnerItemId(blockId, itemId, opts);

/** Judges one answer (answer shapes: @lectern/grading `gradeAnswer`). */
export function gradeAnswer(block: unknown, answer: unknown, opts: AnswerKeyOptions = {}): boolean {
  return core.gradeAnswer(block, answer, itemIds(opts));
}

/** A right answer in the learner view's ids (@lectern/grading `correctAnswer`); undefined when there is none to show. */
export function correctAnswer(block: unknown, opts: AnswerKeyOptions = {}): unknown {
  return core.correctAnswer(block, itemIds(opts));
}

/** The verdict plus the texts withheld from the learner view (explanation, scenario outcome). */
export function feedbackFor(block: unknown, answer: unknown, opts: AnswerKeyOptions = {}): Feedback {
  return core.feedbackFor(block, answer, itemIds(opts));
}

/** Scores a run: every graded block of the course counts, an unanswered one as wrong. */
export function scoreAnswers(
  screens: unknown,
  answers: Record<string, unknown>,
  opts: AnswerKeyOptions = {},
): Score {
  return core.scoreAnswers(screens, answers, itemIds(opts));
}
