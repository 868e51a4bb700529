import type { Issue } from '@lectern/errors';
import {
  blockFieldsOf,
  isBlockType,
  MAX_STACK_CARDS,
  type Block,
  type BlockData,
  type BlockType,
  type Screen,
} from '@lectern/contracts';
import { isFilled, isRecord } from './util.js';
import { blockFieldIssues, IdRegistry, unknownTypeMessage, type Path } from './validate.js';

/**
 * The strict check for machine-made content (generation, imports): on top of
 * the lenient write rules, every required field is present and the semantic
 * rules hold. A malformed block is reported, never repaired.
 */

export interface StrictOptions {
  /** Types accepted; default all 39. Generation passes `GENERATABLE_TYPES`. */
  allowedTypes?: readonly BlockType[];
}

/** One thing the strict check left out: a block (`blockId` set) or a whole screen (`blockId` null). */
export interface DroppedItem {
  screenId: string;
  blockId: string | null;
  issues: Issue[];
}

export interface StrictResult {
  /** The screens that remain, each with at least one block; blocks are kept exactly as given. */
  screens: Screen[];
  dropped: DroppedItem[];
}

/** Collects issues for one block; paths are relative to the block. */
class Rules {
  readonly issues: Issue[] = [];

  add(code: string, path: Path, message: string): void {
    this.issues.push({ code, path, message });
  }

  /** A non-blank string at `path`. */
  text(value: unknown, path: Path, what = String(path[path.length - 1])): boolean {
    if (isFilled(value)) return true;
    this.add('required', path, `${what} is required`);
    return false;
  }

  number(value: unknown, path: Path): boolean {
    if (typeof value === 'number' && Number.isFinite(value)) return true;
    this.add('required', path, `${String(path[path.length - 1])} is required`);
    return false;
  }

  httpUrl(value: unknown, path: Path): void {
    if (!this.text(value, path)) return;
    if (!isHttpUrl(value as string)) this.add('invalid_url', path, 'must be an absolute http(s) URL');
  }

  /** An array of at least `min` entries; returns it (or [] when absent). */
  list<T>(value: T[] | undefined, field: string, min: number, noun: string): T[] {
    const items = value ?? [];
    if (items.length < min) {
      this.add(
        'too_few_items',
        [field],
        `needs at least ${min} ${noun}${min === 1 ? '' : 's'}, has ${items.length}`,
      );
    }
    return items;
  }

  /** Every item has a non-blank id, unique within the list. */
  ids(items: readonly { id?: string }[], field: string): void {
    const seen = new Set<string>();
    items.forEach((it, i) => {
      if (!this.text(it.id, [field, i, 'id'], 'item id')) return;
      const id = it.id as string;
      if (seen.has(id)) this.add('duplicate_id', [field, i, 'id'], `item id "${id}" repeats within ${field}`);
      seen.add(id);
    });
  }

  /** Every item has each of `keys` filled. */
  itemTexts(items: readonly object[], field: string, keys: readonly string[]): void {
    items.forEach((it, i) => {
      for (const key of keys) this.text((it as Record<string, unknown>)[key], [field, i, key], key);
    });
  }

  /** Every item has at least one of `keys` filled. */
  itemAnyText(items: readonly object[], field: string, keys: readonly string[]): void {
    items.forEach((it, i) => {
      const rec = it as Record<string, unknown>;
      if (!keys.some((k) => isFilled(rec[k]))) {
        this.add('required', [field, i, keys[0]], `${keys.join(' or ')} is required`);
      }
    });
  }

  /** Choice options: ids, texts, a minimum count and a correct-answer count rule. */
  choices(
    options: { id?: string; text?: string; correct?: boolean }[] | undefined,
    rule: 'exactly_one' | 'at_least_one' | 'none',
  ): void {
    const list = this.list(options, 'options', 2, 'option');
    this.ids(list, 'options');
    this.itemTexts(list, 'options', ['text']);
    const correct = list.filter((o) => o.correct === true).length;
    if (rule === 'exactly_one' && correct !== 1) {
      this.add('wrong_correct_count', ['options'], `needs exactly one correct option, has ${correct}`);
    }
    if (rule === 'at_least_one' && correct < 1) {
      this.add('wrong_correct_count', ['options'], 'needs at least one correct option, has none');
    }
  }
}

function isLocale(value: string): boolean {
  try {
    return Intl.getCanonicalLocales(value).length === 1;
  } catch {
    return false;
  }
}

function isHttpUrl(value: string): boolean {
  try {
    const u = new URL(value);
    return u.protocol === 'http:' || u.protocol === 'https:';
  } catch {
    return false;
  }
}

