import { AppError } from '@lectern/errors';
import { GENERATABLE_TYPES, type DroppedBlock, type Screen } from '@lectern/contracts';
import { dropNullFields, strictCheckScreens } from '@lectern/courses';
import { DraftShape } from './schemas.js';

export interface AssembledCourse {
  title: string;
  screens: Screen[];
  droppedBlocks: DroppedBlock[];
}

const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * Turns a parsed model answer into the screens of a draft (docs/generation.md "Result"): ids replaced by the
 * worker's own (`s1`, `s1b1`, … unique whatever the model sent), nulls of the strict schema dropped, then every
 * block through libs/courses' strict check limited to the generatable types. A malformed block is dropped, not
 * repaired, and reported; a screen left without blocks is left out; at most `screensTarget` screens are kept.
 * Nothing usable → a non-retryable error saying why.
 */
export function assembleCourse(answer: unknown, screensTarget: number): AssembledCourse {
  const shape = DraftShape.safeParse(answer);
  if (!shape.success) {
    throw new AppError(
      'invalid_request',
      'The model answer is not a course: it needs a title and a screens array',
      {
        retryable: false,
      },
    );
  }
  const typeOf = new Map<string, string | null>();
  const screens = shape.data.screens.map((screen, s) => {
    if (!isRecord(screen)) return screen;
    const screenId = `s${s + 1}`;
    const blocks = Array.isArray(screen.blocks)
      ? screen.blocks.map((block, b) => {
          if (!isRecord(block)) return block;
          const id = `${screenId}b${b + 1}`;
          typeOf.set(id, typeof block.type === 'string' ? block.type : null);
          return { ...block, id };
        })
      : screen.blocks;
    return {
      ...screen,
      id: screenId,
      title: typeof screen.title === 'string' ? screen.title.trim() : screen.title,
      blocks,
    };
  });
  const checked = strictCheckScreens(dropNullFields(screens), { allowedTypes: GENERATABLE_TYPES });
  const droppedBlocks: DroppedBlock[] = checked.dropped.map((d) => ({
    screenId: d.screenId,
    blockId: d.blockId,
    type: d.blockId ? (typeOf.get(d.blockId) ?? null) : null,
    reasons: d.issues.map((i) => `${i.code}: ${i.message}`),
  }));
  const kept = checked.screens.slice(0, screensTarget);
  if (kept.length === 0) {
    const blocks = droppedBlocks.filter((d) => d.blockId !== null).length;
    throw new AppError(
      'invalid_request',
      shape.data.screens.length === 0
        ? 'The model answered with no screens'
        : `The model answered with no usable screen: ${blocks} block${blocks === 1 ? '' : 's'} dropped as malformed` +
            (droppedBlocks[0] ? ` (first: ${droppedBlocks[0].reasons[0] ?? 'unknown'})` : ''),
      { retryable: false, details: { droppedBlocks } },
    );
  }
  return { title: shape.data.title.trim(), screens: kept, droppedBlocks };
}
