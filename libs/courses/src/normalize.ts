import { z } from 'zod';
import { BlockFields, isBlockType } from '@lectern/contracts';
import { isRecord } from './util.js';

/**
 * A known optional field sent as `null` means "not set": many SDKs serialise an unset field as null.
 * Drops those keys from every block of a known type, inside item lists too (`options[].correct: null`),
 * so the stored course looks as if they had not been sent. Unknown fields are stored as sent, null or not.
 * Returns new arrays and objects; the input is not changed.
 */
export function dropNullFields(screens: unknown): unknown {
  if (!Array.isArray(screens)) return screens;
  return screens.map((screen) => {
    if (!isRecord(screen) || !Array.isArray(screen.blocks)) return screen;
    return {
      ...screen,
      blocks: screen.blocks.map((block) =>
        isRecord(block) && isBlockType(block.type) ? pruned(block, BlockFields[block.type]) : block,
      ),
    };
  });
}

function unwrap(schema: z.ZodType): z.ZodType {
  return schema instanceof z.ZodOptional ? (schema.unwrap() as z.ZodType) : schema;
}

function pruned(value: unknown, schema: z.ZodType): unknown {
  const s = unwrap(schema);
  if (s instanceof z.ZodObject && isRecord(value)) {
    const shape = s.shape as Record<string, z.ZodType>;
    const out: Record<string, unknown> = {};
    for (const [key, v] of Object.entries(value)) {
      const field = Object.hasOwn(shape, key) ? shape[key] : undefined;
      if (field === undefined) out[key] = v;
      else if (v === null && field instanceof z.ZodOptional) continue;
      else out[key] = pruned(v, field);
    }
    return out;
  }
  if (s instanceof z.ZodArray && Array.isArray(value)) {
    const element = s.element as z.ZodType;
    return value.map((v) => pruned(v, element));
  }
  return value;
}
