import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { AppError, isRetryable } from '@lectern/errors';
import { boundQuery, type EntityManager, type MikroORM } from '@lectern/db';
import { notifyJobDone, runConsumer, type Bus, type ConsumerHandle } from '@lectern/bus';
import type { Logger } from '@lectern/log';
import type { Metrics } from '@lectern/metrics';
import type { Storage } from '@lectern/storage';
import type { JobCommand, JobInput, JobKind, JobResult } from '@lectern/contracts';
import { toStoredError, type StoredJobError } from './job-errors.js';
import { jobKindSpec, type JobKindSpec } from './job-kind.js';
import { failDueJob, startJobSweeper, type JobSweeperOptions } from './job-sweeper.js';

/** A job as its handler sees it, after the claim. */
export interface ClaimedJobOf<N extends string, In> {
  id: string;
  workspaceId: string;
  kind: N;
  /** Parsed with the kind's input schema. */
  input: In;
  /** Blob name → object-store key (`jobs/<jobId>/<name>`). */
  blobs: Record<string, string>;
  /** 1 on the first claim; counts every claim, including redeliveries after a crash. */
  attempt: number;
}

export type ClaimedJob<K extends JobKind> = ClaimedJobOf<K, JobInput<K>>;

export interface JobContext {
  /**
   * The transaction the job's completion is written in. Domain rows written through it
   * commit together with the job's result, or not at all.
   */
  em: EntityManager;
  log: Logger;
  /**
   * The bytes of a blob stored with the job, read from the object store before the job's
   * transaction began (no transaction or row lock is held across object-store I/O). A name
   * the job has no blob for is not retried.
   */
  readBlob(name: string): Promise<Buffer>;
  /**
   * For a kind whose `blobsAs` is `file`: the path of a temp file holding the blob, streamed
   * from the object store before the transaction began (never whole in memory). The file is
   * removed when the delivery ends.
   */
  blobFile(name: string): string;
  /**
   * Fires at the job's deadline (asynchronous kinds; never for synchronous ones), when the sweeper fails the job
   * as `timeout`: stop work then. Whatever the handler returns afterwards is not written over the failure.
   */
  signal: AbortSignal;
}

/** What `processJob` uses: PostgreSQL, NATS (done notices) and the object store (job blobs). */
export interface JobDeps {
  orm: MikroORM;
  bus: Bus;
  /** `getToFile` for kinds that read blobs as files, `remove` for kinds that delete them when done. */
  storage: Pick<Storage, 'get'> & Partial<Pick<Storage, 'getToFile' | 'remove'>>;
}

/** What a job worker uses: `JobDeps`, plus where it logs and counts. */
export interface JobWorkerDeps extends JobDeps {
  log: Logger;
  metrics?: Pick<Metrics, 'jobs' | 'consumerMessage'>;
}

export type JobHandlerOf<N extends string, In, Out> = (
  job: ClaimedJobOf<N, In>,
  ctx: JobContext,
) => Promise<Out>;
export type JobHandler<K extends JobKind> = JobHandlerOf<K, JobInput<K>, JobResult<K>>;

/** A worker of any kind described by a `JobKindSpec` (the lower layer; `JobWorkerOptions` is the typed one). */
export interface JobWorkerOptionsOf<N extends string, In, Out> {
  kind: N;
  /** Durable consumer name (`<prefix>_<app>`): every copy of a worker shares it, and so shares the queue. */
  app: string;
  handler: JobHandlerOf<N, In, Out>;
  /** Jobs run at once by this process. */
  concurrency?: number;
  /** Redelivery after a silent worker; the handler heartbeats meanwhile. Longer than the slowest step. */
  ackWaitMs?: number;
  /**
   * Deliveries before a retryable failure becomes the job's final error. An asynchronous kind defaults to its
   * `maxAttempts` + 1: the extra delivery finds a job whose worker died on its last attempt and fails it.
   */
  maxDeliver?: number;
  backoffMs?: (deliveryCount: number) => number;
  /**
   * How the handler gets its blobs: `buffer` (default) reads each into memory (`readBlob`);
   * `file` streams each to a temp file (`blobFile`), for inputs up to 100 MB.
   */
  blobsAs?: 'buffer' | 'file';
  /**
   * Delete the job's blobs once the job has ended (completed, or failed for good), so an
   * untrusted upload does not outlive its job. A delivery that will be retried keeps them.
   */
  deleteBlobsWhenDone?: boolean;
  /**
   * The handler writes nothing but its result (an export: it reads rows and writes to the object store). It then
   * runs outside any transaction, on a fresh EntityManager, so no connection or row lock is held across its slow
   * network and disk work; the result is written afterwards in a short transaction that still checks the job is
   * this delivery's to finish.
   */
  readsOnly?: boolean;
  /** Asynchronous kinds: the sweeper this worker starts (docs/jobs.md "Asynchronous jobs"). */
  sweeper?: JobSweeperOptions;
}

