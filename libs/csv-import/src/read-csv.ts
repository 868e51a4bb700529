import { parse, type CsvError } from 'csv-parse/sync';
import { badTextReason } from '@lectern/errors';

export type CsvDelimiter = ',' | ';' | '\t';

/** One parsed record and the physical line (1-based) where it starts. */
export interface CsvRecord {
  line: number;
  cells: string[];
}

/** A stretch of the file csv-parse could not read (e.g. a quote never closed). */
export interface CsvReadError {
  line: number;
  code: 'unclosed_quote' | 'malformed_row' | 'too_many_columns';
  message: string;
}

export interface ReadCsvResult {
  delimiter: CsvDelimiter;
  records: CsvRecord[];
  errors: CsvReadError[];
}

/**
 * Called for each record in file order; throwing aborts the read (the row
 * limit uses this so a huge file is not parsed to the end).
 */
export type OnRecord = (record: CsvRecord) => void;

const UTF8 = new TextDecoder('utf-8', { fatal: true });

/**
 * Windows-1252 bytes 0x80–0x9F (the rest is Latin-1). Done by hand because
 * Node's TextDecoder('windows-1252') decodes this range as Latin-1 controls.
 */
const CP1252_HIGH =
  '\u20ac\u0081\u201a\u0192\u201e\u2026\u2020\u2021\u02c6\u2030\u0160\u2039\u0152\u008d\u017d\u008f' +
  '\u0090\u2018\u2019\u201c\u201d\u2022\u2013\u2014\u02dc\u2122\u0161\u203a\u0153\u009d\u017e\u0178';

function decodeWindows1252(bytes: Buffer): string {
  return bytes.toString('latin1').replace(/[\u0080-\u009f]/g, (ch) => CP1252_HIGH[ch.charCodeAt(0) - 0x80]);
}

/**
 * Limits on the width of a file. The format has 11 columns; a header wider than `CSV_MAX_COLUMNS` is
 * refused at once with one issue (it is not a course CSV), and a row with more than
 * `CSV_MAX_CELLS_PER_ROW` cells, empty ones included, is skipped with one issue. Both bound the work
 * and the answer whatever the file holds (docs/csv-import.md).
 */
export const CSV_MAX_COLUMNS = 100;
export const CSV_MAX_CELLS_PER_ROW = 1000;

/** The file cannot be read as text at all: the import is refused with this one reason. */
export class CsvNotTextError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CsvNotTextError';
  }
}

/**
 * Bytes → text. UTF-8 is expected; a file that is not valid UTF-8 is read as
 * Windows-1252 rather than filled with U+FFFD. UTF-16 with a byte order mark
 * (Excel's "Unicode text") is decoded; a leading BOM is dropped. Bytes that are
 * not text — NUL bytes (binary files, UTF-16 without a BOM) — throw
 * `CsvNotTextError`: no encoding guess would make them a course.
 */
export function decodeCsv(input: Buffer | string): string {
  let text: string;
  if (typeof input === 'string') {
    text = input;
  } else if (input[0] === 0xff && input[1] === 0xfe) {
    text = new TextDecoder('utf-16le').decode(input.subarray(2));
  } else if (input[0] === 0xfe && input[1] === 0xff) {
    text = new TextDecoder('utf-16be').decode(input.subarray(2));
  } else {
    if (input.includes(0)) {
      throw new CsvNotTextError(
        'The file is not text: it contains NUL bytes (a binary file, or UTF-16 without a byte order mark); save it as CSV UTF-8',
      );
    }
    try {
      text = UTF8.decode(input);
    } catch {
      text = decodeWindows1252(input);
    }
  }
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  const bad = badTextReason(text);
  if (bad)
    throw new CsvNotTextError(
      `The file is not readable text: ${bad.replace('must not contain', 'it contains')}`,
    );
  return text;
}

/** Cells in the header line (the first non-blank line) for `delimiter`, counted outside quotes. */
export function headerWidth(text: string, delimiter: CsvDelimiter): number {
  let i = 0;
  while (i < text.length && (text[i] === '\n' || text[i] === '\r')) i++;
  let quoted = false;
  let n = 1;
  for (; i < text.length; i++) {
    const ch = text[i];
    if (ch === '"') quoted = !quoted;
    else if (!quoted && (ch === '\n' || ch === '\r')) break;
    else if (!quoted && ch === delimiter) n++;
  }
  return n;
}

/**
 * The delimiter is whichever of `,` `;` and tab occurs most often (outside
 * quotes) in the header line, the first non-blank line. Ties and a one-column
 * header fall back in the order comma, semicolon, tab.
 */
