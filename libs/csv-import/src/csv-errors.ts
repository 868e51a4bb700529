import { AppError } from '@lectern/errors';
import type { CsvIssue } from './types.js';

/** SPEC.md, Limits: "CSV import — 2,000 data rows for a course CSV". */
export const CSV_MAX_ROWS = 2000;

/**
 * Thrown by `parseCourseCsv` as soon as the file has more data rows than the
 * limit (parsing stops there). It is an `invalid_request` AppError, so the API
 * answers 400 without a special case. The body keeps the import's issue shape
 * (`{row, code, message}`, `row` = the line where the first row over the
 * limit starts) and names the limit in `limit`.
 */
export class CsvRowLimitError extends AppError {
  readonly limit: number;
  /** Line number where the first data row over the limit starts. */
  readonly row: number;

  constructor(limit: number, row: number) {
    const message = `CSV import is limited to ${limit.toLocaleString('en-US')} data rows; this file has more`;
    const issue: CsvIssue = { row, code: 'too_many_rows', message };
    super('invalid_request', message, { details: { limit, issues: [issue] } });
    this.name = 'CsvRowLimitError';
    this.limit = limit;
    this.row = row;
  }
}

export function isCsvRowLimitError(err: unknown): err is CsvRowLimitError {
  return err instanceof CsvRowLimitError;
}

/** The 400 for a CSV with no readable screen; the row issues travel in the body as `issues`. */
export function noReadableScreensError(issues: CsvIssue[]): AppError {
  return new AppError('invalid_request', 'The CSV has no readable screen; see issues for each row', {
    details: { issues },
  });
}
