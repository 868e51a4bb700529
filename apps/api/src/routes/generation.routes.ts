import type { ApiRouter } from '../http/router.js';
import type { RouteDeps } from '../deps.js';
import {
  ErrorBody,
  GenerateBody,
  GenerationJobResponse,
  GenerationQueuedResponse,
  SCREENS_TARGET_DEFAULT,
} from '@lectern/contracts';
import { AppError } from '@lectern/errors';
import { fingerprintJson } from '@lectern/idempotency';
import { generationProviderProblem, getGenerationJob, queueGeneration } from '@lectern/generation';
import { planGate } from '../http/plan-gate.js';
import { withIdempotency } from '../http/idempotency.js';
import { errorResponses } from './shared.js';

const tags = ['Generation'] as const;

/** POST /generate and GET /generate/:id (SPEC.md "Generation", docs/generation.md). */
export function generationRoutes(api: ApiRouter, deps: Pick<RouteDeps, 'orm' | 'bus' | 'log' | 'cfg'>) {
  const em = () => deps.orm.em.fork();

  api.route(
    {
      method: 'post',
      path: '/generate',
      operationId: 'createGenerationJob',
      summary: 'Start generating a draft course with AI',
      description:
        'Build plan or higher (403 plan_required naming Build). Queues a job and answers 202 with its id at once; poll GET /generate/:id. ' +
        `\`prompt\` 1–2,000 characters; \`screensTarget\` 1–20 (default ${SCREENS_TARGET_DEFAULT}); \`sourceUrl\` an http(s) page (HTML, text or Markdown, at most 2 MB) the course is grounded in; ` +
        '`locale` a BCP-47 code (default en) that also sets the reading direction. ' +
        'Over the month’s allowance (Build 100, Scale 500, Partner unlimited): 429 rate_limited naming the limit, and no job; a failed job is not counted. ' +
        'A Sandbox workspace at its course ceiling: 403 plan_required. No model provider configured: 503 service_unavailable naming the settings. ' +
        '`Idempotency-Key` header: the same key and body within 24 h answers 200 with the first answer and queues nothing; another body with the key is 409 conflict.',
      tags,
      body: GenerateBody,
      responses: {
        202: { description: 'The queued job', schema: GenerationQueuedResponse },
        ...errorResponses,
        200: {
          description: 'Idempotent replay: the first answer to this Idempotency-Key',
          schema: GenerationQueuedResponse,
        },
        409: {
          description: 'conflict: the Idempotency-Key was used with another body, or is in use',
          schema: ErrorBody,
        },
        429: {
          description:
            'rate_limited: the monthly generation allowance is used (message names the limit), or the request rate',
          schema: ErrorBody,
        },
        503: {
          description: 'service_unavailable: no model provider configured (message names the settings)',
          schema: ErrorBody,
        },
      },
    },
    planGate('generation'),
    async (ctx) => {
      const body = ctx.state.body;
      const ws = ctx.state.auth.workspace;
      await withIdempotency(
        ctx,
        em(),
        { scope: 'createGenerationJob', fingerprint: fingerprintJson(body) },
        async () => {
          const problem = generationProviderProblem(deps.cfg);
          if (problem) throw new AppError('unavailable', problem, { retryable: false });
          const job = await queueGeneration(
            { orm: deps.orm, bus: deps.bus, log: deps.log, timeoutMs: deps.cfg.GENERATION_TIMEOUT_MS },
            ws,
            body,
          );
          ctx.status = 202;
          ctx.set('Location', `${api.prefix}/generate/${encodeURIComponent(job.id)}`);
          ctx.body = { data: { id: job.id, status: 'queued' } };
        },
      );
    },
  );

  api.route(
    {
      method: 'get',
      path: '/generate/:id',
      operationId: 'getGenerationJob',
      summary: 'Get a generation job',
      description:
        'Build plan or higher. The job: `status` queued → processing → completed (with `courseId`, a draft course) or failed (with `error`). ' +
        '`droppedBlocks` lists the generated blocks and screens left out as malformed, with the reasons. 404 for another workspace’s job.',
      tags,
      responses: {
        200: { description: 'The generation job', schema: GenerationJobResponse },
        ...errorResponses,
      },
    },
    planGate('generation'),
    async (ctx) => {
      ctx.body = { data: await getGenerationJob(em(), ctx.state.auth.workspace.id, ctx.params.id) };
    },
  );
}
