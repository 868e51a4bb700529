import { z } from 'zod';
import { BlockFields, isBlockType, type Block, type Screen } from '@lectern/contracts';
import { isRecord, type JsonRecord } from './util.js';

/**
 * Keeps only the fields a type's schema knows, recursively (inside items
 * too). Unknown fields are stored and returned by the API but have no effect
 * on rendering (SPEC.md), so neither the learner view nor the content hash
 * sees them. A known field holding a value of the wrong shape is kept as is.
 */
export function projectKnown(value: unknown, schema: z.core.$ZodType): unknown {
  if (schema instanceof z.ZodOptional) return projectKnown(value, schema.unwrap());
  if (schema instanceof z.ZodObject) {
    if (!isRecord(value)) return value;
    const out: JsonRecord = {};
    for (const [key, sub] of Object.entries(schema.shape)) {
      if (Object.hasOwn(value, key) && value[key] !== undefined) out[key] = projectKnown(value[key], sub);
    }
    return out;
  }
  if (schema instanceof z.ZodArray) {
    return Array.isArray(value) ? value.map((v) => projectKnown(v, schema.element)) : value;
  }
  return value;
}

/** `id`, `type` and the known fields of a block; null when it is not a block of a known type. */
export function projectBlock(block: unknown): Block | null {
  if (!isRecord(block) || typeof block.id !== 'string' || !isBlockType(block.type)) return null;
  const fields = projectKnown(block, BlockFields[block.type]) as JsonRecord;
  return { ...fields, id: block.id, type: block.type };
}

/** `id`, `title` and the projected blocks of each well-formed screen. */
export function projectScreens(screens: unknown): Screen[] {
  if (!Array.isArray(screens)) return [];
  const out: Screen[] = [];
  for (const screen of screens) {
    if (!isRecord(screen) || typeof screen.id !== 'string') continue;
    const blocks = Array.isArray(screen.blocks) ? screen.blocks : [];
    out.push({
      id: screen.id,
      title: typeof screen.title === 'string' ? screen.title : '',
      blocks: blocks.map(projectBlock).filter((b): b is Block => b !== null),
    });
  }
  return out;
}
