import {
  BLOCK_TYPES,
  isBlockType,
  MAX_STACK_CARDS,
  TIMED_QUESTION_SECONDS,
  type BlockType,
} from '@lectern/courses';
import type { CsvIssueCode } from './types.js';

/** Columns the format reads; any other header is ignored (with an `unknown_column` issue). */
export const CSV_COLUMNS = [
  'screen',
  'type',
  'text',
  'options',
  'correct',
  'explanation',
  'back',
  'seconds',
  'url',
  'caption',
  'language',
] as const;

export type CsvColumn = (typeof CSV_COLUMNS)[number];

/**
 * The cells of one data row by column, trimmed; an absent column reads as ''.
 * `rawText` is the `text` cell untrimmed, for code whose indentation matters.
 */
export type RowCells = Readonly<Record<CsvColumn, string>> & { readonly rawText: string };

/**
 * Block types that have no flat CSV form (coordinates, branches, two-sided
 * tables, per-slide media). They are real types, so they get
 * `unsupported_type`, not `unknown_type`: build them in the editor.
 */
export const CSV_UNSUPPORTED_TYPES = [
  'hotspot',
  'scenario',
  'compare',
  'slideshow',
  'video_chapters',
] as const;

/** Friendlier spellings accepted in the `type` column. */
export const CSV_TYPE_ALIASES: Readonly<Record<string, BlockType>> = {
  paragraph: 'text',
  single_choice: 'quiz_single_choice',
  multiple_choice: 'quiz_multiple_choice',
  true_false: 'quiz_true_false',
};

/** Most items any list-valued block takes from one `options` cell. */
export const CSV_MAX_ITEMS = 100;
/** `seconds` of a timed_question whose `seconds` cell is empty (the block requires a clock). */
export const CSV_DEFAULT_SECONDS = 30;

export type Fields = Record<string, unknown>;
export type RowOutcome =
  { ok: true; type: BlockType; fields: Fields } | { ok: false; code: CsvIssueCode; message: string };

class RowProblem extends Error {
  constructor(
    readonly code: CsvIssueCode,
    message: string,
  ) {
    super(message);
  }
}

/** `Quiz Single-Choice` → `quiz_single_choice`; also used for header names. */
export function normalizeName(raw: string): string {
  return raw
    .trim()
    .toLowerCase()
    .replace(/[\s-]+/g, '_');
}

/** A cell as quoted back in a message: a type is a word, and a megabyte cell must not come back whole per row. */
const shown = (cell: string) => (cell.length > 80 ? `${cell.slice(0, 80)}…` : cell);

export function resolveType(
  cell: string,
): BlockType | { code: 'unknown_type' | 'unsupported_type'; message: string } {
  const name = normalizeName(cell);
  if (name === '') return 'text';
  const type = CSV_TYPE_ALIASES[name] ?? name;
  if (!isBlockType(type)) {
    const hint = closestType(name);
    return {
      code: 'unknown_type',
      message: `Unknown block type "${shown(cell.trim())}"${hint === undefined ? '' : ` (did you mean "${hint}"?)`}; use one of: ${BLOCK_TYPES.join(', ')}`,
    };
  }
  if ((CSV_UNSUPPORTED_TYPES as readonly string[]).includes(type)) {
    return {
      code: 'unsupported_type',
      message: `Block type "${type}" cannot be imported from CSV; add it in the editor after the import`,
    };
  }
  return type;
}

/** Builds the type-specific fields of one row, or says why the row is unreadable. */
export function rowToBlock(type: BlockType, row: RowCells): RowOutcome {
  try {
    return { ok: true, type, fields: buildFields(type, row) };
  } catch (err) {
    if (err instanceof RowProblem) return { ok: false, code: err.code, message: err.message };
    throw err;
  }
}

