import { z } from 'zod';
import { issuesFromZod, type Issue } from '@lectern/errors';
import { BLOCK_TYPES, BlockFields, isBlockType } from '@lectern/contracts';
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

/** The lenient field check of one block whose envelope is known good; paths are prefixed with `at`. */
export function blockFieldIssues(block: Record<string, unknown>, at: Path): Issue[] {
  if (!isBlockType(block.type)) {
    return [
      {
        code: 'unknown_type',
        path: [...at, 'type'],
        message: `unknown block type ${JSON.stringify(block.type)}; allowed: ${BLOCK_TYPES.join(', ')}`,
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