export type JobWorkerOptions<K extends JobKind> = JobWorkerOptionsOf<K, JobInput<K>, JobResult<K>>;

export type JobOutcome = 'completed' | 'failed' | 'skipped';

export interface JobWorkerHandle {
  stop(): Promise<void>;
  inFlight(): number;
  /** What this process did with the messages it took, since it started. */
  stats(): Record<JobOutcome, number>;
}

interface ClaimRow {
  id: string;
  workspace_id: string;
  input: Record<string, unknown> | null;
  attempts: number;
  max_attempts: number | null;
  /** Until the deadline by the database's clock; null for a synchronous job. */
  remaining_ms: number | null;
}

const MAX_TIMER_MS = 2 ** 31 - 1;

/** Thrown inside the completing transaction to roll back the handler's rows when the job ended meanwhile. */
class EndedMeanwhile extends Error {}

export const JOB_DEFAULTS = { concurrency: 4, ackWaitMs: 30_000, maxDeliver: 5 } as const;

/** Ends a job of `kind` as failed unless it already ended; returns whether this call ended it. */
async function failJob(
  em: EntityManager,
  jobId: string,
  kind: string,
  error: StoredJobError,
): Promise<boolean> {
  const rows = await boundQuery(
    em,
    `update jobs set status = 'failed', error = ?::jsonb, result = null, completed_at = now(), updated_at = now()
      where id = ? and kind = ? and status in ('queued', 'processing') returning id`,
    [JSON.stringify(error), jobId, kind],
  );
  return rows.length > 0;
}

/**
 * Every blob of a job, read into memory. Done before the job's transaction opens, so no
 * database connection or job-row lock waits on the object store (a SCORM or media package
 * may be 100 MB). A store outage throws, and the delivery is retried like any fault.
 */
async function readBlobs(
  storage: Pick<Storage, 'get'>,
  blobs: Record<string, string>,
): Promise<Map<string, Buffer>> {
  const entries = await Promise.all(
    Object.entries(blobs).map(async ([name, key]) => [name, await storage.get(key)] as const),
  );
  return new Map(entries);
}

/** Every blob of a job streamed to a file of a new temp folder (same timing as `readBlobs`). */
async function downloadBlobs(
  storage: JobDeps['storage'],
  blobs: Record<string, string>,
  dir: string,
): Promise<Map<string, string>> {
  const getToFile = storage.getToFile;
  if (!getToFile) throw new AppError('internal_error', 'this object store cannot stream blobs to files');
  const files = new Map<string, string>();
  for (const [name, key] of Object.entries(blobs)) {
    const file = path.join(dir, name);
    await getToFile(key, file);
    files.set(name, file);
  }
  return files;
}

async function deleteBlobs(storage: JobDeps['storage'], blobs: Record<string, string>, log: Logger) {
  for (const key of Object.values(blobs)) {
    await storage.remove?.(key).catch((err: unknown) => {
      log.warn({ err, key }, 'job blob not removed; the jobs/ lifecycle rule will expire it');
    });
  }
}

function blobsOf(input: Record<string, unknown> | null): Record<string, string> {
  const raw = input?.blobs;
  if (!raw || typeof raw !== 'object') return {};
  return Object.fromEntries(
    Object.entries(raw as Record<string, unknown>).filter(
      (e): e is [string, string] => typeof e[1] === 'string',
    ),
  );
}