function buildFields(type: BlockType, row: RowCells): Fields {
  switch (type) {
    case 'heading':
    case 'text':
    case 'callout':
    case 'instructor_note':
      return { text: requireText(type, row) };
    case 'markdown':
      return { markdown: requireText(type, row) };
    case 'milestone':
      return { title: requireText(type, row, 'its title') };
    case 'quote':
      return withOptional({ text: requireText(type, row) }, { author: row.caption });
    case 'code':
      return withOptional(
        { code: requireCode(row) },
        { language: row.language.toLowerCase(), caption: row.caption },
      );
    case 'results':
      return withOptional({}, { title: row.text });
    case 'divider':
    case 'spacer':
      return {};
    case 'quiz_single_choice':
    case 'quiz_multiple_choice':
    case 'timed_question':
      return choiceQuestion(type, row);
    case 'quiz_true_false':
      return withOptional(
        { statement: requireText(type, row, 'the statement'), correct: parseTrueFalse(row.correct) },
        { explanation: row.explanation },
      );
    case 'fill_in_blank':
      return fillInBlank(row);
    case 'flashcard': {
      const front = requireText(type, row, 'the front of the card');
      const back = row.back !== '' ? row.back : row.explanation;
      if (back === '') {
        throw new RowProblem(
          'missing_back',
          'A flashcard needs a back: fill the `back` column (or `explanation`)',
        );
      }
      return { front, back };
    }
    case 'stack': {
      const items = requireList(type, row, 1);
      if (items.length > MAX_STACK_CARDS) {
        throw new RowProblem(
          'too_many_items',
          `A stack holds at most ${MAX_STACK_CARDS} cards; this row has ${items.length}`,
        );
      }
      return { cards: items.map((item, i) => titledItem(`c${i + 1}`, item)) };
    }
    case 'poll':
      return {
        question: requireText(type, row, 'the question'),
        options: requireList(type, row, 2).map((text, i) => ({ id: `o${i + 1}`, text })),
      };
    case 'reflection':
      return { prompt: requireText(type, row, 'the prompt') };
    case 'ranking':
      return withOptional(
        {
          question: requireText(type, row, 'the question'),
          items: requireList(type, row, 2).map((text, i) => ({ id: `i${i + 1}`, text })),
        },
        { explanation: row.explanation },
      );
    case 'checklist':
      return { items: requireList(type, row, 2).map((text, i) => ({ id: `i${i + 1}`, text })) };
    case 'steps':
      return { items: requireList(type, row, 2).map((item, i) => titledItem(`i${i + 1}`, item)) };
    case 'timeline':
      return {
        items: requirePairs(type, row, 2, 'date=title').map(([date, title], i) => ({
          id: `i${i + 1}`,
          date,
          title,
        })),
      };
    case 'accordion':
      return {
        items: requirePairs(type, row, 2, 'title=text').map(([title, text], i) => ({
          id: `i${i + 1}`,
          title,
          text,
        })),
      };
    case 'match':
      return withOptional(
        {
          pairs: requirePairs(type, row, 2, 'left=right').map(([left, right], i) => ({
            id: `p${i + 1}`,
            left,
            right,
          })),
        },
        { prompt: row.text, explanation: row.explanation },
      );
    case 'glossary':
      return {
        terms: requirePairs(type, row, 1, 'term=definition').map(([term, definition], i) => ({
          id: `t${i + 1}`,
          term,
          definition,
        })),
      };
    case 'spec_table':
      return {
        rows: requirePairs(type, row, 1, 'label=value').map(([label, value], i) => ({
          id: `r${i + 1}`,
          label,
          value,
        })),
      };
    case 'image':
      return withOptional({ url: requireUrl(type, row), alt: row.text }, { caption: row.caption });
    case 'video':
    case 'audio':
      return withOptional(
        { url: requireUrl(type, row) },
        { caption: row.caption !== '' ? row.caption : row.text },
      );
    case 'embed':
      return withOptional({ url: requireUrl(type, row) }, { title: row.text });
    case 'resource':
      return withOptional(
        { title: requireText(type, row, 'the resource title'), url: requireUrl(type, row) },
        { description: row.explanation },
      );
    case 'button': {
      const label = requireText(type, row, 'the button label');
      // Without a URL the button moves the learner to the next screen.
      return row.url === '' ? { label, action: 'next' } : { label, action: 'url', url: checkUrl(row.url) };
    }
    case 'hotspot':
    case 'scenario':
    case 'compare':
    case 'slideshow':
    case 'video_chapters':
      // resolveType stops these first; kept so a new type cannot slip through unmapped.
      throw new RowProblem('unsupported_type', `Block type "${type}" cannot be imported from CSV`);
  }
}

