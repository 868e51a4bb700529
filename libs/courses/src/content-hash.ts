import { createHash } from 'node:crypto';
import { projectScreens } from './project.js';
import { isRecord } from './util.js';

/**
 * JSON with object keys sorted (by UTF-16 code unit) at every depth and no
 * whitespace, so equal data always gives equal text whatever the key order.
 * `undefined` members are left out, as JSON.stringify does.
 */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value))
    return `[${value.map((v) => (v === undefined ? 'null' : canonicalJson(v))).join(',')}]`;
  if (isRecord(value)) {
    const members = Object.keys(value)
      .filter((k) => value[k] !== undefined)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonicalJson(value[k])}`);
    return `{${members.join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

export interface HashableCourse {
  title: string;
  screens: unknown;
  direction?: string;
  locale?: string;
}

/**
 * Fingerprint of the material a learner is shown: `sha256:` + hex of the
 * canonical JSON of
 *   { v, title, direction (default "ltr"), locale (default "en"),
 *     screens: [{ id, title, blocks: [{ id, type, ...known fields }] }] }.
 *
 * Counted: titles, every known block field including answer keys (a changed
 * correct answer changes what a score means), ids (answers and resume
 * position are keyed by them), and the order of screens, blocks and items.
 * Not counted: unknown fields (stored but never rendered, SPEC.md), unknown
 * screen fields, instructor_note blocks (never shown to learners) and key
 * order. `v` versions the recipe itself.
 */
export function contentHash(course: HashableCourse): string {
  const screens = projectScreens(course.screens).map((s) => ({
    ...s,
    blocks: s.blocks.filter((b) => b.type !== 'instructor_note'),
  }));
  const material = {
    v: 1,
    title: course.title,
    direction: course.direction ?? 'ltr',
    locale: course.locale ?? 'en',
    screens,
  };
  return `sha256:${createHash('sha256').update(canonicalJson(material)).digest('hex')}`;
}
