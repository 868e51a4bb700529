/**
 * `cmi.suspend_data` of a SCORM package: where the learner is and what they answered, as compact as we can
 * make it, because SCORM 1.2 gives a SCO only 4,096 characters (2004: 64,000). docs/scorm.md has the
 * format and the measured sizes.
 *
 * One JSON array: `[1, screenIndex, ord, answer, ord, answer, …]`. `ord` is the block's position in the
 * course (all screens, stored order); the answer is packed by block type — an option, choice, ranking item
 * or match side becomes its index in the stored block, true/false becomes 1/0, a hotspot point `[x, y]`. An
 * answer that does not have the expected shape is kept as it came, under `-ord - 1`.
 */
import { isGraded } from '@lectern/grading';
import type { PlayerBlock, PlayerCourse } from './types.js';

export const SUSPEND_FORMAT = 1;
/** What the standards allow: SCORM 1.2 `cmi.suspend_data` CMIString4096, 2004 characterstring SPM 64000. */
export const SUSPEND_LIMIT = { '1.2': 4096, '2004': 64000 } as const;

export interface SuspendState {
  index: number;
  answers: Record<string, unknown>;
}

/** How much of the state fit: everything, the graded answers only, or the position and some graded answers. */
export type SuspendLevel = 'full' | 'graded' | 'partial';

type ItemIdFn = (blockId: string, itemId: string) => string;

const ids = (list: unknown): string[] =>
  Array.isArray(list) ? list.map((x) => String((x as { id?: unknown } | null)?.id ?? '')) : [];

/** Per block type: answer → packed (or undefined when the answer has another shape) and back. */
function codec(block: PlayerBlock, itemId: ItemIdFn) {
  const pick = (list: string[]) => ({
    pack: (v: unknown) => (typeof v === 'string' && list.includes(v) ? list.indexOf(v) : undefined),
    unpack: (v: unknown) => (typeof v === 'number' ? list[v] : undefined),
  });
  const many = (list: string[]) => ({
    pack: (v: unknown) =>
      Array.isArray(v) && v.every((x) => typeof x === 'string' && list.includes(x))
        ? v.map((x) => list.indexOf(x as string))
        : undefined,
    unpack: (v: unknown) =>
      Array.isArray(v) && v.every((i) => typeof i === 'number' && i in list)
        ? v.map((i) => list[i as number])
        : undefined,
  });
  switch (block.type) {
    case 'quiz_single_choice':
    case 'timed_question':
      return pick(ids(block.options));
    case 'scenario':
      return pick(ids(block.choices));
    case 'quiz_multiple_choice':
      return many(ids(block.options));
    case 'ranking':
      return many(ids(block.items).map((id) => itemId(block.id, id)));
    case 'quiz_true_false':
      return {
        pack: (v: unknown) => (typeof v === 'boolean' ? (v ? 1 : 0) : undefined),
        unpack: (v: unknown) => (v === 1 ? true : v === 0 ? false : undefined),
      };
    case 'match': {
      const left = ids(block.pairs);
      const right = left.map((id) => itemId(block.id, id));
      return {
        pack: (v: unknown) => {
          if (typeof v !== 'object' || v === null || Array.isArray(v)) return undefined;
          const out: number[] = [];
          for (const [l, r] of Object.entries(v)) {
            if (!left.includes(l) || typeof r !== 'string' || !right.includes(r)) return undefined;
            out.push(left.indexOf(l), right.indexOf(r));
          }
          return out;
        },
        unpack: (v: unknown) => {
          if (!Array.isArray(v) || v.length % 2 !== 0) return undefined;
          const out: Record<string, string> = {};
          for (let i = 0; i < v.length; i += 2) {
            const l = left[v[i] as number];
            const r = right[v[i + 1] as number];
            if (l === undefined || r === undefined) return undefined;
            out[l] = r;
          }
          return out;
        },
      };
    }
    case 'hotspot':
      return {
        pack: (v: unknown) => {
          const p = v as { x?: unknown; y?: unknown } | null;
          return typeof p === 'object' && p !== null && typeof p.x === 'number' && typeof p.y === 'number'
            ? [Math.round(p.x * 1e4) / 1e4, Math.round(p.y * 1e4) / 1e4]
            : undefined;
        },
        unpack: (v: unknown) =>
          Array.isArray(v) && v.length === 2 && typeof v[0] === 'number' && typeof v[1] === 'number'
            ? { x: v[0], y: v[1] }
            : undefined,
      };
    default:
      return null;
  }
}

function blocksOf(course: PlayerCourse): PlayerBlock[] {
  return course.screens.flatMap((s) => s.blocks);
}

/**
 * The suspend_data for `state`, no longer than `limit`. When everything does not fit it degrades on purpose:
 * first the answers that are not graded (polls, reflections, checklists) go, then graded answers from the
 * end of the course, so the position and as many graded answers as fit always survive.
 */
export function encodeSuspend(
  course: PlayerCourse,
  state: SuspendState,
  limit: number,
  itemId: ItemIdFn,
): { data: string; level: SuspendLevel } {
  const entries: { graded: boolean; text: string }[] = [];
  blocksOf(course).forEach((block, ord) => {
    if (!Object.hasOwn(state.answers, block.id)) return;
    const answer = state.answers[block.id];
    if (answer === undefined) return;
    const packed = codec(block, itemId)?.pack(answer);
    const text =
      packed !== undefined ? `${ord},${JSON.stringify(packed)}` : `${-ord - 1},${JSON.stringify(answer)}`;
    entries.push({ graded: isGraded(block), text });
  });
  const head = `[${SUSPEND_FORMAT},${Math.max(0, state.index)}`;
  const build = (list: { text: string }[]) => head + list.map((e) => `,${e.text}`).join('') + ']';
  const full = build(entries);
  if (full.length <= limit) return { data: full, level: 'full' };
  const graded = entries.filter((e) => e.graded);
  const onlyGraded = build(graded);
  if (onlyGraded.length <= limit) return { data: onlyGraded, level: 'graded' };
  const kept: { text: string }[] = [];
  let size = head.length + 1;
  for (const e of graded) {
    if (size + e.text.length + 1 > limit) break;
    kept.push(e);
    size += e.text.length + 1;
  }
  return { data: build(kept), level: 'partial' };
}

/** The state in a suspend_data string, or null when it is not ours (empty, another format, garbage). */
export function decodeSuspend(course: PlayerCourse, data: string, itemId: ItemIdFn): SuspendState | null {
  let parsed: unknown;
  try {
    parsed = JSON.parse(data);
  } catch {
    return null;
  }
  if (!Array.isArray(parsed) || parsed[0] !== SUSPEND_FORMAT || typeof parsed[1] !== 'number') return null;
  const blocks = blocksOf(course);
  const index = Math.min(Math.max(0, Math.floor(parsed[1])), Math.max(0, course.screens.length - 1));
  const answers: Record<string, unknown> = {};
  for (let i = 2; i + 1 < parsed.length; i += 2) {
    const ord = parsed[i] as unknown;
    if (typeof ord !== 'number' || !Number.isInteger(ord)) continue;
    const raw = ord < 0;
    const block = blocks[raw ? -ord - 1 : ord];
    if (!block) continue;
    const value = raw ? parsed[i + 1] : codec(block, itemId)?.unpack(parsed[i + 1]);
    if (value !== undefined) answers[block.id] = value;
  }
  return { index, answers };
}