/** `title=text` → both; a plain item is the text alone. */
function titledItem(id: string, item: string): Fields {
  const pair = splitPair(item);
  return pair === undefined ? { id, text: item } : { id, title: pair[0], text: pair[1] };
}

/** Adds the optional fields whose cell is non-empty. */
function withOptional(fields: Fields, optional: Record<string, string>): Fields {
  for (const [key, value] of Object.entries(optional)) if (value !== '') fields[key] = value;
  return fields;
}

function requireText(type: BlockType, row: RowCells, what = 'its text'): string {
  if (row.text === '')
    throw new RowProblem('missing_text', `A ${type} block needs ${what} in the \`text\` column`);
  return row.text;
}

/** Code keeps its indentation; only blank lines around it go. */
function requireCode(row: RowCells): string {
  const code = row.rawText.replace(/^(?:[ \t]*\r?\n)+/, '').trimEnd();
  if (code === '') throw new RowProblem('missing_text', 'A code block needs the code in the `text` column');
  return code;
}

/**
 * `a|b|c` → items. `\|` is a literal bar; trailing empty items (`a|b|`) are
 * dropped; an empty item in the middle is refused, since it would shift the
 * numbers `correct` refers to.
 */
export function splitList(cell: string): string[] {
  const items: string[] = [];
  let current = '';
  for (let i = 0; i < cell.length; i++) {
    const ch = cell[i];
    if (ch === '\\' && cell[i + 1] === '|') {
      current += '|';
      i++;
    } else if (ch === '|') {
      items.push(current.trim());
      current = '';
    } else {
      current += ch;
    }
  }
  items.push(current.trim());
  while (items.length > 0 && items[items.length - 1] === '') items.pop();
  return items;
}

function requireList(type: BlockType, row: RowCells, min: number): string[] {
  const items = splitList(row.options);
  if (items.length === 0) {
    throw new RowProblem(
      'missing_options',
      `A ${type} block needs items in the \`options\` column, separated by |`,
    );
  }
  const empty = items.indexOf('');
  if (empty !== -1) throw new RowProblem('bad_options', `Item ${empty + 1} in \`options\` is empty`);
  if (items.length < min) {
    throw new RowProblem(
      'missing_options',
      `A ${type} block needs at least ${min} items in \`options\`; found ${items.length}`,
    );
  }
  if (items.length > CSV_MAX_ITEMS) {
    throw new RowProblem(
      'too_many_items',
      `At most ${CSV_MAX_ITEMS} items fit in \`options\`; found ${items.length}`,
    );
  }
  return items;
}

/** `left=right`, split at the first `=`; both sides non-empty. */
function splitPair(item: string): [string, string] | undefined {
  const at = item.indexOf('=');
  if (at === -1) return undefined;
  const left = item.slice(0, at).trim();
  const right = item.slice(at + 1).trim();
  return left === '' || right === '' ? undefined : [left, right];
}

function requirePairs(type: BlockType, row: RowCells, min: number, shape: string): [string, string][] {
  return requireList(type, row, min).map((item, i) => {
    const pair = splitPair(item);
    if (pair === undefined) {
      throw new RowProblem(
        'bad_options',
        `Item ${i + 1} in \`options\` must look like "${shape}"; got "${item}"`,
      );
    }
    return pair;
  });
}

function choiceQuestion(type: BlockType, row: RowCells): Fields {
  const question = requireText(type, row, 'the question');
  const options = requireList(type, row, 2);
  const correct = parseCorrectIndexes(row.correct, options.length, type !== 'quiz_multiple_choice');
  const fields: Fields = {
    question,
    options: options.map((text, i) => ({ id: `o${i + 1}`, text, correct: correct.has(i + 1) })),
  };
  if (type === 'timed_question')
    fields.seconds = row.seconds === '' ? CSV_DEFAULT_SECONDS : parseSeconds(row.seconds);
  return withOptional(fields, { explanation: row.explanation });
}

