/**
 * AI generation (SPEC.md "Generation job", docs/generation.md): the body of POST /generate, the job as
 * GET /generate/:id shows it, and the `generation.run` job's input and result.
 */
import { z } from 'zod';
import { Locale } from './courses.js';

export const GENERATION_PROMPT_MAX = 2000;
export const SCREENS_TARGET_MAX = 20;
/** Used when `screensTarget` is left out (docs/generation.md). */
export const SCREENS_TARGET_DEFAULT = 6;
export const AUDIENCE_MAX = 500;
export const SOURCE_URL_MAX = 2048;

const httpUrl = z
  .string({ error: 'must be a string (an http or https URL)' })
  .trim()
  .max(SOURCE_URL_MAX, { error: `must be at most ${SOURCE_URL_MAX} characters` })
  .refine(
    (v) => {
      try {
        const u = new URL(v);
        return (u.protocol === 'http:' || u.protocol === 'https:') && !u.username && !u.password;
      } catch {
        return false;
      }
    },
    { error: 'must be an http or https URL without credentials' },
  );

export const GenerateBody = z
  .strictObject({
    prompt: z
      .string({ error: 'is required: what the course is about' })
      .trim()
      .min(1, { error: 'must not be empty' })
      .max(GENERATION_PROMPT_MAX, { error: `must be at most ${GENERATION_PROMPT_MAX} characters` }),
    audience: z
      .string({ error: 'must be a string' })
      .trim()
      .max(AUDIENCE_MAX, { error: `must be at most ${AUDIENCE_MAX} characters` })
      .optional(),
    screensTarget: z
      .number({ error: 'must be an integer from 1 to 20' })
      .int({ error: 'must be an integer from 1 to 20' })
      .min(1, { error: 'must be at least 1' })
      .max(SCREENS_TARGET_MAX, { error: `must be at most ${SCREENS_TARGET_MAX}` })
      .optional(),
    sourceUrl: httpUrl.optional(),
    locale: Locale.optional(),
  })
  .meta({ id: 'GenerateRequest' });
export type GenerateBody = z.infer<typeof GenerateBody>;

/** Input of a `generation.run` job (the row is the truth; the command only names it). */
export const GenerationJobInput = z.object({
  prompt: z.string(),
  audience: z.string().nullable(),
  screensTarget: z.number().int(),
  sourceUrl: z.string().nullable(),
  locale: z.string(),
});
export type GenerationJobInput = z.infer<typeof GenerationJobInput>;

/** One block or screen the worker left out, and why (docs/generation.md "Result"). */
export const DroppedBlock = z
  .object({
    screenId: z.string(),
    blockId: z.string().nullable(),
    type: z.string().nullable(),
    reasons: z.array(z.string()),
  })
  .meta({ id: 'DroppedBlock' });
export type DroppedBlock = z.infer<typeof DroppedBlock>;

export const GenerationJobResult = z.object({
  courseId: z.string(),
  droppedBlocks: z.array(DroppedBlock),
});
export type GenerationJobResult = z.infer<typeof GenerationJobResult>;

export const GenerationJob = z
  .object({
    id: z.string(),
    status: z.enum(['queued', 'processing', 'completed', 'failed']),
    courseId: z.string().nullable().meta({ description: 'Set when completed: a draft course' }),
    prompt: z.string(),
    sourceUrl: z.string().nullable(),
    audience: z.string().nullable(),
    screensTarget: z.number().int(),
    locale: z.string(),
    error: z.string().nullable().meta({ description: 'Set when failed: why' }),
    droppedBlocks: z
      .array(DroppedBlock)
      .meta({ description: 'Generated blocks and screens left out as malformed, with the reasons' }),
    createdAt: z.string(),
    completedAt: z.string().nullable(),
  })
  .meta({ id: 'GenerationJob' });
export type GenerationJob = z.infer<typeof GenerationJob>;

export const GenerationJobResponse = z.object({ data: GenerationJob }).meta({ id: 'GenerationJobResponse' });
export const GenerationQueuedResponse = z
  .object({ data: z.object({ id: z.string(), status: z.literal('queued') }) })
  .meta({ id: 'GenerationQueuedResponse' });
