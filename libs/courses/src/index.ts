/**
 * The block catalogue: the lenient write check and the strict check for
 * machine-made content, grading and the learner view, the content hash, and
 * translatable text. Pure code, no I/O. See docs/blocks.md.
 *
 * The 39 block types and their field schemas are the course body's contract and
 * live in libs/contracts; they are re-exported here so that code working on
 * course content keeps one import for the catalogue and what runs over it.
 */
export {
  BLOCK_TYPES,
  GENERATABLE_TYPES,
  MAX_STACK_CARDS,
  COURSE_LIMITS,
  TIMED_QUESTION_SECONDS,
  BlockFields,
  BlockSchemas,
  BlockSchema,
  ScreenSchema,
  blockFieldsOf,
  isBlockType,
  type BlockType,
  type GeneratableType,
  type BlockData,
  type Block,
  type Screen,
} from '@lectern/contracts';
export { validateScreens, courseSizeIssue } from './validate.js';
export { dropNullFields } from './normalize.js';
export {
  strictCheckBlock,
  strictCheckScreens,
  blankMarkers,
  type StrictOptions,
  type StrictResult,
  type DroppedItem,
} from './strict.js';
export {
  GRADED_TYPES,
  isGradedType,
  isGraded,
  gradeAnswer,
  correctAnswer,
  feedbackFor,
  scoreAnswers,
  learnerItemId,
  type GradedType,
  type AnswerKeyOptions,
  type Feedback,
  type Score,
} from './grading.js';
export { stripAnswerKeys, keyedScreens } from './learner-view.js';
export {
  readableAnswer,
  readableAnswers,
  type ReadableAnswer,
  type ReadableItem,
} from './readable-answers.js';
export { contentHash, canonicalJson, type HashableCourse } from './content-hash.js';
export {
  TEXT_FIELDS,
  escapePathId,
  translatableFields,
  applyTranslation,
  isKnownPath,
  translationIssues,
  textFingerprint,
  sourceFingerprints,
  stalePaths,
  type TranslatableField,
  type TranslatableCourse,
} from './translatable.js';
export { directionOf } from './direction.js';
