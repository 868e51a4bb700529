import { z } from 'zod';
import { issuesFromZod, type Issue } from '@lectern/errors';
import { BlockFields, COURSE_LIMITS, isBlockType } from '@lectern/contracts';
import { isRecord } from './util.js';

export type Path = (string | number)[];

const ScreenShape = z.looseObject({
  id: z.string().min(1, 'screen id must be a non-empty string'),
  title: z.string(),
  blocks: z.array(z.unknown()),
});

const BlockEnvelope = z.looseObject({
  id: z.string().min(1, 'block id must be a non-empty string'),
  type: z.string(),
});

/**
 * Tracks ids already used in a course and reports a repeat at the
 * duplicate's own `id` path, naming where the first use was.
 */
export class IdRegistry {
  private readonly seen = new Map<string, Path>();

  constructor(private readonly what: 'screen' | 'block') {}

  /** Registers `id`; returns an issue when it was already taken. */
  claim(id: string, idPath: Path): Issue | null {
    const first = this.seen.get(id);
    if (first) {
      return {
        code: 'duplicate_id',
        path: idPath,
        message: `${this.what} id "${id}" is already used at ${formatPath(first)}; ${this.what} ids must be unique within the course`,
      };
    }
    this.seen.set(id, idPath);
    return null;
  }
}

export function formatPath(path: Path): string {
  return path.map((p, i) => (typeof p === 'number' ? `[${p}]` : i === 0 ? p : `.${p}`)).join('');
}

/** Short on purpose: it may repeat once per block, so it names the catalogue instead of listing 39 types. */
export function unknownTypeMessage(type: unknown): string {
  const shown = typeof type === 'string' && type.length > 40 ? `${type.slice(0, 40)}…` : type;
  return `unknown block type ${JSON.stringify(shown)}; the 39 types are listed in docs/blocks.md`;
}

/** One issue when `screens` is over a size limit (COURSE_LIMITS), before any screen is validated. */
export function courseSizeIssue(screens: unknown[]): Issue | null {
  if (screens.length > COURSE_LIMITS.screens) {
    return {
      code: 'too_many_items',
      path: ['screens'],
      message: `a course holds at most ${COURSE_LIMITS.screens} screens; got ${screens.length}`,
    };
  }
  let total = 0;
  for (let s = 0; s < screens.length; s++) {
    const screen = screens[s];
    const blocks = isRecord(screen) && Array.isArray(screen.blocks) ? screen.blocks.length : 0;
    if (blocks > COURSE_LIMITS.blocksPerScreen) {
      return {
        code: 'too_many_items',
        path: ['screens', s, 'blocks'],
        message: `a screen holds at most ${COURSE_LIMITS.blocksPerScreen} blocks; got ${blocks}`,
      };
    }
    total += blocks;
  }
  if (total > COURSE_LIMITS.blocks) {
    return {
      code: 'too_many_items',
      path: ['screens'],
      message: `a course holds at most ${COURSE_LIMITS.blocks} blocks; got ${total}`,
    };
  }
  return null;
}

/** The lenient field check of one block whose envelope is known good; paths are prefixed with `at`. */
export function blockFieldIssues(block: Record<string, unknown>, at: Path): Issue[] {
  if (!isBlockType(block.type)) {
    return [
      {
        code: 'unknown_type',
        path: [...at, 'type'],
        message: unknownTypeMessage(block.type),
      },
    ];
  }
  const parsed = BlockFields[block.type].safeParse(block);
  return parsed.success ? [] : issuesFromZod(parsed.error.issues, at);
}

/**
 * The write rules of SPEC.md for a course's `screens` (lenient: missing
 * fields and unknown fields are fine). Every issue path starts with
 * `"screens"`. Returns [] when the screens may be stored.
 *
 * Checked: the array/screen/block shapes; block `type` is one of the 39;
 * screen ids and block ids unique across the course; a stack has at most
 * 10 cards; a present known field has the right type (and range/enum).
 */
export function validateScreens(screens: unknown): Issue[] {
  if (!Array.isArray(screens)) {
    return [{ code: 'invalid_type', path: ['screens'], message: 'screens must be an array of screens' }];
  }
  const tooBig = courseSizeIssue(screens);
  if (tooBig) return [tooBig];
  const issues: Issue[] = [];
  const screenIds = new IdRegistry('screen');
  const blockIds = new IdRegistry('block');

  screens.forEach((screen, s) => {
    const at: Path = ['screens', s];
    const parsed = ScreenShape.safeParse(screen);
    if (!parsed.success) issues.push(...issuesFromZod(parsed.error.issues, at));
    if (!isRecord(screen)) return;
    if (typeof screen.id === 'string' && screen.id !== '') {
      const dup = screenIds.claim(screen.id, [...at, 'id']);
      if (dup) issues.push(dup);
    }
    if (!Array.isArray(screen.blocks)) return;

    screen.blocks.forEach((block, b) => {
      const bAt: Path = [...at, 'blocks', b];
      const envelope = BlockEnvelope.safeParse(block);
      if (!envelope.success) issues.push(...issuesFromZod(envelope.error.issues, bAt));
      if (!isRecord(block)) return;
      if (typeof block.id === 'string' && block.id !== '') {
        const dup = blockIds.claim(block.id, [...bAt, 'id']);
        if (dup) issues.push(dup);
      }
      if (typeof block.type === 'string') issues.push(...blockFieldIssues(block, bAt));
    });
  });
  return issues;
}
