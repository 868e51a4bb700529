/**
 * What a package this service exports holds besides the SCO (docs/scorm.md "Package layout"). The importer
 * recognises its own packages by these names and brings the course back exactly from `COURSE_ENTRY`.
 */

/** The course as stored (every screen, block, id and setting, translations included), as JSON. */
export const COURSE_ENTRY = 'lectern/course.json';

/** Written into the manifest's `<metadata>` so the importer can tell one of ours from a third party's. */
export const GENERATOR_SCHEMA = 'Lectern course';
