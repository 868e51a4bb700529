import type { BlockType } from '@lectern/courses';

/** A block as the importer builds it: `id`, `type` and the type's fields (libs/courses field names). */
export interface CsvBlock {
  id: string;
  type: BlockType;
  [field: string]: unknown;
}

export interface CsvScreen {
  id: string;
  title: string;
  blocks: CsvBlock[];
}

/**
 * One unreadable row (or a header problem). `row` is the physical line number
 * in the file where the row starts, counting the first line of the file (the
 * header, normally) as 1; blank lines count and a quoted multi-line cell spans
 * several lines, so an editor's "go to line" lands on the row. Header and
 * whole-file problems (`empty_file`, `no_rows`, `*_column`) are reported on
 * the header line (line 1 for an empty file).
 */
export interface CsvIssue {
  row: number;
  code: CsvIssueCode;
  message: string;
}

export type CsvIssueCode =
  // file and header
  | 'not_text'
  | 'empty_file'
  | 'no_rows'
  | 'missing_column'
  | 'duplicate_column'
  | 'unknown_column'
  | 'unclosed_quote'
  | 'malformed_row'
  // a row
  | 'too_many_columns'
  | 'missing_screen'
  | 'unknown_type'
  | 'unsupported_type'
  | 'missing_text'
  | 'missing_options'
  | 'bad_options'
  | 'too_many_items'
  | 'missing_correct'
  | 'bad_correct'
  | 'missing_back'
  | 'bad_blank'
  | 'missing_url'
  | 'bad_url'
  | 'bad_seconds'
  // the limit (carried by CsvRowLimitError, never in a result)
  | 'too_many_rows';

export interface ParseCourseCsvOptions {
  /** Data rows accepted before `CsvRowLimitError` is thrown; default 2,000 (SPEC.md Limits). */
  maxRows?: number;
}

export interface ParseCourseCsvResult {
  /** Screens with at least one readable block; empty when nothing was readable. */
  screens: CsvScreen[];
  /** Unreadable rows and header problems, in file order. */
  issues: CsvIssue[];
  /** Data rows read (header and blank rows not counted). */
  rowCount: number;
}
