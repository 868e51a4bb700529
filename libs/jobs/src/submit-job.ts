import { AppError } from '@lectern/errors';
import { newId, boundQuery, type EntityManager, type MikroORM } from '@lectern/db';
import type { Bus } from '@lectern/bus';
import type { Logger } from '@lectern/log';
import type { AsyncJobKind, JobCommand, JobInput, JobResult } from '@lectern/contracts';
import type { StoredJobError } from './job-errors.js';
import { jobKindSpec, type AsyncJobKindSpec } from './job-kind.js';
import { jobSubject } from './run-sync-job.js';

export type JobStatus = 'queued' | 'processing' | 'completed' | 'failed';

/** A job as the API shows it (docs/jobs.md "Asynchronous jobs"). */
export interface JobRecord<Out = unknown> {
  id: string;
  workspaceId: string;
  kind: string;
  status: JobStatus;
  attempts: number;
  /** Set once `completed`, checked against the kind's result schema by whoever reads it. */
  result: Out | null;
  /** Set once `failed`: what the worker or the sweeper decided. */
  error: StoredJobError | null;
  createdAt: Date;
  /** The first claim. */
  startedAt: Date | null;
  completedAt: Date | null;
  /** Asynchronous jobs: past it the sweeper fails the job as `timeout`. */
  deadlineAt: Date | null;
}

export interface SubmitJobDeps {
  orm: MikroORM;
  bus: Bus;
  log: Logger;
}

export interface SubmitJobOptions<In> {
  workspaceId: string;
  input: In;
}

interface JobRow {
  id: string;
  workspace_id: string;
  kind: string;
  status: JobStatus;
  attempts: number;
  result: unknown;
  error: StoredJobError | null;
  created_at: Date | string;
  started_at: Date | string | null;
  completed_at: Date | string | null;
  deadline_at: Date | string | null;
}

const COLUMNS =
  'id, workspace_id, kind, status, attempts, result, error, created_at, started_at, completed_at, deadline_at';

/** node-postgres hands timestamptz back as a Date through the ORM's driver, as text through a raw query. */
function dateOf(value: Date | string): Date;
function dateOf(value: Date | string | null): Date | null;
function dateOf(value: Date | string | null): Date | null {
  return value === null ? null : new Date(value);
}

function recordOf(row: JobRow): JobRecord {
  return {
    id: row.id,
    workspaceId: row.workspace_id,
    kind: row.kind,
    status: row.status,
    attempts: row.attempts,
    result: row.result ?? null,
    error: row.error,
    createdAt: dateOf(row.created_at),
    startedAt: dateOf(row.started_at),
    completedAt: dateOf(row.completed_at),
    deadlineAt: dateOf(row.deadline_at),
  };
}

/** One job of a workspace, or null (a job of another workspace is not found either). */
export async function readJob(
  em: EntityManager,
  workspaceId: string,
  jobId: string,
): Promise<JobRecord | null> {
  const [row] = await boundQuery<JobRow>(
    em,
    `select ${COLUMNS} from jobs where id = ? and workspace_id = ?`,
    [jobId, workspaceId],
  );
  return row ? recordOf(row) : null;
}

/**
 * Writes the `queued` row of an asynchronous job, with its deadline (`now()` + the kind's, by the database's
 * clock, which the sweeper compares with) and its attempts limit. Not published: `submitJobOf` does both; alone
 * it is a job whose publish was lost, which the sweeper publishes again.
 */
export async function recordJob<N extends string, In, Out>(
  em: EntityManager,
  spec: AsyncJobKindSpec<N, In, Out>,
  opts: SubmitJobOptions<In>,
): Promise<JobRecord<Out>> {
  const input = spec.input.safeParse(opts.input);
  if (!input.success) {
    throw new AppError('internal_error', `the ${spec.kind} job input fails its schema`, {
      cause: input.error,
    });
  }
  const [row] = await boundQuery<JobRow>(
    em,
    `insert into jobs (id, workspace_id, kind, status, input, attempts, max_attempts, deadline_at,
                       created_at, updated_at)
     values (?, ?, ?, 'queued', ?::jsonb, 0, ?, now() + ?::int * interval '1 millisecond', now(), now())
     returning ${COLUMNS}`,
    [
      newId('job'),
      opts.workspaceId,
      spec.kind,
      JSON.stringify(input.data),
      spec.maxAttempts,
      spec.deadlineMs,
    ],
  );
  if (!row) throw new AppError('internal_error', 'The job row was not written');
  return { ...recordOf(row), result: null };
}

/**
 * The API half of an asynchronous job (docs/jobs.md "Asynchronous jobs"): the `queued` row, then the command on
 * `<prefix>.jobs.<kind>` (msg id = job id), and the job back at once — the caller does not wait for a worker.
 *
 * A publish that fails is logged, not thrown: the row is committed and the sweeper publishes a queued job nobody
 * claimed again, so the job still runs (or ends `timeout` at its deadline). Answering 503 here would invite a
 * resend, and with it a second job.
 */
export async function submitJobOf<N extends string, In, Out>(
  deps: SubmitJobDeps,
  spec: AsyncJobKindSpec<N, In, Out>,
  opts: SubmitJobOptions<In>,
): Promise<JobRecord<Out>> {
  const job = await recordJob(deps.orm.em.fork(), spec, opts);
  const command: JobCommand = { jobId: job.id, workspaceId: job.workspaceId, kind: spec.kind };
  try {
    await deps.bus.publish(jobSubject(deps.bus.names, spec.kind), command, { msgId: job.id });
  } catch (err) {
    deps.log.warn({ err, jobId: job.id, kind: spec.kind }, 'job publish failed; the sweeper will publish it');
  }
  return job;
}

/** `submitJobOf` for a production asynchronous kind, typed by `JOB_SPECS`. */
export async function submitJob<K extends AsyncJobKind>(
  deps: SubmitJobDeps,
  opts: SubmitJobOptions<JobInput<K>> & { kind: K },
): Promise<JobRecord<JobResult<K>>> {
  const spec = jobKindSpec(opts.kind);
  if (spec.mode !== 'async') {
    throw new AppError('internal_error', `${opts.kind} is a synchronous kind: use runSyncJob`);
  }
  return submitJobOf(deps, spec, opts);
}