/** `2` or `1|3` (commas, semicolons and spaces also separate) → 1-based option numbers. */
export function parseCorrectIndexes(cell: string, optionCount: number, exactlyOne: boolean): Set<number> {
  if (cell === '') {
    throw new RowProblem(
      'missing_correct',
      'Mark the right answer in `correct` with its option number (1 = first option; several separated by |)',
    );
  }
  const parts = cell.split(/[|,;\s]+/).filter((p) => p !== '');
  const picked = new Set<number>();
  for (const part of parts) {
    const n = /^\d+$/.test(part) ? Number(part) : NaN;
    if (!Number.isInteger(n) || n < 1 || n > optionCount) {
      throw new RowProblem(
        'bad_correct',
        `\`correct\` must be option numbers from 1 to ${optionCount}; got "${part}"`,
      );
    }
    if (picked.has(n)) throw new RowProblem('bad_correct', `Option ${n} is listed twice in \`correct\``);
    picked.add(n);
  }
  if (exactlyOne && picked.size !== 1) {
    throw new RowProblem(
      'bad_correct',
      `This question has exactly one right answer; \`correct\` lists ${picked.size}`,
    );
  }
  return picked;
}

const TRUE_WORDS = new Set(['true', 'yes']);
const FALSE_WORDS = new Set(['false', 'no']);

function parseTrueFalse(cell: string): boolean {
  const word = cell.trim().toLowerCase();
  if (word === '')
    throw new RowProblem('missing_correct', 'A true/false question needs `true` or `false` in `correct`');
  if (TRUE_WORDS.has(word)) return true;
  if (FALSE_WORDS.has(word)) return false;
  throw new RowProblem(
    'bad_correct',
    `\`correct\` of a true/false question must be true or false; got "${cell}"`,
  );
}

/** Three or more underscores mark the blank. */
const BLANK = /_{3,}/g;

function fillInBlank(row: RowCells): Fields {
  const text = requireText('fill_in_blank', row, 'a sentence with a ___ blank');
  const blanks = text.match(BLANK)?.length ?? 0;
  if (blanks !== 1) {
    throw new RowProblem(
      'bad_blank',
      `A fill_in_blank block needs exactly one blank (three or more underscores, ___) in \`text\`; found ${blanks}`,
    );
  }
  if (/\{\{.*?\}\}/s.test(text)) {
    throw new RowProblem(
      'bad_blank',
      'A fill_in_blank text must not contain {{ }}: that is how blanks are stored',
    );
  }
  const answers = requireList('fill_in_blank', row, 1);
  // The catalogue marks a blank as {{<blank id>}} in the text.
  return withOptional(
    { text: text.replace(BLANK, '{{b1}}'), blanks: [{ id: 'b1', answers }] },
    { explanation: row.explanation },
  );
}

function parseSeconds(cell: string): number {
  const n = /^\d+$/.test(cell) ? Number(cell) : NaN;
  if (!Number.isInteger(n) || n < TIMED_QUESTION_SECONDS.min || n > TIMED_QUESTION_SECONDS.max) {
    throw new RowProblem(
      'bad_seconds',
      `\`seconds\` must be a whole number from ${TIMED_QUESTION_SECONDS.min} to ${TIMED_QUESTION_SECONDS.max}; got "${cell}"`,
    );
  }
  return n;
}

function requireUrl(type: BlockType, row: RowCells): string {
  if (row.url === '')
    throw new RowProblem('missing_url', `A ${type} block needs an http(s) address in the \`url\` column`);
  return checkUrl(row.url);
}

function checkUrl(cell: string): string {
  let url: URL | undefined;
  try {
    url = new URL(cell);
  } catch {
    url = undefined;
  }
  if (url === undefined || (url.protocol !== 'http:' && url.protocol !== 'https:')) {
    throw new RowProblem('bad_url', `\`url\` must be an http:// or https:// address; got "${cell}"`);
  }
  return cell;
}

/** The block type within edit distance 2 of a misspelling, if one is unambiguous enough to suggest. */
function closestType(name: string): BlockType | undefined {
  let best: BlockType | undefined;
  let bestDistance = 3;
  for (const type of BLOCK_TYPES) {
    // Lengths further apart than the best distance cannot beat it; without this a 5 MB type cell cost
    // 39 × 5M × 20 steps (seconds of a blocked event loop) to suggest nothing.
    if (Math.abs(name.length - type.length) >= bestDistance) continue;
    const d = editDistance(name, type);
    if (d < bestDistance) {
      best = type;
      bestDistance = d;
    }
  }
  return best;
}

function editDistance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    for (let j = 1; j <= b.length; j++) {
      cur[j] = Math.min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    prev = cur;
  }
  return prev[b.length];
}
