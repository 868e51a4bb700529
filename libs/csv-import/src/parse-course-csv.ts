import type { BlockType } from '@lectern/courses';
import { CSV_MAX_ROWS, CsvRowLimitError } from './csv-errors.js';
import {
  CSV_MAX_COLUMNS,
  CsvNotTextError,
  decodeCsv,
  detectDelimiter,
  headerWidth,
  readCsv,
  type CsvRecord,
} from './read-csv.js';
import {
  CSV_COLUMNS,
  normalizeName,
  resolveType,
  rowToBlock,
  type CsvColumn,
  type Fields,
  type RowCells,
} from './row-to-block.js';
import type { CsvBlock, CsvIssue, CsvScreen, ParseCourseCsvOptions, ParseCourseCsvResult } from './types.js';

const KNOWN_COLUMNS: ReadonlySet<string> = new Set(CSV_COLUMNS);

type ColumnIndex = Partial<Record<CsvColumn, number>>;

interface ScreenDraft {
  title: string;
  blocks: { type: BlockType; fields: Fields }[];
}

function isBlank(cells: readonly string[]): boolean {
  return cells.every((c) => c.trim() === '');
}

/**
 * Reads a course CSV (format: docs/csv-import.md) into screens and blocks.
 *
 * - Never throws for bad content: unreadable rows are skipped and listed in
 *   `issues`; nothing readable gives `screens: []` (the API answers 400 with
 *   the issues, see `noReadableScreensError`).
 * - Throws `CsvRowLimitError` (an `invalid_request` AppError) when the file
 *   has more than `maxRows` data rows; parsing stops at the first row over.
 * - Ids are positional and deterministic: screens `s1`, `s2`, …; blocks
 *   `s1b1`, `s1b2`, …; items inside a block `o1`/`i1`/`p1`/…
 */
export function parseCourseCsv(
  input: Buffer | string,
  opts: ParseCourseCsvOptions = {},
): ParseCourseCsvResult {
  const maxRows = opts.maxRows ?? CSV_MAX_ROWS;
  if (!Number.isInteger(maxRows) || maxRows < 1) {
    throw new RangeError(`maxRows must be a positive integer; got ${maxRows}`);
  }

  let text: string;
  try {
    text = decodeCsv(input);
  } catch (err) {
    if (!(err instanceof CsvNotTextError)) throw err;
    return { screens: [], issues: [{ row: 1, code: 'not_text', message: err.message }], rowCount: 0 };
  }
  if (text.trim() === '') {
    return {
      screens: [],
      issues: [
        {
          row: 1,
          code: 'empty_file',
          message: 'The file is empty; line 1 must be a header row such as "screen,type,text"',
        },
      ],
      rowCount: 0,
    };
  }

  // A header this wide is not a course CSV; reading it would only build a huge list of unknown columns.
  const width = headerWidth(text, detectDelimiter(text));
  if (width > CSV_MAX_COLUMNS) {
    const line = text.slice(0, text.search(/[^\r\n]|$/)).split(/\r\n|\r|\n/).length;
    const message = `The header row has ${width.toLocaleString('en-US')} columns; a course CSV has at most ${CSV_MAX_COLUMNS}`;
    return { screens: [], issues: [{ row: line, code: 'too_many_columns', message }], rowCount: 0 };
  }

  let header: CsvRecord | undefined;
  const dataRows: CsvRecord[] = [];
  const read = readCsv(text, (record) => {
    if (isBlank(record.cells)) return;
    if (header === undefined) {
      header = record;
      return;
    }
    dataRows.push(record);
    if (dataRows.length > maxRows) throw new CsvRowLimitError(maxRows, record.line);
  });

  const issues: CsvIssue[] = read.errors.map((e) => ({ row: e.line, code: e.code, message: e.message }));
  const rowCount = dataRows.length;
  if (header === undefined) {
    issues.push({ row: 1, code: 'empty_file', message: 'The file has no header row' });
    return { screens: [], issues: sortIssues(issues), rowCount };
  }

  const columns = readHeader(header, issues);
  if (columns.screen === undefined) {
    return { screens: [], issues: sortIssues(issues), rowCount };
  }
  if (rowCount === 0) {
    issues.push({ row: header.line, code: 'no_rows', message: 'The file has a header row but no data rows' });
    return { screens: [], issues: sortIssues(issues), rowCount };
  }

  const drafts: ScreenDraft[] = [];
  let current: ScreenDraft | undefined;
  let lastTitle = '';
  for (const record of dataRows) {
    const row = cellsOf(record, columns);
    // An empty `screen` cell continues the screen of the row above.
    const title = row.screen !== '' ? row.screen : lastTitle;
    lastTitle = title;
    if (title === '') {
      issues.push({
        row: record.line,
        code: 'missing_screen',
        message: 'The first data row needs a screen title in the `screen` column',
      });
      continue;
    }
    if (current === undefined || current.title !== title) {
      current = { title, blocks: [] };
      drafts.push(current);
    }

    const filled = lastFilledCell(record.cells) + 1;
    if (filled > header.cells.length) {
      const shown = read.delimiter === '\t' ? 'tab' : `"${read.delimiter}"`;
      issues.push({
        row: record.line,
        code: 'too_many_columns',
        message: `This row has ${filled} cells but the header has ${header.cells.length} columns; put cells that contain ${shown} in double quotes`,
      });
      continue;
    }

    const type = resolveType(row.type);
    if (typeof type !== 'string') {
      issues.push({ row: record.line, ...type });
      continue;
    }
    const outcome = rowToBlock(type, row);
    if (!outcome.ok) {
      issues.push({ row: record.line, code: outcome.code, message: outcome.message });
      continue;
    }
    current.blocks.push({ type: outcome.type, fields: outcome.fields });
  }

  const screens: CsvScreen[] = drafts
    .filter((d) => d.blocks.length > 0)
    .map((d, si) => ({
      id: `s${si + 1}`,
      title: d.title,
      blocks: d.blocks.map((b, bi): CsvBlock => ({ id: `s${si + 1}b${bi + 1}`, type: b.type, ...b.fields })),
    }));
  return { screens, issues: sortIssues(issues), rowCount };
}

