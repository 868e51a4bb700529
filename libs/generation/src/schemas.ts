import { z } from 'zod';
import { BlockSchemas, GENERATABLE_TYPES } from '@lectern/contracts';

/** A JSON Schema document (the subset this module reads and writes). */
export type JsonSchema = { [key: string]: unknown };

/**
 * Makes a JSON Schema acceptable to OpenAI's strict structured output (and so to Ollama, vLLM and the like):
 * every object lists all its properties in `required`, a property that was optional becomes nullable, and
 * `additionalProperties` is false everywhere. Keywords strict mode refuses (`default`, `$schema`, `id`) are
 * dropped. The answer is validated again in the worker whatever the server enforced.
 */
export function strictJsonSchema(schema: JsonSchema): JsonSchema {
  return walk(schema) as JsonSchema;
}

const DROPPED = new Set(['$schema', 'default', 'id', 'examples']);

function walk(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(walk);
  if (!node || typeof node !== 'object') return node;
  const out: JsonSchema = {};
  for (const [k, v] of Object.entries(node as JsonSchema)) {
    if (DROPPED.has(k)) continue;
    if (k === 'properties' || k === '$defs' || k === 'definitions') {
      out[k] = Object.fromEntries(Object.entries(v as JsonSchema).map(([p, s]) => [p, walk(s)]));
    } else {
      out[k] = walk(v);
    }
  }
  if (out.type === 'object' || out.properties) {
    const props = (out.properties ?? {}) as JsonSchema;
    const required = new Set((out.required as string[] | undefined) ?? []);
    for (const [name, prop] of Object.entries(props)) {
      if (!required.has(name)) props[name] = nullable(prop as JsonSchema);
    }
    out.properties = props;
    out.required = Object.keys(props);
    out.additionalProperties = false;
  }
  return out;
}

function nullable(schema: JsonSchema): JsonSchema {
  if (typeof schema.type === 'string' && !schema.enum && !schema.const) {
    return { ...schema, type: [schema.type, 'null'] };
  }
  if (Array.isArray(schema.anyOf)) {
    return (schema.anyOf as JsonSchema[]).some((s) => s.type === 'null')
      ? schema
      : { ...schema, anyOf: [...(schema.anyOf as JsonSchema[]), { type: 'null' }] };
  }
  return { anyOf: [schema, { type: 'null' }] };
}

/** The generatable blocks, in exactly the shape POST /courses takes (one schema per type). */
const GeneratedBlock = z.union(
  GENERATABLE_TYPES.map((t) => BlockSchemas[t]) as unknown as [z.ZodObject, z.ZodObject, ...z.ZodObject[]],
);

const GeneratedScreen = z.object({ id: z.string(), title: z.string(), blocks: z.array(GeneratedBlock) });

/** Schema `course`: the whole draft in one answer. */
export const CourseDraft = z.object({ title: z.string(), screens: z.array(GeneratedScreen) });

/** The schema names the worker sends (docs/generation.md "Model calls"). */
export const SCHEMA_NAMES = { course: 'course' } as const;

let cached: JsonSchema | undefined;

/** The strict JSON Schema of `course`, built once from the block contracts. */
export function courseJsonSchema(): JsonSchema {
  cached ??= strictJsonSchema(
    z.toJSONSchema(CourseDraft, {
      target: 'draft-2020-12',
      unrepresentable: 'any',
      io: 'input',
    }) as JsonSchema,
  );
  return cached;
}

/** Loose reading of an answer: a title and a screens array; everything in it is checked block by block later. */
export const DraftShape = z.object({
  title: z.string().trim().min(1),
  screens: z.array(z.unknown()),
});
