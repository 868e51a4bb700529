import { createWriteStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Transform, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { AppError } from '@lectern/errors';
import { newId, boundQuery, type MikroORM } from '@lectern/db';
import { requestJob, type Bus, type BusNames } from '@lectern/bus';
import type { Logger } from '@lectern/log';
import type { Storage } from '@lectern/storage';
import { JOB_SPECS, type JobCommand, type JobInput, type JobKind, type JobResult } from '@lectern/contracts';
import { fromStoredError, jobTimeoutError, type StoredJobError } from './job-errors.js';

/** `<prefix>.jobs.<capability>.<verb>`, e.g. `lectern.jobs.csv.import` (STYLE.md naming). */
export function jobSubject(names: BusNames, kind: string): string {
  return names.subject('jobs', ...kind.split('.'));
}

/**
 * Object-store key of a job's blob. Keyed by the job id, so a redelivery reads the same
 * bytes. By default blobs are not deleted when the job ends (a failed import can be looked
 * at); production expires the `jobs/` prefix with a bucket lifecycle rule (docs/jobs.md). A
 * kind whose uploads are large and untrusted (SCORM packages) asks the worker to delete them
 * when the job ends (`deleteBlobsWhenDone`).
 */
export function jobBlobKey(jobId: string, name: string): string {
  if (!/^[A-Za-z0-9._-]{1,100}$/.test(name))
    throw new RangeError(`job blob name "${name}" must be 1-100 of [A-Za-z0-9._-]`);
  return `jobs/${jobId}/${name}`;
}

/** A blob held in memory (small inputs: a CSV file). */
export interface BufferJobBlob {
  body: Buffer;
  contentType?: string;
}

/**
 * A blob read from a stream (an upload still arriving) and never held in memory: it is
 * spooled to a temp file while its bytes are counted, then streamed to the object store
 * with its length. Past `limit` bytes the read stops at once and `tooLarge()` is thrown;
 * the source is unpiped, not destroyed, so the caller can still answer on its socket.
 */
export interface StreamJobBlob {
  stream: Readable;
  limit: number;
  tooLarge: () => Error;
  contentType?: string;
}

export type JobBlob = BufferJobBlob | StreamJobBlob;

/** What the API half uses: PostgreSQL (the job row), NATS, the object store (blobs) and a log. */
export interface SyncJobDeps {
  orm: MikroORM;
  bus: Bus;
  /** `putFile` is needed for stream blobs, `remove` to drop blobs of a job that never ran. */
  storage: Pick<Storage, 'put'> & Partial<Pick<Storage, 'putFile' | 'remove'>>;
  log: Logger;
}

export interface SyncJobOptions<K extends JobKind> {
  workspaceId: string;
  kind: K;
  input: JobInput<K>;
  /** Large inputs, stored under `jobs/<jobId>/<name>` before the job exists; the worker reads them by name. */
  blobs?: Record<string, JobBlob>;
  /** How long the caller waits for the worker (the per-kind deadline). */
  timeoutMs: number;
  /** Words for the timeout message, e.g. "CSV import". Default: the kind. */
  what?: string;
  /** The kind's worker deletes the blobs when the job ends; the API deletes them when the job never ran. */
  deleteBlobsWhenDone?: boolean;
}

export interface SyncJobOutcome<K extends JobKind> {
  jobId: string;
  result: JobResult<K>;
}

interface JobRow {
  status: 'queued' | 'processing' | 'completed' | 'failed';
  result: unknown;
  error: StoredJobError | null;
}

const unavailable = (what: string, cause: unknown) =>
  new AppError('unavailable', `${what} is unreachable; retry shortly`, { cause, retryAfter: 2 });

/**
 * Copies `blob.stream` to a file in a new temp folder, counting bytes; returns the folder.
 * Over the limit (or on a source error) the folder is removed and the error thrown.
 */
export async function spoolToFile(blob: StreamJobBlob): Promise<{ dir: string; file: string; size: number }> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'lectern-blob-'));
  const file = path.join(dir, 'blob');
  let size = 0;
  const counter = new Transform({
    transform(chunk: Buffer, _enc, cb) {
      size += chunk.length;
      if (size > blob.limit) cb(blob.tooLarge());
      else cb(null, chunk);
    },
  });
  try {
    await new Promise<void>((resolve, reject) => {
      // Piped by hand, not through pipeline(): pipeline would destroy the source (the
      // request, and with it the socket the 413 must go out on). `pipe` unpipes on error.
      blob.stream.once('error', reject);
      blob.stream.once('aborted', () =>
        reject(new AppError('invalid_request', 'The upload was interrupted')),
      );
      blob.stream.pipe(counter);
      pipeline(counter, createWriteStream(file)).then(resolve, reject);
    });
  } catch (err) {
    blob.stream.unpipe(counter);
    await rm(dir, { recursive: true, force: true });
    throw err;
  }
  return { dir, file, size };
}

