/**
 * Authoring: courses, themes, certificate templates, collections and
 * translations over the database. Plan gates for whole features sit in front
 * of the routes; ceilings, the course rules and same-workspace references are
 * enforced here so every entry point (API, importers, generation) shares them.
 * Decisions: docs/authoring.md.
 */
export {
  createCourse,
  listCourses,
  getCourse,
  lockCourse,
  updateCourse,
  deleteCourse,
  assertCourseDeletable,
  embedUrl,
  type WorkspaceRef,
  type CourseStatusEvent,
  type UpdateCourseResult,
} from './courses.js';
export { assertRefsInWorkspace, type RefField } from './refs.js';
export { workspaceForImport, importTitle } from './imports.js';
export { listThemes, getTheme, createTheme, updateTheme, deleteTheme } from './themes.js';
export {
  listCertificateTemplates,
  getCertificateTemplate,
  createCertificateTemplate,
  updateCertificateTemplate,
  deleteCertificateTemplate,
} from './certificates.js';
export {
  listCollections,
  getCollection,
  createCollection,
  updateCollection,
  deleteCollection,
  addCollectionCourse,
  moveCollectionCourse,
  removeCollectionCourse,
} from './collections.js';
export {
  translatableOf,
  listTranslations,
  getTranslation,
  createTranslation,
  updateTranslation,
  deleteTranslation,
  translationDto,
} from './translations.js';
export { courseDto, courseWarnings, themeDto, certificateTemplateDto, collectionDto } from './dto.js';
export type { CreateCourseInput } from '@lectern/contracts';
