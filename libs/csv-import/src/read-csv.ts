import { parse, type CsvError } from 'csv-parse/sync';

export type CsvDelimiter = ',' | ';' | '\t';

/** One parsed record and the physical line (1-based) where it starts. */
export interface CsvRecord {
  line: number;
  cells: string[];
}

/** A stretch of the file csv-parse could not read (e.g. a quote never closed). */
export interface CsvReadError {
  line: number;
  code: 'unclosed_quote' | 'malformed_row';
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
 * Bytes → text. UTF-8 is expected; a file that is not valid UTF-8 is read as
 * Windows-1252 rather than filled with U+FFFD. A leading BOM is dropped.
 */
export function decodeCsv(input: Buffer | string): string {
  let text: string;
  if (typeof input === 'string') {
    text = input;
  } else {
    try {
      text = UTF8.decode(input);
    } catch {
      text = decodeWindows1252(input);
    }
  }
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
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

/** Parses the decoded text with csv-parse, returning every record with its start line. */
export function readCsv(text: string, onRecord?: OnRecord): ReadCsvResult {
  const delimiter = detectDelimiter(text);
  const buf = Buffer.from(text, 'utf8');
  const lines = new LineIndex(buf);
  const records: CsvRecord[] = [];
  const errors: CsvReadError[] = [];
  let lastEnd = 0;

  parse(buf, {
    delimiter,
    // Cells keep inner whitespace (code, poems); the space around a cell and
    // around its quotes (`a, "b"`) is not part of it.
    trim: true,
    relax_quotes: true,
    relax_column_count: true,
    skip_empty_lines: true,
    skip_records_with_error: true,
    on_record: (cells, ctx) => {
      const record: CsvRecord = { line: lines.lineAt(lastEnd), cells };
      lastEnd = ctx.bytes;
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
      } else {
        errors.push({
          line,
          code: 'malformed_row',
          message: `This row could not be read: ${err?.message ?? 'malformed CSV'}`,
        });
      }
      if (typeof err?.bytes === 'number') lastEnd = Math.max(lastEnd, err.bytes);
      return undefined;
    },
  });
  return { delimiter, records, errors };
}
