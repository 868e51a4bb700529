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
export {
  fontKind,
  imageKind,
  playableKind,
  mediaKind,
  svgHazard,
  type FontExt,
  type ImageExt,
  type PlayableExt,
  type MediaClass,
} from './sniff.js';
export { packAssets, isFetchable, SVG_MAX_BYTES, type AssetUse, type PackedFile } from './assets.js';