export function detectDelimiter(text: string): CsvDelimiter {
  const counts: Record<CsvDelimiter, number> = { ',': 0, ';': 0, '\t': 0 };
  let i = 0;
  while (i < text.length && (text[i] === '\n' || text[i] === '\r')) i++;
  let quoted = false;
  for (; i < text.length; i++) {
    const ch = text[i];
    if (ch === '"') quoted = !quoted;
    else if (!quoted && (ch === '\n' || ch === '\r')) break;
    else if (!quoted && (ch === ',' || ch === ';' || ch === '\t')) counts[ch]++;
  }
  let best: CsvDelimiter = ',';
  for (const d of [';', '\t'] as const) if (counts[d] > counts[best]) best = d;
  return best;
}

/**
 * Tracks physical line numbers by byte offset. csv-parse reports the byte
 * offset where each record ends (`info.bytes`); its own `lines` counter is the
 * end line and counts a CRLF inside a quoted cell twice, so it is not used.
 */
class LineIndex {
  private pos = 0;
  private line = 1;

  constructor(private readonly buf: Buffer) {}

  /** Line number of the first non-blank line at or after `offset` (offsets only move forward). */
  lineAt(offset: number): number {
    let start = offset;
    while (start < this.buf.length && (this.buf[start] === 0x0a || this.buf[start] === 0x0d)) start++;
    for (; this.pos < start; this.pos++) {
      const b = this.buf[this.pos];
      // LF, CRLF (counted at its LF) and a lone CR each end a line.
      if (b === 0x0a || (b === 0x0d && this.buf[this.pos + 1] !== 0x0a)) this.line++;
    }
    return this.line;
  }
}

/**
 * Start of the first line after `offset` that does not begin inside a quoted cell (line breaks inside
 * quotes belong to the bad row); `buf.length` when there is none. csv-parse reports a bad row's error at
 * the start of the offending cell.
 */
function nextLineStart(buf: Buffer, offset: number): number {
  let quoted = false;
  for (let i = Math.max(0, offset); i < buf.length; i++) {
    const b = buf[i];
    if (b === 0x22) quoted = !quoted;
    else if (!quoted && b === 0x0a) return i + 1;
    else if (!quoted && b === 0x0d) return buf[i + 1] === 0x0a ? i + 2 : i + 1;
  }
  return buf.length;
}

/** Thrown from csv-parse's callbacks to stop it after a malformed row; the read resumes on the next line. */
const RESTART = Symbol('restart');

/**
 * Parses the decoded text with csv-parse, returning every record with its start line.
 *
 * A malformed row (a stray character after a closing quote, …) is reported and skipped, and reading
 * resumes at the next line: csv-parse's own recovery can lose every later row. Only a quote that is
 * never closed ends the read, since everything after it is inside that quote.
 */
export function readCsv(text: string, onRecord?: OnRecord): ReadCsvResult {
  const delimiter = detectDelimiter(text);
  const buf = Buffer.from(text, 'utf8');
  const lines = new LineIndex(buf);
  const records: CsvRecord[] = [];
  const errors: CsvReadError[] = [];
  let base = 0;
  let lastEnd = 0;

  while (base < buf.length) {
    let restartAt = buf.length;
    try {
      parse(buf.subarray(base), {
        delimiter,
        // Cells keep inner whitespace (code, poems); the space around a cell and
        // around its quotes (`a, "b"`) is not part of it.
        trim: true,
        relax_quotes: true,
        relax_column_count: true,
        skip_empty_lines: true,
        skip_records_with_error: true,
        on_record: (cells, ctx) => {
          const line = lines.lineAt(lastEnd);
          lastEnd = base + ctx.bytes;
          if (cells.length > CSV_MAX_CELLS_PER_ROW) {
            errors.push({
              line,
              code: 'too_many_columns',
              message: `This row has ${cells.length.toLocaleString('en-US')} cells; a row may have at most ${CSV_MAX_CELLS_PER_ROW.toLocaleString('en-US')}`,
            });
            return null;
          }
          const record: CsvRecord = { line, cells };
          records.push(record);
          onRecord?.(record);
          return null;
        },
        on_skip: (err: CsvError | undefined) => {
          const line = lines.lineAt(lastEnd);
          if (err?.code === 'CSV_QUOTE_NOT_CLOSED') {
            errors.push({
              line,
              code: 'unclosed_quote',
              message:
                'A quoted cell that starts on this row is never closed, so the rest of the file could not be read',
            });
            return undefined;
          }
          // csv-parse's "at line N" counts from where this pass started; the row is the true line.
          const reason = (err?.message ?? 'malformed CSV').replace(/ at line \d+$/, '');
          errors.push({ line, code: 'malformed_row', message: `This row could not be read: ${reason}` });
          const at = typeof err?.bytes === 'number' ? base + err.bytes : lastEnd;
          restartAt = nextLineStart(buf, Math.max(at, lastEnd));
          throw RESTART;
        },
      });
    } catch (err) {
      if (err !== RESTART) throw err;
    }
    base = restartAt;
    lastEnd = Math.max(lastEnd, restartAt);
  }
  return { delimiter, records, errors };
}