/**
 * Runs one delivery of a job command. Exported so tests can drive it without the bus.
 * Returns what happened; throws only when the failure should be retried (the consumer naks
 * it with backoff).
 *
 * - The claim is one atomic UPDATE (`queued|processing` → `processing`, attempts + 1,
 *   `started_at` on the first). A job that already ended is not claimed: the done notice is
 *   sent again (the API may still be waiting) and nothing else happens. An asynchronous job
 *   past its deadline or out of attempts is not claimed either: it is failed (once, whoever
 *   gets there first: this claim or a sweeper).
 * - The job's blobs are read from the object store next, outside any transaction.
 * - The handler's rows and the job's result are written in one transaction that checks,
 *   under the job row's lock, that the job is still `processing`. Two deliveries of one job
 *   (a redelivery racing a slow worker) therefore produce one set of domain rows. A
 *   synchronous kind locks the row before its handler runs, so the second delivery waits
 *   and then does nothing. An asynchronous kind takes the lock only after its handler, so a
 *   hung handler never blocks the sweeper; if the job ended meanwhile (failed at its
 *   deadline, completed by another delivery), the handler's rows are rolled back.
 * - A non-retryable AppError, or any error on the last delivery (or last attempt), ends the
 *   job as `failed` with `{code, message, issues, details}`; then the done notice.
 */
export async function processJob<K extends JobKind>(
  deps: JobDeps,
  opts: Pick<
    JobWorkerOptions<K>,
    'kind' | 'handler' | 'maxDeliver' | 'blobsAs' | 'deleteBlobsWhenDone' | 'readsOnly'
  >,
  cmd: JobCommand,
  deliveryCount: number,
  log: Logger,
): Promise<JobOutcome> {
  return processJobOf(deps, jobKindSpec(opts.kind), opts, cmd, deliveryCount, log);
}

