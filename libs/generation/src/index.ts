/**
 * AI generation (docs/generation.md): a draft course from a prompt and an optional source page, written by any
 * OpenAI-compatible chat-completions model. The `generation.run` job's handler, the provider interface and its
 * OpenAI-client implementation, the strict JSON Schemas the model calls name, and the checks every answer goes
 * through (nothing the model says is trusted, executed or rendered as HTML).
 */
export {
  GenerationEnv,
  GENERATION_WORKER_ENV,
  GENERATION_KIND,
  GENERATION_WORKER_APP,
  generationJob,
  generationProviderProblem,
  type GenerationConfig,
  type GenerationJobSettings,
} from './worker.js';
export { generateCourse, type GenerateDeps } from './generate.js';
export { openAiProvider, type GenerationProvider, type ModelCall, type ChatMessage } from './provider.js';
export { courseJsonSchema, strictJsonSchema, SCHEMA_NAMES, type JsonSchema } from './schemas.js';
export { assembleCourse, type AssembledCourse } from './assemble.js';
export { fetchSourceText, readableText, SOURCE_LIMITS } from './source.js';
export {
  queueGeneration,
  getGenerationJob,
  generationJobDto,
  generationsUsed,
  generationInput,
  type QueueGenerationDeps,
} from './queue.js';
