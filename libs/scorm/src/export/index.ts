export {
  SCORM_EXPORT_KIND,
  SCORM_EXPORT_APP,
  SCORM_WORKER_ENV,
  scormExportSettings,
  scormExportHandler,
  scormExportJob,
  startScormExportWorker,
  packageFileName,
  type ScormWorkerConfig,
  type ScormExportSettings,
  type ScormExportDeps,
  type ScormPlayerConfig,
  type CourseEntry,
} from './worker.js';
export { buildManifest, xmlEscape, ncName, xmlLang, type ManifestInput } from './manifest.js';
export { fetchFont, fontKind, type FontFetch, type FontFetchOptions } from './fonts.js';