/** `{{id}}` markers in fill-in-blank text; whitespace inside the braces is ignored. */
export function blankMarkers(text: string): string[] {
  return [...text.matchAll(/\{\{\s*([^{}]*?)\s*\}\}/g)].map((m) => m[1]);
}

type Checker<T extends BlockType> = (d: BlockData<T>, r: Rules) => void;

/** A list of items with ids: at least `min` of them, each with all (or any) of `texts` filled. */
const listItems =
  (field: string, min: number, noun: string, need: 'all' | 'any', texts: string[]) =>
  (d: Record<string, unknown>, r: Rules): void => {
    const items = r.list(d[field] as { id?: string }[] | undefined, field, min, noun);
    r.ids(items, field);
    if (need === 'all') r.itemTexts(items, field, texts);
    else r.itemAnyText(items, field, texts);
  };

const RULES: { [T in BlockType]: Checker<T> } = {
  heading: (d, r) => void r.text(d.text, ['text']),
  text: (d, r) => void r.text(d.text, ['text']),
  image: (d, r) => void r.text(d.url, ['url']),
  video: (d, r) => {
    r.text(d.url, ['url']);
    // Caption tracks: an https WebVTT file (uploads take no text files), a language, a name for the menu.
    const tracks = d.tracks ?? [];
    tracks.forEach((t, i) => {
      if (r.text(t.src, ['tracks', i, 'src'], 'src') && !/^https:\/\//i.test(t.src as string))
        r.add('invalid_url', ['tracks', i, 'src'], 'must be an absolute https URL of a WebVTT file');
      if (r.text(t.srclang, ['tracks', i, 'srclang'], 'srclang') && !isLocale(t.srclang as string))
        r.add('invalid_locale', ['tracks', i, 'srclang'], 'must be a BCP-47 language tag');
      r.text(t.label, ['tracks', i, 'label'], 'label');
    });
    if (tracks.filter((t) => t.default === true).length > 1)
      r.add('too_many_defaults', ['tracks'], 'at most one track can be the default');
  },
  audio: (d, r) => void r.text(d.url, ['url']),
  embed: (d, r) => r.httpUrl(d.url, ['url']),
  button: (d, r) => {
    r.text(d.label, ['label']);
    if (d.action === 'url') r.httpUrl(d.url, ['url']);
    if (d.action === 'screen') r.text(d.screenId, ['screenId']);
  },
  divider: () => undefined,
  spacer: () => undefined,
  quiz_single_choice: (d, r) => {
    r.text(d.question, ['question']);
    r.choices(d.options, 'exactly_one');
  },
  quiz_multiple_choice: (d, r) => {
    r.text(d.question, ['question']);
    r.choices(d.options, 'at_least_one');
  },
  quiz_true_false: (d, r) => {
    r.text(d.statement, ['statement']);
    if (typeof d.correct !== 'boolean') r.add('required', ['correct'], 'correct (true or false) is required');
  },
  fill_in_blank: (d, r) => {
    const hasText = r.text(d.text, ['text']);
    const blanks = r.list(d.blanks, 'blanks', 1, 'blank');
    r.ids(blanks, 'blanks');
    blanks.forEach((b, i) => {
      if (!(b.answers ?? []).some(isFilled))
        r.add('required', ['blanks', i, 'answers'], 'a blank needs at least one accepted answer');
    });
    if (!hasText) return;
    const markers = blankMarkers(d.text as string);
    for (const b of blanks) {
      if (!isFilled(b.id)) continue;
      const n = markers.filter((m) => m === b.id).length;
      if (n !== 1)
        r.add('blank_marker', ['text'], `text must contain {{${b.id}}} exactly once, has it ${n} times`);
    }
    const known = new Set(blanks.map((b) => b.id));
    for (const m of new Set(markers)) {
      if (!known.has(m)) r.add('blank_marker', ['text'], `{{${m}}} in text names no blank`);
    }
  },
  flashcard: (d, r) => {
    r.text(d.front, ['front']);
    r.text(d.back, ['back']);
  },
  match: (d, r) => {
    const pairs = r.list(d.pairs, 'pairs', 2, 'pair');
    r.ids(pairs, 'pairs');
    r.itemTexts(pairs, 'pairs', ['left', 'right']);
  },
  hotspot: (d, r) => {
    r.text(d.image, ['image']);
    const spots = r.list(d.spots, 'spots', 1, 'spot');
    r.ids(spots, 'spots');
    spots.forEach((s, i) => {
      r.number(s.x, ['spots', i, 'x']);
      r.number(s.y, ['spots', i, 'y']);
      r.number(s.radius, ['spots', i, 'radius']);
    });
    if (!spots.some((s) => s.correct === true))
      r.add('wrong_correct_count', ['spots'], 'needs at least one correct spot');
  },
  results: () => undefined,
  stack: (d, r) => {
    const cards = r.list(d.cards, 'cards', 1, 'card');
    if (cards.length > MAX_STACK_CARDS)
      r.add('too_many_items', ['cards'], `a stack holds at most ${MAX_STACK_CARDS} cards`);
    r.ids(cards, 'cards');
    r.itemAnyText(cards, 'cards', ['title', 'text']);
  },
  steps: listItems('items', 2, 'item', 'any', ['title', 'text']),
  timeline: listItems('items', 2, 'item', 'all', ['date', 'title']),
  accordion: listItems('items', 2, 'item', 'all', ['title', 'text']),
  slideshow: listItems('slides', 1, 'slide', 'all', ['image']),
  callout: (d, r) => void r.text(d.text, ['text']),
  code: (d, r) => void r.text(d.code, ['code']),
  checklist: listItems('items', 2, 'item', 'all', ['text']),
  compare: (d, r) => {
    for (const side of ['left', 'right'] as const) {
      const s = d[side];
      if (!s) {
        r.add('required', [side], `${side} is required`);
        continue;
      }
      r.text(s.title, [side, 'title'], `${side}.title`);
      const points = s.points ?? [];
      if (points.length < 1) r.add('too_few_items', [side, 'points'], `${side} needs at least 1 point`);
      points.forEach((p, i) => r.text(p, [side, 'points', i], 'point'));
    }
  },
  quote: (d, r) => void r.text(d.text, ['text']),
  spec_table: (d, r) => {
    const rows = r.list(d.rows, 'rows', 1, 'row');
    r.itemTexts(rows, 'rows', ['label', 'value']);
  },
  resource: (d, r) => {
    r.text(d.title, ['title']);
    r.text(d.url, ['url']);
  },
  instructor_note: (d, r) => void r.text(d.text, ['text']),
  poll: (d, r) => {
    r.text(d.question, ['question']);
    r.choices(d.options, 'none');
  },
  reflection: (d, r) => void r.text(d.prompt, ['prompt']),
  ranking: (d, r) => {
    r.text(d.question, ['question']);
    const items = r.list(d.items, 'items', 2, 'item');
    r.ids(items, 'items');
    r.itemTexts(items, 'items', ['text']);
  },
  scenario: (d, r) => {
    r.text(d.situation, ['situation']);
    const choices = r.list(d.choices, 'choices', 2, 'choice');
    r.ids(choices, 'choices');
    r.itemTexts(choices, 'choices', ['text']);
  },
  timed_question: (d, r) => {
    r.text(d.question, ['question']);
    r.number(d.seconds, ['seconds']);
    r.choices(d.options, 'exactly_one');
  },
  glossary: listItems('terms', 1, 'term', 'all', ['term', 'definition']),
  video_chapters: (d, r) => {
    r.text(d.url, ['url']);
    const chapters = r.list(d.chapters, 'chapters', 1, 'chapter');
    r.ids(chapters, 'chapters');
    r.itemTexts(chapters, 'chapters', ['title']);
    let last = -1;
    chapters.forEach((c, i) => {
      if (!r.number(c.time, ['chapters', i, 'time'])) return;
      const time = c.time as number;
      if (time <= last) r.add('out_of_order', ['chapters', i, 'time'], 'chapter times must increase');
      last = time;
    });
  },
  milestone: (d, r) => void r.text(d.title, ['title']),
  markdown: (d, r) => void r.text(d.markdown, ['markdown']),
};

function runRules<T extends BlockType>(type: T, block: unknown, r: Rules): void {
  const parsed = blockFieldsOf(type).safeParse(block);
  // The lenient check ran first; a failed parse here has already been reported.
  if (parsed.success) (RULES[type] as Checker<T>)(parsed.data as BlockData<T>, r);
}

/**
 * Strict check of one block. Issue paths are relative to the block
 * (`["options"]`, `["pairs", 1, "right"]`). Returns [] when the block is
 * well-formed.
 */
export function strictCheckBlock(block: unknown, opts: StrictOptions = {}): Issue[] {
  if (!isRecord(block)) return [{ code: 'invalid_type', path: [], message: 'a block must be an object' }];
  const r = new Rules();
  if (!isFilled(block.id)) r.add('required', ['id'], 'block id must be a non-empty string');
  if (!isBlockType(block.type)) {
    r.add('unknown_type', ['type'], unknownTypeMessage(block.type));
    return r.issues;
  }
  const allowed = opts.allowedTypes;
  if (allowed && !allowed.includes(block.type)) {
    r.add(
      'type_not_allowed',
      ['type'],
      `block type "${block.type}" is not allowed here; allowed: ${allowed.join(', ')}`,
    );
    return r.issues;
  }
  const typeIssues = blockFieldIssues(block, []);
  if (typeIssues.length > 0) return [...r.issues, ...typeIssues];
  runRules(block.type, block, r);
  return r.issues;
}

const prefixed = (issues: Issue[], at: Path): Issue[] =>
  issues.map((i) => ({ ...i, path: [...at, ...i.path] }));

interface Candidate {
  screen: Record<string, unknown>;
  index: number;
  blocks: { block: Block; index: number }[];
}

/**
 * Strict check of a whole `screens` array. Malformed blocks are dropped and
 * reported; a screen left with no block is dropped and reported too (with
 * `blockId: null`), as is a malformed screen. Ids must be unique across the
 * course: a repeat is dropped. A button pointing at a screen that does not
 * survive is dropped as well. Issue paths start with `"screens"` and use the
 * indexes of the input.
 */
export function strictCheckScreens(screens: unknown, opts: StrictOptions = {}): StrictResult {
  const dropped: DroppedItem[] = [];
  if (!Array.isArray(screens)) {
    dropped.push({
      screenId: '',
      blockId: null,
      issues: [{ code: 'invalid_type', path: ['screens'], message: 'screens must be an array of screens' }],
    });
    return { screens: [], dropped };
  }
  const screenIds = new IdRegistry('screen');
  const blockIds = new IdRegistry('block');
  let candidates: Candidate[] = [];

  screens.forEach((screen, s) => {
    const at: Path = ['screens', s];
    const screenId = isRecord(screen) && typeof screen.id === 'string' ? screen.id : '';
    const issues = screenIssues(screen, at);
    if (issues.length === 0) {
      const dup = screenIds.claim(screenId, [...at, 'id']);
      if (dup) issues.push(dup);
    }
    if (issues.length > 0 || !isRecord(screen)) {
      dropped.push({ screenId, blockId: null, issues });
      return;
    }
    const kept: Candidate['blocks'] = [];
    (screen.blocks as unknown[]).forEach((block, b) => {
      const bAt: Path = [...at, 'blocks', b];
      const blockId = isRecord(block) && typeof block.id === 'string' ? block.id : '';
      const issues = prefixed(strictCheckBlock(block, opts), bAt);
      if (issues.length === 0) {
        const dup = blockIds.claim(blockId, [...bAt, 'id']);
        if (dup) issues.push(dup);
      }
      if (issues.length > 0) dropped.push({ screenId, blockId, issues });
      else kept.push({ block: block as Block, index: b });
    });
    candidates.push({ screen, index: s, blocks: kept });
  });

  // Dropping an empty screen can strand a button that leads to it, which can
  // empty another screen: repeat until nothing changes.
  for (;;) {
    const before = dropped.length;
    const survivors: Candidate[] = [];
    for (const c of candidates) {
      if (c.blocks.length > 0) survivors.push(c);
      else
        dropped.push({
          screenId: c.screen.id as string,
          blockId: null,
          issues: [
            {
              code: 'empty_screen',
              path: ['screens', c.index, 'blocks'],
              message: 'screen has no well-formed block left',
            },
          ],
        });
    }
    const live = new Set(survivors.map((c) => c.screen.id as string));
    for (const c of survivors) {
      c.blocks = c.blocks.filter(({ block, index }) => {
        if (block.type !== 'button' || block.action !== 'screen' || live.has(block.screenId as string))
          return true;
        dropped.push({
          screenId: c.screen.id as string,
          blockId: block.id,
          issues: [
            {
              code: 'unknown_screen',
              path: ['screens', c.index, 'blocks', index, 'screenId'],
              message: `button leads to screen "${String(block.screenId)}", which is not in the course`,
            },
          ],
        });
        return false;
      });
    }
    candidates = survivors;
    if (dropped.length === before) break;
  }

  return {
    screens: candidates.map((c) => ({ ...c.screen, blocks: c.blocks.map((b) => b.block) }) as Screen),
    dropped,
  };
}

function screenIssues(screen: unknown, at: Path): Issue[] {
  if (!isRecord(screen)) return [{ code: 'invalid_type', path: at, message: 'a screen must be an object' }];
  const issues: Issue[] = [];
  if (!isFilled(screen.id))
    issues.push({ code: 'required', path: [...at, 'id'], message: 'screen id must be a non-empty string' });
  if (!isFilled(screen.title))
    issues.push({ code: 'required', path: [...at, 'title'], message: 'screen title is required' });
  if (!Array.isArray(screen.blocks)) {
    issues.push({ code: 'invalid_type', path: [...at, 'blocks'], message: 'screen blocks must be an array' });
  }
  return issues;
}
