/**
 * Course CSV import: one CSV file → screens and blocks, plus the rows that
 * could not be read. The format is documented in docs/csv-import.md. Used by
 * `lectern worker csv` (POST /courses/import/csv) and the dashboard importer
 * (SPEC.md: both use the same parser).
 */
export { parseCourseCsv } from './parse-course-csv.js';
export { CSV_MAX_ROWS, CsvRowLimitError, isCsvRowLimitError, noReadableScreensError } from './csv-errors.js';
export {
  CSV_COLUMNS,
  CSV_DEFAULT_SECONDS,
  CSV_MAX_ITEMS,
  CSV_TYPE_ALIASES,
  CSV_UNSUPPORTED_TYPES,
  type CsvColumn,
} from './row-to-block.js';
export { detectDelimiter, type CsvDelimiter } from './read-csv.js';
export {
  startCsvWorker,
  csvImportJob,
  handleCsvImport,
  toImportIssues,
  CSV_IMPORT_KIND,
  CSV_WORKER_APP,
  CSV_BLOB,
  type CsvWorkerOptions,
} from './worker.js';
export type {
  CsvBlock,
  CsvIssue,
  CsvIssueCode,
  CsvScreen,
  ParseCourseCsvOptions,
  ParseCourseCsvResult,
} from './types.js';
