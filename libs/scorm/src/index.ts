/**
 * SCORM: export a course as a SCORM 1.2 or 2004 (4th edition) single-SCO package, and import packages (our own
 * exactly, third-party ones by salvage). docs/scorm.md is the contract.
 */
export * from './package-layout.js';
export * from './export/index.js';
export * from './import/index.js';
