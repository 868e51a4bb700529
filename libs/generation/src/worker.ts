import { GenerationEnv, type GenerationConfig } from '@lectern/config';

import { AppError } from '@lectern/errors';
import { createCourse, workspaceForImport } from '@lectern/authoring';
import type { JobWorkerOptions } from '@lectern/jobs';
import { OutboundEnv } from '@lectern/outbound';
import { directionOf } from '@lectern/courses';
import { generateCourse, type GenerateDeps } from './generate.js';
import { openAiProvider, type GenerationProvider } from './provider.js';

export const GENERATION_KIND = 'generation.run' as const;
export const GENERATION_WORKER_APP = 'generation-worker';

/** What the generation worker reads: its settings and the outbound policy for `sourceUrl`. */
export { GenerationEnv, type GenerationConfig };

export const GENERATION_WORKER_ENV = [GenerationEnv, OutboundEnv] as const;

/** Why generation cannot run with these settings, naming what to set; null when a provider is configured. */
export function generationProviderProblem(cfg: Partial<GenerationConfig>): string | null {
  const missing = (['GENERATION_BASE_URL', 'GENERATION_MODEL'] as const).filter((k) => !cfg[k]);
  if (missing.length === 0) return null;
  return (
    `AI generation has no model provider: set ${missing.join(' and ')} ` +
    '(an OpenAI-compatible chat-completions endpoint, e.g. GENERATION_BASE_URL=http://ollama:11434/v1 ' +
    'GENERATION_MODEL=llama3.1:8b; GENERATION_API_KEY when the server needs one)'
  );
}

export interface GenerationJobSettings {
  cfg: GenerationConfig;
  allowPrivate: boolean;
  /** Tests and benches: a provider other than the OpenAI client, or the outbound address policy. */
  provider?: GenerationProvider;
  isForbidden?: (address: string) => boolean;
  /** Waits between provider retries (tests shorten them). */
  backoffMs?: readonly number[];
}

/** The `generation.run` entry of the job registry. */
export function generationJob(settings: GenerationJobSettings): JobWorkerOptions<typeof GENERATION_KIND> {
  const { cfg } = settings;
  let provider = settings.provider;
  const deps = (): GenerateDeps => {
    if (!provider) {
      const problem = generationProviderProblem(cfg);
      if (problem) throw new AppError('unavailable', problem, { retryable: false });
      provider = openAiProvider({
        baseUrl: cfg.GENERATION_BASE_URL!,
        apiKey: cfg.GENERATION_API_KEY,
        model: cfg.GENERATION_MODEL!,
        attemptTimeoutMs: cfg.GENERATION_TIMEOUT_MS,
        ...(settings.backoffMs ? { backoffMs: settings.backoffMs } : {}),
      });
    }
    return {
      provider,
      outbound: {
        allowPrivate: settings.allowPrivate,
        ...(settings.isForbidden ? { isForbidden: settings.isForbidden } : {}),
      },
    };
  };
  return {
    kind: GENERATION_KIND,
    app: GENERATION_WORKER_APP,
    concurrency: cfg.GENERATION_CONCURRENCY,
    // The handler is silent while the model writes; redelivery only after the deadline could have passed.
    ackWaitMs: Math.max(30_000, cfg.GENERATION_TIMEOUT_MS + 10_000),
    async handler(job, ctx) {
      const draft = await generateCourse(deps(), job.input, ctx.signal);
      // The plan is read now: a workspace downgraded while the job waited gets its new plan's ceilings.
      const ws = await workspaceForImport(ctx.em, job.workspaceId);
      const course = await createCourse(
        ctx.em,
        ws,
        {
          title: draft.title,
          screens: draft.screens,
          locale: job.input.locale,
          direction: directionOf(job.input.locale),
        },
        { sourceKind: 'generated' },
      );
      ctx.log.info(
        { courseId: course.id, screens: draft.screens.length, dropped: draft.droppedBlocks.length },
        'course generated',
      );
      return { courseId: course.id, droppedBlocks: draft.droppedBlocks };
    },
  };
}
