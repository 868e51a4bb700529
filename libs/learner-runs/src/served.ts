import { applyTranslation, contentHash, isGraded } from '@lectern/courses';
import type { CustomFont } from '@lectern/contracts';

/**
 * What a learner is served: the course in one locale (a translation applied, or the source) and its
 * fingerprint; the learner's copy of it is built in learner-course.ts. Pure; the grading of a run uses the same material, so answers are judged against the
 * text the learner read (a translated fill-in-the-blank accepts the translated answers).
 */

/**
 * A small least-recently-used map, per process. Used for what is derived from a course version (its indexes,
 * its learner view): the key names the version (course id, `updated_at`, content hash, locale, translation
 * `updated_at`), so an edit makes a new key and an old entry is simply never asked for again. Bounded by
 * entries, not bytes: a course is at most a few MB, so the bound keeps the worst case to a few hundred MB and
 * the usual case (a handful of live courses) to almost nothing.
 */
export class VersionCache<T> {
  private readonly map = new Map<string, T>();
  constructor(private readonly max: number) {}

  get(key: string): T | undefined {
    const v = this.map.get(key);
    if (v !== undefined) {
      // Re-inserting moves the key to the end: the Map's order is the recency order.
      this.map.delete(key);
      this.map.set(key, v);
    }
    return v;
  }

  delete(key: string): void {
    this.map.delete(key);
  }

  clear(): void {
    this.map.clear();
  }

  set(key: string, value: T): void {
    this.map.delete(key);
    this.map.set(key, value);
    if (this.map.size > this.max) this.map.delete(this.map.keys().next().value as string);
  }
}

export interface CourseRow {
  id: string;
  contentHash: string;
  title: string;
  screens: unknown;
  direction: 'ltr' | 'rtl';
  locale: string;
  passingScore: number | null;
  quizFeedback: 'deferred' | 'immediate';
  navigation: 'default' | 'hidden';
  /** The course's own fonts (`customFonts`), served with the course. */
  customFonts?: CustomFont[];
  /** Absent: `free`. */
  completion?: 'free' | 'sequential';
  /** The review after a finish carries the correct answers (absent: false). */
  reviewShowCorrectAnswers?: boolean;
  /** Names this version of the course (content hash and `updated_at`); what is derived from it is cached by it. */
  version?: string;
}

export interface Material {
  title: string;
  /** Full screens (answer keys included) in the served locale. */
  screens: unknown[];
  locale: string;
  contentHash: string;
}

const canonical = (tag: string): string | null => {
  try {
    return Intl.getCanonicalLocales(tag)[0] ?? null;
  } catch {
    return null;
  }
};
const language = (tag: string) => tag.split('-')[0].toLowerCase();

/**
 * The locale to serve for `requested`: the source when asked for (or nothing usable was asked), else an exact
 * translation, else a translation of the same language (`fr-CA` → `fr`), else the source.
 */
export function pickLocale(source: string, translated: readonly string[], requested?: string | null): string {
  const want = requested ? canonical(requested) : null;
  if (!want || want === source) return source;
  if (translated.includes(want)) return want;
  if (language(want) === language(source)) return source;
  return translated.find((t) => t === language(want)) ?? source;
}

export function materialOf(
  course: Pick<CourseRow, 'title' | 'screens' | 'direction' | 'locale'>,
  translation: { locale: string; content: Record<string, unknown> } | null,
): Material {
  const base = { title: course.title, screens: Array.isArray(course.screens) ? course.screens : [] };
  const served = translation ? applyTranslation(base, translation.content) : base;
  const locale = translation?.locale ?? course.locale;
  return {
    title: served.title,
    screens: served.screens,
    locale,
    contentHash: contentHash({
      title: served.title,
      screens: served.screens,
      direction: course.direction,
      locale,
    }),
  };
}

/** The translation a run is served, as read; `version` (id and `updated_at`) names what it holds. */
export interface ServedTranslation {
  locale: string;
  content: Record<string, unknown>;
  version?: string;
}

export interface IndexedScreen {
  id: string;
  title: string;
}

/** A block as stored (answer keys included): what `gradeAnswer` judges. */
export interface IndexedBlock {
  id: string;
  type: string;
  raw: Record<string, unknown>;
}

const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** Screens and blocks by id, for checking events and describing them in payloads. */
export interface CourseIndex {
  screens: IndexedScreen[];
  screenIndex: Map<string, number>;
  blocks: Map<string, { block: IndexedBlock; screen: IndexedScreen }>;
  /** Graded blocks in reading order (the `answers` list of course.completed). */
  graded: string[];
}

export function indexCourse(screens: unknown): CourseIndex {
  const out: CourseIndex = { screens: [], screenIndex: new Map(), blocks: new Map(), graded: [] };
  for (const s of Array.isArray(screens) ? screens : []) {
    if (!isRecord(s) || typeof s.id !== 'string') continue;
    const screen = { id: s.id, title: typeof s.title === 'string' ? s.title : '' };
    if (!out.screenIndex.has(s.id)) out.screenIndex.set(s.id, out.screens.length);
    out.screens.push(screen);
    for (const b of Array.isArray(s.blocks) ? s.blocks : []) {
      if (!isRecord(b) || typeof b.id !== 'string' || typeof b.type !== 'string' || out.blocks.has(b.id))
        continue;
      // instructor_note blocks are never shown to learners, so they cannot be answered.
      if (b.type === 'instructor_note') continue;
      out.blocks.set(b.id, { block: { id: b.id, type: b.type, raw: b }, screen });
      if (isGraded(b)) out.graded.push(b.id);
    }
  }
  return out;
}

/** What the event batches of a run check and grade against: the source course's index and the served locale's. */
export interface RunMaterial {
  source: CourseIndex;
  served: CourseIndex;
}

/** `translation` applied when the run is served a translation, else the source itself. */
export function runMaterial(
  course: { title: string; screens: unknown },
  translation: Record<string, unknown> | null,
): RunMaterial {
  const base = { title: course.title, screens: Array.isArray(course.screens) ? course.screens : [] };
  const source = indexCourse(base.screens);
  return { source, served: translation ? indexCourse(applyTranslation(base, translation).screens) : source };
}

/** Position of a screen as a percentage of the course, 2 decimals: the last screen is 100. */
export function screenPercent(index: number, total: number): number {
  return total === 0 ? 0 : Math.round(((index + 1) / total) * 10_000) / 100;
}

export const round2 = (n: number) => Math.round(n * 100) / 100;
