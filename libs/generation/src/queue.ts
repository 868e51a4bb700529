import { AppError } from '@lectern/errors';
import { boundQuery, type EntityManager, type MikroORM, type PlanName } from '@lectern/db';
import type { Bus } from '@lectern/bus';
import type { Logger } from '@lectern/log';
import {
  JOB_SPECS,
  SCREENS_TARGET_DEFAULT,
  type GenerateBody,
  type GenerationJob,
  type GenerationJobInput,
  GenerationJobResult,
} from '@lectern/contracts';
import { jobSubject, readJob, recordJob, type AsyncJobKindSpec, type JobRecord } from '@lectern/jobs';
import { checkCourseCeiling, generationAllowance, PLANS } from '@lectern/plans';
import { GENERATION_KIND } from './worker.js';

/** Start of the current calendar month in UTC, the allowance period. */
function monthStart(now = new Date()): Date {
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1));
}

/**
 * Generations a workspace used this calendar month (UTC): its `generation.run` jobs created this month that did
 * not fail. A failed job gives its allowance back by not being counted (docs/generation.md "Allowance").
 */
export async function generationsUsed(
  em: EntityManager,
  workspaceId: string,
  now = new Date(),
): Promise<number> {
  const [row] = await boundQuery<{ n: number }>(
    em,
    `select count(*)::int as n from jobs
      where workspace_id = ? and kind = ? and created_at >= ? and status <> 'failed'`,
    [workspaceId, GENERATION_KIND, monthStart(now)],
  );
  return row?.n ?? 0;
}

export interface QueueGenerationDeps {
  orm: MikroORM;
  bus: Bus;
  log: Logger;
  /** GENERATION_TIMEOUT_MS: the job's deadline. */
  timeoutMs: number;
}

/** The job's input from the request: defaults filled (docs/generation.md "API"). */
export function generationInput(body: GenerateBody): GenerationJobInput {
  return {
    prompt: body.prompt,
    audience: body.audience || null,
    screensTarget: body.screensTarget ?? SCREENS_TARGET_DEFAULT,
    sourceUrl: body.sourceUrl ?? null,
    locale: body.locale ?? 'en',
  };
}

/**
 * Queues a generation job, or refuses it before anything is spent: the course ceiling (403 plan_required) and
 * the month's allowance (429 rate_limited naming the limit) are checked and the job row written in one
 * transaction under a per-workspace lock, so two concurrent requests cannot both take the last generation.
 * The command is published after the commit (a lost publish is re-published by the sweeper).
 */
export async function queueGeneration(
  deps: QueueGenerationDeps,
  ws: { id: string; plan: PlanName },
  body: GenerateBody,
): Promise<JobRecord> {
  const spec: AsyncJobKindSpec<typeof GENERATION_KIND, GenerationJobInput, GenerationJobResult> = {
    ...JOB_SPECS[GENERATION_KIND],
    deadlineMs: deps.timeoutMs,
  };
  const job = await deps.orm.em.fork().transactional(async (tx) => {
    await boundQuery(tx, 'select pg_advisory_xact_lock(hashtext(?))', [`lectern:generation:${ws.id}`]);
    if (PLANS[ws.plan].maxCourses !== null) {
      const [{ n }] = await boundQuery<{ n: number }>(
        tx,
        'select count(*)::int as n from courses where workspace_id = ?',
        [ws.id],
      );
      checkCourseCeiling(ws.plan, n);
    }
    const allowance = generationAllowance(ws.plan);
    if (allowance !== null) {
      const used = await generationsUsed(tx, ws.id);
      if (used >= allowance) {
        throw new AppError(
          'rate_limited',
          `The ${PLANS[ws.plan].label} plan allows ${allowance} AI generations per month; ${used} are used this month (UTC). ` +
            'The allowance resets next month; failed generations are not counted',
          { details: { limit: allowance } },
        );
      }
    }
    return recordJob(tx, spec, { workspaceId: ws.id, input: generationInput(body) });
  });
  try {
    await deps.bus.publish(
      jobSubject(deps.bus.names, GENERATION_KIND),
      { jobId: job.id, workspaceId: ws.id, kind: GENERATION_KIND },
      { msgId: job.id },
    );
  } catch (err) {
    deps.log.warn({ err, jobId: job.id }, 'generation job publish failed; the sweeper will publish it');
  }
  return job;
}

/** A generation job of the workspace as GET /generate/:id shows it; 404 for another workspace's or kind's. */
export async function getGenerationJob(
  em: EntityManager,
  workspaceId: string,
  id: string,
): Promise<GenerationJob> {
  const job = await readJob(em, workspaceId, id);
  if (!job || job.kind !== GENERATION_KIND) throw new AppError('not_found', 'Generation job not found');
  const [row] = await boundQuery<{ input: GenerationJobInput }>(em, 'select input from jobs where id = ?', [
    id,
  ]);
  return generationJobDto(job, row!.input);
}

export function generationJobDto(job: JobRecord, input: GenerationJobInput): GenerationJob {
  const result = job.status === 'completed' ? GenerationJobResult.safeParse(job.result) : null;
  const details = job.error?.details as { droppedBlocks?: unknown } | undefined;
  const droppedOnFailure = Array.isArray(details?.droppedBlocks)
    ? (details.droppedBlocks as GenerationJob['droppedBlocks'])
    : [];
  return {
    id: job.id,
    status: job.status,
    courseId: result?.success ? result.data.courseId : null,
    prompt: input.prompt,
    sourceUrl: input.sourceUrl,
    audience: input.audience,
    screensTarget: input.screensTarget,
    locale: input.locale,
    error: job.status === 'failed' ? (job.error?.message ?? 'The generation failed') : null,
    droppedBlocks: result?.success ? result.data.droppedBlocks : droppedOnFailure,
    createdAt: job.createdAt.toISOString(),
    completedAt: job.completedAt ? job.completedAt.toISOString() : null,
  };
}