async function putBlob(deps: SyncJobDeps, key: string, blob: JobBlob): Promise<void> {
  if ('body' in blob) {
    try {
      await deps.storage.put(key, blob.body, blob.contentType);
    } catch (err) {
      throw unavailable('The object store', err);
    }
    return;
  }
  const putFile = deps.storage.putFile;
  if (!putFile) throw new AppError('internal_error', 'this object store cannot take a streamed blob');
  const spooled = await spoolToFile(blob);
  try {
    await putFile(key, spooled.file, blob.contentType);
  } catch (err) {
    throw unavailable('The object store', err);
  } finally {
    await rm(spooled.dir, { recursive: true, force: true });
  }
}

async function removeBlobs(deps: SyncJobDeps, keys: string[]): Promise<void> {
  for (const key of keys) {
    await deps.storage.remove?.(key).catch((err: unknown) => {
      deps.log.warn({ err, key }, 'job blob not removed; the jobs/ lifecycle rule will expire it');
    });
  }
}

/**
 * The API half of a synchronous command (DESIGN.md "Synchronous commands"):
 *
 * 1. blobs go to the object store under `jobs/<jobId>/…` (before the row, so a worker
 *    never claims a job whose bytes are missing);
 * 2. a `queued` job row is written (the input, and the blob keys in `input.blobs`);
 * 3. `{jobId, workspaceId, kind}` is published on `<prefix>.jobs.<kind>` with msg id =
 *    job id, after subscribing to the done subject; the call waits up to `timeoutMs`;
 * 4. the job row, not the notice, decides the answer: `completed` → its result;
 *    `failed` → the worker's AppError, rethrown as it was stored; still `queued` or
 *    `processing` → a 504 `timeout` naming the job id (the job is left to complete).
 *
 * A publish that fails (NATS down) fails the still-queued job and answers 503, so nothing
 * runs behind the caller's back after an error it was told to retry.
 */
export async function runSyncJob<K extends JobKind>(
  deps: SyncJobDeps,
  opts: SyncJobOptions<K>,
): Promise<SyncJobOutcome<K>> {
  const spec = JOB_SPECS[opts.kind];
  const jobId = newId('job');
  const blobKeys: Record<string, string> = {};
  for (const [name, blob] of Object.entries(opts.blobs ?? {})) {
    const key = jobBlobKey(jobId, name);
    try {
      await putBlob(deps, key, blob);
    } catch (err) {
      // A blob refused half-way (too large, interrupted) or a store outage: no job, no blobs left behind.
      await removeBlobs(deps, Object.values(blobKeys));
      throw err;
    }
    blobKeys[name] = key;
  }
  const input = {
    ...(opts.input as Record<string, unknown>),
    ...(Object.keys(blobKeys).length ? { blobs: blobKeys } : {}),
  };
  const em = deps.orm.em.fork();
  await boundQuery(
    em,
    `insert into jobs (id, workspace_id, kind, status, input, attempts, created_at, updated_at)
     values (?, ?, ?, 'queued', ?::jsonb, 0, now(), now())`,
    [jobId, opts.workspaceId, opts.kind, JSON.stringify(input)],
  );

  const command: JobCommand = { jobId, workspaceId: opts.workspaceId, kind: opts.kind };
  try {
    await requestJob(deps.bus, jobSubject(deps.bus.names, opts.kind), jobId, command, opts.timeoutMs);
  } catch (err) {
    // Guarded on `queued`: if the publish did land and a worker already took the job, its outcome stands.
    const stored: StoredJobError = {
      code: 'unavailable',
      message: 'The job queue was unreachable; the job never ran',
    };
    const failed = await boundQuery(
      em,
      `update jobs set status = 'failed', error = ?::jsonb, completed_at = now(), updated_at = now()
        where id = ? and status = 'queued' returning id`,
      [JSON.stringify(stored), jobId],
    );
    if (failed.length > 0) {
      deps.log.warn({ err, jobId, kind: opts.kind }, 'job publish failed; job failed');
      if (opts.deleteBlobsWhenDone) await removeBlobs(deps, Object.values(blobKeys));
      throw unavailable('The job queue', err);
    }
  }

  const [row] = await boundQuery<JobRow>(em, 'select status, result, error from jobs where id = ?', [jobId]);
  if (!row) throw new AppError('internal_error', `Job ${jobId} disappeared`);
  if (row.status === 'completed') {
    const parsed = spec.result.safeParse(row.result);
    if (!parsed.success)
      throw new AppError('internal_error', `Job ${jobId} completed with a result that fails its schema`, {
        cause: parsed.error,
      });
    return { jobId, result: parsed.data as JobResult<K> };
  }
  if (row.status === 'failed') throw fromStoredError(row.error, jobId);
  throw jobTimeoutError(jobId, opts.what ?? `${opts.kind} job`, opts.timeoutMs);
}