/** `processJob` for a kind given by its spec (the lower layer; a test's own kind). */
export async function processJobOf<N extends string, In, Out>(
  deps: JobDeps,
  spec: JobKindSpec<N, In, Out>,
  opts: Pick<
    JobWorkerOptionsOf<N, In, Out>,
    'handler' | 'maxDeliver' | 'blobsAs' | 'deleteBlobsWhenDone' | 'readsOnly'
  >,
  cmd: JobCommand,
  deliveryCount: number,
  log: Logger,
): Promise<JobOutcome> {
  const kind = spec.kind;
  const maxDeliver = opts.maxDeliver ?? defaultMaxDeliver(spec);
  const em = deps.orm.em.fork();
  // Null-safe on deadline_at and max_attempts: a synchronous job has neither and is claimed as before.
  const [claimed] = await boundQuery<ClaimRow>(
    em,
    `update jobs set status = 'processing', attempts = attempts + 1,
            started_at = coalesce(started_at, now()), updated_at = now()
      where id = ? and kind = ? and status in ('queued', 'processing')
        and (max_attempts is null or attempts < max_attempts)
        and (deadline_at is null or deadline_at > now())
     returning id, workspace_id, input, attempts, max_attempts,
               (extract(epoch from deadline_at - now()) * 1000)::float8 as remaining_ms`,
    [cmd.jobId, kind],
  );
  if (!claimed) {
    const [row] = await boundQuery<{ status: string; kind: string }>(
      em,
      'select status, kind from jobs where id = ?',
      [cmd.jobId],
    );
    if (!row) {
      log.warn({ jobId: cmd.jobId }, 'job row not found (workspace deleted?); dropping the message');
    } else if (row.kind !== kind) {
      log.error(
        { jobId: cmd.jobId, kind: row.kind, expected: kind },
        'job of another kind on this subject; dropping the message',
      );
    } else if (await failDueJob(em, cmd.jobId)) {
      log.warn({ jobId: cmd.jobId, kind }, 'job past its deadline or out of attempts; job failed');
      notifyJobDone(deps.bus, cmd.jobId);
      return 'failed';
    } else {
      log.info({ jobId: cmd.jobId, status: row.status }, 'job already ended; redelivery ignored');
      notifyJobDone(deps.bus, cmd.jobId);
    }
    return 'skipped';
  }

  const jobLog = log.child({ jobId: claimed.id, kind, attempt: claimed.attempts });
  const blobs = blobsOf(claimed.input);
  const input = spec.input.safeParse(claimed.input ?? {});
  if (!input.success) {
    jobLog.error({ issues: input.error.issues }, 'job input fails its schema; job failed');
    await failJob(em, claimed.id, kind, { code: 'internal_error', message: 'The job input is invalid' });
    notifyJobDone(deps.bus, claimed.id);
    return 'failed';
  }
  const job: ClaimedJobOf<N, In> = {
    id: claimed.id,
    workspaceId: claimed.workspace_id,
    kind,
    input: input.data,
    blobs,
    attempt: claimed.attempts,
  };

  const deadline = new AbortController();
  const deadlineTimer =
    claimed.remaining_ms === null
      ? undefined
      : setTimeout(
          () => deadline.abort(new AppError('timeout', `job ${job.id} reached its deadline`)),
          // setTimeout fires at once past 2^31-1 ms; a deadline beyond ~24 days is the sweeper's alone.
          Math.min(Math.max(0, claimed.remaining_ms), MAX_TIMER_MS),
        );
  let tmpDir: string | null = null;
  const ended = async () => {
    if (opts.deleteBlobsWhenDone) await deleteBlobs(deps.storage, blobs, jobLog);
  };
  try {
    const asFiles = opts.blobsAs === 'file';
    if (asFiles) tmpDir = await mkdtemp(path.join(os.tmpdir(), 'lectern-job-'));
    const bytes = asFiles ? new Map<string, Buffer>() : await readBlobs(deps.storage, blobs);
    const files = tmpDir ? await downloadBlobs(deps.storage, blobs, tmpDir) : new Map<string, string>();
    const contextOf = (handlerEm: EntityManager): JobContext => ({
      em: handlerEm,
      log: jobLog,
      signal: deadline.signal,
      async readBlob(name) {
        const body = bytes.get(name);
        if (!body)
          throw new AppError('internal_error', `job ${job.id} has no blob "${name}"`, { retryable: false });
        return body;
      },
      blobFile(name) {
        const file = files.get(name);
        if (!file)
          throw new AppError('internal_error', `job ${job.id} has no blob file "${name}"`, {
            retryable: false,
          });
        return file;
      },
    });
    const checkResult = (result: unknown): Out => {
      const checked = spec.result.safeParse(result);
      if (!checked.success) {
        throw new AppError('internal_error', `the ${kind} handler returned a result that fails its schema`, {
          retryable: false,
          cause: checked.error,
        });
      }
      return checked.data;
    };
    const stillProcessing = async (tx: EntityManager): Promise<boolean> => {
      const [locked] = await boundQuery<{ status: string }>(
        tx,
        'select status from jobs where id = ? for update',
        [job.id],
      );
      return locked?.status === 'processing';
    };
    const lockLate = spec.mode === 'async';
    // A reads-only handler runs before the transaction, on its own EntityManager (no connection held meanwhile).
    const early = opts.readsOnly ? checkResult(await opts.handler(job, contextOf(em.fork()))) : undefined;
    const completed = await em
      .transactional(async (tx) => {
        if (!lockLate && !(await stillProcessing(tx))) return false;
        const result = early ?? checkResult(await opts.handler(job, contextOf(tx)));
        // Flush what the handler left in the unit of work before the job is marked done.
        await tx.flush();
        if (lockLate && !(await stillProcessing(tx))) throw new EndedMeanwhile();
        await boundQuery(
          tx,
          // clock_timestamp(), not now(): now() is when the transaction began, before the handler ran.
          `update jobs set status = 'completed', result = ?::jsonb, error = null,
                  completed_at = clock_timestamp(), updated_at = clock_timestamp()
            where id = ?`,
          [JSON.stringify(result), job.id],
        );
        return true;
      })
      .catch((err: unknown) => {
        if (err instanceof EndedMeanwhile) return false;
        throw err;
      });
    if (completed) await ended();
    notifyJobDone(deps.bus, job.id);
    if (!completed) {
      jobLog.info('job ended by another delivery or the sweeper meanwhile; nothing written');
      return 'skipped';
    }
    jobLog.info('job completed');
    return 'completed';
  } catch (err) {
    if (deadline.signal.aborted) {
      // The handler stopped at its deadline: the job ends as the sweeper ends it (if it has not already).
      jobLog.warn({ err }, 'job stopped at its deadline');
      if (await failDueJob(em, job.id)) await ended();
      notifyJobDone(deps.bus, job.id);
      return 'failed';
    }
    const attemptsLeft = claimed.max_attempts === null || claimed.attempts < claimed.max_attempts;
    const retry = isRetryable(err) && deliveryCount < maxDeliver && attemptsLeft;
    if (retry) {
      // Leave the job `processing`; the consumer naks the message with backoff.
      throw err;
    }
    const stored = toStoredError(err);
    if (stored.code === 'internal_error' || stored.code === 'unavailable' || stored.code === 'timeout') {
      jobLog.error({ err, deliveryCount }, 'job failed');
    } else {
      jobLog.info({ code: stored.code, message: stored.message }, 'job refused');
    }
    if (await failJob(em, job.id, kind, stored)) await ended();
    notifyJobDone(deps.bus, job.id);
    return 'failed';
  } finally {
    clearTimeout(deadlineTimer);
    if (tmpDir) await rm(tmpDir, { recursive: true, force: true });
  }
}

