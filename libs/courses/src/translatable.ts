import { createHash } from 'node:crypto';
import type { Issue } from '@lectern/errors';
import {
  CERTIFICATE_TRANSLATABLE_TOKENS,
  isBlockType,
  type BlockType,
  type CertificateTranslatableToken,
} from '@lectern/contracts';
import { blankMarkers } from './strict.js';
import { isFilled, isRecord, type JsonRecord } from './util.js';

/**
 * The learner-read text of each block type, as field patterns: `a.b` walks
 * into an object, `*` walks over an array. Urls, ids, enums, numbers, code
 * and instructor notes (never shown to learners) are not listed.
 */
export const TEXT_FIELDS: Record<BlockType, readonly string[]> = {
  heading: ['text'],
  text: ['text'],
  image: ['alt', 'caption'],
  video: ['caption', 'transcript'],
  audio: ['caption', 'transcript'],
  embed: ['title'],
  button: ['label'],
  divider: [],
  spacer: [],
  quiz_single_choice: ['question', 'options.*.text', 'explanation'],
  quiz_multiple_choice: ['question', 'options.*.text', 'explanation'],
  quiz_true_false: ['statement', 'explanation'],
  // Accepted answers are translated too: a learner studying in a locale types the answer in it.
  fill_in_blank: ['text', 'blanks.*.answers.*', 'explanation'],
  flashcard: ['front', 'back'],
  match: ['prompt', 'pairs.*.left', 'pairs.*.right', 'explanation'],
  hotspot: ['alt', 'question', 'spots.*.label', 'explanation'],
  results: ['title', 'text'],
  stack: ['cards.*.title', 'cards.*.text'],
  steps: ['items.*.title', 'items.*.text'],
  timeline: ['items.*.date', 'items.*.title', 'items.*.text'],
  accordion: ['items.*.title', 'items.*.text'],
  slideshow: ['slides.*.alt', 'slides.*.caption'],
  callout: ['title', 'text'],
  code: ['caption'],
  checklist: ['items.*.text'],
  compare: ['left.title', 'left.points.*', 'right.title', 'right.points.*'],
  quote: ['text', 'author', 'source'],
  spec_table: ['rows.*.label', 'rows.*.value'],
  resource: ['title', 'description'],
  instructor_note: [],
  poll: ['question', 'options.*.text'],
  reflection: ['prompt', 'placeholder'],
  ranking: ['question', 'items.*.text', 'explanation'],
  scenario: ['situation', 'choices.*.text', 'choices.*.outcome'],
  timed_question: ['question', 'options.*.text', 'explanation'],
  glossary: ['terms.*.term', 'terms.*.definition'],
  video_chapters: ['chapters.*.title'],
  milestone: ['title', 'text'],
  markdown: ['markdown'],
};

export interface TranslatableField {
  /** The key to write under a translation's `content`. */
  path: string;
  /** `course` for the course title, `s:<screenId>` for everything on a screen. */
  group: string;
  /** Stable UI label key: `course.title`, `screen.title`, `block.<type>.<field>`. */
  labelKey: string;
  sourceText: string;
}

export interface TranslatableCourse {
  title: string;
  screens: unknown;
  /**
   * The texts of the course's certificate template (its `CERTIFICATE_TRANSLATABLE_TOKENS` that the template
   * sets), translatable under `certificate.<token>` so the certificate speaks the learner's language too.
   */
  certificateTexts?: Partial<Record<CertificateTranslatableToken, string>>;
}

interface Slot extends TranslatableField {
  set(text: string): void;
}

/**
 * Array items are named by their `id` when every item of that array has a
 * distinct non-empty string id (so a translation survives reordering), by
 * index otherwise (string lists such as `points`, or id-less rows).
 */
