/**
 * Grading and the learner view of the graded blocks, with no dependency at all: the server runs it through
 * @lectern/courses (which keys learner item ids with an HMAC), and the browser player bundles it to grade a
 * SCORM package in the learner's browser. One implementation, so an LMS and this service judge alike.
 */
export {
  GRADED_TYPES,
  isGradedType,
  isGraded,
  gradeAnswer,
  correctAnswer,
  feedbackFor,
  scoreAnswers,
  type GradedType,
  type ItemIdFn,
  type Feedback,
  type Score,
} from './grading.js';
export { GRADED_SHAPES, fitsShape } from './shapes.js';
export { learnerBlock, unkeyedItemId, type ViewBlock } from './learner-view.js';