/** Synchronous kinds: `JOB_DEFAULTS.maxDeliver`; asynchronous: one delivery past the last attempt. */
function defaultMaxDeliver(spec: { mode: 'sync' } | { mode: 'async'; maxAttempts: number }): number {
  return spec.mode === 'async' ? spec.maxAttempts + 1 : JOB_DEFAULTS.maxDeliver;
}

/**
 * The worker half of a job kind: one durable pull consumer on `<prefix>.jobs.<kind>`,
 * running `processJob` for each message. Several processes with the same `app` share the
 * queue. A message that fails the command schema is terminated, and its job (when the id is
 * readable) is failed so the API stops waiting. A worker of an asynchronous kind also runs
 * a sweeper (`startJobSweeper`), stopped with it.
 */
export async function runJobWorker<K extends JobKind>(
  deps: JobWorkerDeps,
  opts: JobWorkerOptions<K>,
): Promise<JobWorkerHandle> {
  return runJobWorkerOf(deps, jobKindSpec(opts.kind), opts);
}

/** `runJobWorker` for a kind given by its spec (the lower layer; a test's own kind). */
export async function runJobWorkerOf<N extends string, In, Out>(
  deps: JobWorkerDeps,
  spec: JobKindSpec<N, In, Out>,
  opts: Omit<JobWorkerOptionsOf<N, In, Out>, 'kind'>,
): Promise<JobWorkerHandle> {
  const { metrics } = deps;
  const kind = spec.kind;
  const log = deps.log.child({ worker: opts.app });
  const counts: Record<JobOutcome, number> = { completed: 0, failed: 0, skipped: 0 };
  const count = (outcome: JobOutcome) => {
    counts[outcome]++;
    metrics?.jobs.inc({ kind, outcome });
  };
  const maxDeliver = opts.maxDeliver ?? defaultMaxDeliver(spec);
  const handle: ConsumerHandle = await runConsumer({
    bus: deps.bus,
    spec: {
      stream: 'JOBS',
      app: opts.app,
      filter: ['jobs', ...kind.split('.')],
      ackWaitMs: opts.ackWaitMs ?? JOB_DEFAULTS.ackWaitMs,
      maxDeliver,
    },
    // The kind's own command schema: a message for another kind on this subject is poison.
    schema: spec.command,
    log,
    concurrency: opts.concurrency ?? JOB_DEFAULTS.concurrency,
    backoffMs: opts.backoffMs,
    onMessage: metrics?.consumerMessage,
    handler: async (cmd, { deliveryCount }) => {
      count(await processJobOf(deps, spec, { ...opts, maxDeliver }, cmd, deliveryCount, log));
    },
    onGiveUp: async (payload, err) => {
      const jobId = (payload as { jobId?: unknown } | null)?.jobId;
      if (typeof jobId !== 'string' || jobId === '') return;
      // Only a job of this worker's kind: a stray message must not end another kind's job.
      const ended = await failJob(deps.orm.em.fork(), jobId, kind, toStoredError(err));
      if (ended) {
        count('failed');
        notifyJobDone(deps.bus, jobId);
      }
    },
  });
  // Started with the worker, so no other process has to be wired for asynchronous jobs to end in time.
  const sweeper = spec.mode === 'async' ? startJobSweeper(deps, opts.sweeper) : null;
  log.info({ kind, concurrency: opts.concurrency ?? JOB_DEFAULTS.concurrency }, 'job worker started');
  return {
    async stop() {
      await handle.stop();
      await sweeper?.stop();
    },
    inFlight: () => handle.inFlight(),
    stats: () => ({ ...counts }),
  };
}