function itemNames(list: unknown[]): string[] {
  const ids = list.map((x) => (isRecord(x) && isFilled(x.id) ? x.id : null));
  const unique = ids.every((id) => id !== null) && new Set(ids).size === ids.length;
  return unique ? (ids as string[]).map(escapePathId) : list.map((_, i) => String(i));
}

/**
 * An id as it appears inside a path: `\`, `.` and `:` are escaped with a backslash, so ids may
 * contain them and still never collide (screen `s1.b:m1` is `s:s1\.b\:m1`, not a block of `s1`).
 */
export function escapePathId(id: string): string {
  return id.replace(/[\\.:]/g, '\\$&');
}

/** Field patterns as a tree, so the items of one array are walked item by item (reading order). */
type PatternTree = Map<string, PatternTree>;

function patternTree(patterns: readonly string[]): PatternTree {
  const root: PatternTree = new Map();
  for (const pattern of patterns) {
    let node = root;
    for (const part of pattern.split('.')) {
      let next = node.get(part);
      if (!next) node.set(part, (next = new Map()));
      node = next;
    }
  }
  return root;
}

const TREES = Object.fromEntries(Object.entries(TEXT_FIELDS).map(([t, p]) => [t, patternTree(p)])) as Record<
  BlockType,
  PatternTree
>;

type Found = (
  segments: string[],
  label: string[],
  holder: Record<string | number, unknown>,
  key: string | number,
) => void;

function walk(value: unknown, tree: PatternTree, segments: string[], label: string[], found: Found): void {
  for (const [part, child] of tree) {
    if (part === '*') {
      if (!Array.isArray(value)) continue;
      const names = itemNames(value);
      value.forEach((v, i) => {
        if (child.size === 0)
          found([...segments, names[i]], label, value as unknown as Record<number, unknown>, i);
        else walk(v, child, [...segments, names[i]], label, found);
      });
    } else if (isRecord(value)) {
      if (child.size === 0) found([...segments, part], [...label, part], value, part);
      else walk(value[part], child, [...segments, part], [...label, part], found);
    }
  }
}

/** Every translatable slot of `course`, in reading order; the first of two equal paths wins. */
function slots(course: TranslatableCourse): Slot[] {
  const out: Slot[] = [];
  const seen = new Set<string>();
  const add = (slot: Slot): void => {
    if (seen.has(slot.path) || !isFilled(slot.sourceText)) return;
    seen.add(slot.path);
    out.push(slot);
  };
  const c = course as unknown as JsonRecord;
  if (typeof course.title === 'string') {
    add({
      path: 'title',
      group: 'course',
      labelKey: 'course.title',
      sourceText: course.title,
      set: (t) => (c.title = t),
    });
  }
  const texts = course.certificateTexts;
  if (texts) {
    for (const token of CERTIFICATE_TRANSLATABLE_TOKENS) {
      const text = texts[token];
      if (typeof text !== 'string') continue;
      add({
        path: `certificate.${token}`,
        group: 'certificate',
        labelKey: `certificate.${token}`,
        sourceText: text,
        set: (t) => (texts[token] = t),
      });
    }
  }
  if (!Array.isArray(course.screens)) return out;
  for (const screen of course.screens) {
    if (!isRecord(screen) || !isFilled(screen.id)) continue;
    const group = `s:${escapePathId(screen.id)}`;
    if (typeof screen.title === 'string') {
      add({
        path: `${group}.title`,
        group,
        labelKey: 'screen.title',
        sourceText: screen.title,
        set: (t) => (screen.title = t),
      });
    }
    if (!Array.isArray(screen.blocks)) continue;
    for (const block of screen.blocks) {
      if (!isRecord(block) || !isFilled(block.id) || !isBlockType(block.type)) continue;
      const prefix = `${group}.b:${escapePathId(block.id)}`;
      walk(block, TREES[block.type], [], [], (segments, label, holder, key) => {
        const text = holder[key];
        if (typeof text !== 'string') return;
        add({
          path: `${prefix}.${segments.join('.')}`,
          group,
          labelKey: `block.${block.type}.${label.join('.')}`,
          sourceText: text,
          set: (t) => (holder[key] = t),
        });
      });
    }
  }
  return out;
}