function readHeader(header: CsvRecord, issues: CsvIssue[]): ColumnIndex {
  const columns: ColumnIndex = {};
  header.cells.forEach((cell, i) => {
    const name = normalizeName(cell);
    if (name === '') return;
    if (!KNOWN_COLUMNS.has(name)) {
      issues.push({
        row: header.line,
        code: 'unknown_column',
        message: `Column "${cell}" is not part of the format and is ignored; known columns: ${CSV_COLUMNS.join(', ')}`,
      });
      return;
    }
    const column = name as CsvColumn;
    const first = columns[column];
    if (first !== undefined) {
      issues.push({
        row: header.line,
        code: 'duplicate_column',
        message: `Column "${name}" appears twice; only the first one (column ${first + 1}) is read`,
      });
      return;
    }
    columns[column] = i;
  });
  if (columns.screen === undefined) {
    issues.push({
      row: header.line,
      code: 'missing_column',
      message: `The header row has no "screen" column; line ${header.line} must name the columns, e.g. "screen,type,text,options,correct,explanation"`,
    });
  }
  return columns;
}

function lastFilledCell(cells: readonly string[]): number {
  for (let i = cells.length - 1; i >= 0; i--) if (cells[i].trim() !== '') return i;
  return -1;
}

function cellsOf(record: CsvRecord, columns: ColumnIndex): RowCells {
  const cell = (column: CsvColumn): string => {
    const at = columns[column];
    // One line-break convention inside cells, whatever the file used.
    return at === undefined ? '' : (record.cells[at] ?? '').replace(/\r\n?/g, '\n');
  };
  const row = { rawText: cell('text') } as { -readonly [K in keyof RowCells]: RowCells[K] };
  for (const column of CSV_COLUMNS) row[column] = cell(column).trim();
  return row;
}

function sortIssues(issues: CsvIssue[]): CsvIssue[] {
  // Array#sort is stable, so issues of one row keep their order.
  return issues.sort((a, b) => a.row - b.row);
}
