export { ZipPackage, ZIP_CAPS, refused, unsafeName, type PackageEntry } from './zip-guard.js';
export { parseXml, decodeText, XML_CAPS } from './xml.js';
export { htmlToBlocks, HTML_CAPS, type DraftBlock, type HtmlBlocks } from './html-blocks.js';
export { planImport, findManifest, READ_CAPS, type ImportPlan } from './import-package.js';
export {
  handleScormImport,
  scormImportJob,
  startScormImportWorker,
  SCORM_IMPORT_KIND,
  SCORM_IMPORT_APP,
  SCORM_BLOB,
} from './worker.js';