/**
 * The text a translator can translate: the course title (`title`), the
 * certificate template's texts (`certificate.<token>`, when the course carries
 * them in `certificateTexts`), each screen title (`s:<screenId>.title`) and each learner-read block text
 * (`s:<screenId>.b:<blockId>.<field>`, inside arrays
 * `s:<screenId>.b:<blockId>.<arrayField>.<itemId or index>.<field>`).
 * Only non-blank strings are listed.
 */
export function translatableFields(course: TranslatableCourse): TranslatableField[] {
  return slots(course).map(({ path, group, labelKey, sourceText }) => ({
    path,
    group,
    labelKey,
    sourceText,
  }));
}

/** Whether `path` names a translatable field of the course as it is now. */
export function isKnownPath(course: TranslatableCourse, path: string): boolean {
  return slots(course).some((s) => s.path === path);
}

/**
 * A translated deep copy of `course`. A path missing from `content`, mapped
 * to an empty (or blank) string, or no longer known keeps the source text.
 */
export function applyTranslation<T extends TranslatableCourse>(
  course: T,
  content: Readonly<Record<string, unknown>>,
): T {
  const copy = structuredClone(course);
  for (const slot of slots(copy)) {
    if (!Object.hasOwn(content, slot.path)) continue;
    const text = content[slot.path];
    if (isFilled(text)) slot.set(text);
  }
  return copy;
}

/**
 * Short fingerprint of one source text. A translation can keep, per path, the
 * fingerprint of the source it translated; `stalePaths` then names exactly the
 * paths whose source changed since.
 */
export function textFingerprint(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex').slice(0, 16);
}

/** Per path, the fingerprint of the current source text. */
export function sourceFingerprints(course: TranslatableCourse): Record<string, string> {
  return Object.fromEntries(slots(course).map((s) => [s.path, textFingerprint(s.sourceText)]));
}

/**
 * Paths of `recorded` (path → fingerprint when translated) whose source text
 * changed or that no longer exist in the course.
 */
export function stalePaths(course: TranslatableCourse, recorded: Readonly<Record<string, string>>): string[] {
  const now = sourceFingerprints(course);
  return Object.keys(recorded).filter((p) => now[p] !== recorded[p]);
}

/**
 * Problems with a translation's `content` against the course as it is now,
 * for a PATCH to refuse: a path that is not translatable (`unknown_path`), a
 * value that is not a string, and a fill-in-blank text whose `{{id}}` blank
 * markers differ from the source's (the blanks would stop working). An empty
 * string is fine: it clears the path back to the source text. Issue paths are
 * `["content", <path>]`.
 */
export function translationIssues(
  course: TranslatableCourse,
  content: Readonly<Record<string, unknown>>,
): Issue[] {
  const known = new Map(slots(course).map((s) => [s.path, s]));
  const issues: Issue[] = [];
  for (const [path, value] of Object.entries(content)) {
    const slot = known.get(path);
    if (!slot) {
      issues.push({
        code: 'unknown_path',
        path: ['content', path],
        message: `"${path}" is not a translatable field of this course`,
      });
      continue;
    }
    if (typeof value !== 'string') {
      issues.push({
        code: 'invalid_type',
        path: ['content', path],
        message: 'a translation must be a string',
      });
      continue;
    }
    if (slot.labelKey === 'block.fill_in_blank.text' && value !== '') {
      const want = [...blankMarkers(slot.sourceText)].sort().join('\u0000');
      const got = [...blankMarkers(value)].sort().join('\u0000');
      if (want !== got) {
        issues.push({
          code: 'blank_marker',
          path: ['content', path],
          message: 'the translation must keep every {{id}} blank marker of the source text, each once',
        });
      }
    }
  }
  return issues;
}
