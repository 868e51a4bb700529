import { CSV_COLUMNS, parseCourseCsv, type CsvBlock, type CsvIssue } from '@lectern/csv-import';

export const ALL_COLUMNS = CSV_COLUMNS;

export type Cells = Partial<Record<(typeof ALL_COLUMNS)[number], string>>;

/** Quotes every cell, doubling inner quotes (RFC 4180). */
export function csvLine(cells: readonly string[], delimiter = ','): string {
  return cells.map((c) => `"${c.replaceAll('"', '""')}"`).join(delimiter);
}

/** A file with the full header and one line per row. */
export function csvOf(rows: Cells[], eol = '\n'): string {
  const lines = [ALL_COLUMNS.join(',')];
  for (const row of rows) lines.push(csvLine(ALL_COLUMNS.map((c) => row[c] ?? '')));
  return lines.join(eol) + eol;
}

/** Parses a single row on screen "S" and returns its block or its issue. */
export function oneRow(row: Cells): { block?: CsvBlock; issue?: CsvIssue } {
  const result = parseCourseCsv(csvOf([{ screen: 'S', ...row }]));
  return { block: result.screens[0]?.blocks[0], issue: result.issues[0] };
}
