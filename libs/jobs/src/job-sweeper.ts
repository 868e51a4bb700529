import { boundQuery, type EntityManager, type MikroORM } from '@lectern/db';
import { notifyJobDone, type Bus } from '@lectern/bus';
import type { Logger } from '@lectern/log';
import { startPoller } from '@lectern/poller';
import { jobSubject } from './run-sync-job.js';

/**
 * An open asynchronous job the sweeper ends: past its deadline (any state), or queued with no claim left. A job
 * `processing` on its last attempt is not due on attempts here: its worker may still be running it.
 */
const DUE = `status in ('queued', 'processing')
  and (deadline_at <= now() or (status = 'queued' and attempts >= max_attempts))`;

/**
 * An open job a delivery may not claim: past its deadline or out of attempts. Delivered again while
 * `processing` on its last attempt means that attempt's worker went silent past AckWait (it died).
 */
const UNCLAIMABLE = `status in ('queued', 'processing') and (deadline_at <= now() or attempts >= max_attempts)`;

/**
 * The error a due job ends with, written by the statement that ends it (so a sweeper and a claim that find
 * the same job due store the same words). Past the deadline: `timeout`, naming the deadline; out of attempts:
 * `internal_error`, naming them.
 */
const ENDING = `status = 'failed', result = null, completed_at = now(), updated_at = now(),
  error = case
    when deadline_at <= now() then jsonb_build_object(
      'code', 'timeout',
      'message', format('The job did not finish within its deadline of %s s and was stopped',
                        trim_scale(round(extract(epoch from deadline_at - created_at)::numeric, 1))),
      'details', jsonb_build_object('deadlineAt', deadline_at, 'attempts', attempts))
    else jsonb_build_object(
      'code', 'internal_error',
      'message', format('The job failed after %s attempts', attempts),
      'details', jsonb_build_object('attempts', attempts))
  end`;

/**
 * Ends one job a delivery could not claim because it is out of time or attempts (or whose handler stopped at
 * its deadline); returns whether this call ended it. Conditional on the job still being open, so it and the
 * sweeper never both end a job.
 */
export async function failDueJob(em: EntityManager, jobId: string): Promise<boolean> {
  const rows = await boundQuery(
    em,
    `update jobs set ${ENDING} where id = ? and ${UNCLAIMABLE} returning id`,
    [jobId],
  );
  return rows.length > 0;
}

export interface JobSweeperDeps {
  orm: MikroORM;
  bus: Bus;
  log: Logger;
}

export interface JobSweeperOptions {
  /** Pause between passes (default 5 s). Each pass is two indexed statements. */
  intervalMs?: number;
  /**
   * A queued job nobody claimed for this long is published again (default 30 s): its first publish may have
   * failed after the row committed. JetStream drops the copy if the first one is still in the stream (same
   * msg id, the job id), and a claim of a job already taken does nothing.
   */
  republishAfterMs?: number;
  /** Rows per statement (default 100); a full batch goes round again at once. */
  batch?: number;
}

export const SWEEPER_DEFAULTS = { intervalMs: 5_000, republishAfterMs: 30_000, batch: 100 } as const;

export interface SweepOutcome {
  /** Jobs this pass ended (each ended by exactly one sweeper, whichever replica ran it). */
  failed: string[];
  /** Queued jobs published again. */
  republished: string[];
}

/**
 * One pass of the sweeper. Failing is one statement: the due rows are locked with `for update skip locked`, so
 * two sweepers (every worker and API replica may run one) take disjoint rows, and the update re-checks that the
 * job is still open, so a worker's completion or a claim's refusal that came first stands. Every job it ends
 * gets its done notice. Republishing bumps `updated_at` under the same kind of lock, so a job is published again
 * once per `republishAfterMs` whatever the number of sweepers.
 */
/**
 * The sweeper's statement that ends due jobs, a batch at a time (also read by the plan check of the tests): it
 * reads `jobs_open_deadline_idx`, which holds the open jobs only, in deadline order.
 */
export function sweepDueStatement(batch: number): { sql: string; params: unknown[] } {
  return {
    sql: `update jobs j set ${ENDING}
       from (select id from jobs
              where deadline_at is not null and ${DUE}
              order by deadline_at limit ? for update skip locked) due
      where j.id = due.id and j.status in ('queued', 'processing')
     returning j.id, j.kind`,
    params: [batch],
  };
}

export async function sweepJobs(deps: JobSweeperDeps, opts: JobSweeperOptions = {}): Promise<SweepOutcome> {
  const batch = opts.batch ?? SWEEPER_DEFAULTS.batch;
  const republishAfterMs = opts.republishAfterMs ?? SWEEPER_DEFAULTS.republishAfterMs;
  const em = deps.orm.em.fork();
  const { sql, params } = sweepDueStatement(batch);
  const failed = await boundQuery<{ id: string; kind: string }>(em, sql, params);
  for (const job of failed) {
    deps.log.warn({ jobId: job.id, kind: job.kind }, 'job swept: past its deadline or out of attempts');
    notifyJobDone(deps.bus, job.id);
  }
  const stale = await boundQuery<{ id: string; workspace_id: string; kind: string }>(
    em,
    `update jobs j set updated_at = now()
       from (select id from jobs
              where status = 'queued' and deadline_at > now() and attempts < max_attempts
                and updated_at <= now() - ?::int * interval '1 millisecond'
              order by created_at limit ? for update skip locked) stale
      where j.id = stale.id and j.status = 'queued'
     returning j.id, j.workspace_id, j.kind`,
    [republishAfterMs, batch],
  );
  const republished: string[] = [];
  for (const job of stale) {
    try {
      await deps.bus.publish(
        jobSubject(deps.bus.names, job.kind),
        { jobId: job.id, workspaceId: job.workspace_id, kind: job.kind },
        { msgId: job.id },
      );
      republished.push(job.id);
    } catch (err) {
      // Its updated_at moved: the next try is one republishAfterMs away, well before its deadline ends it.
      deps.log.warn({ err, jobId: job.id }, 'queued job not republished; will retry');
    }
  }
  if (republished.length > 0) deps.log.info({ jobs: republished }, 'stale queued jobs republished');
  return { failed: failed.map((j) => j.id), republished };
}

export interface JobSweeper {
  /** Sweep now (e.g. after a deadline a test or an operator knows has passed). */
  kick(): void;
  stop(): Promise<void>;
}

/**
 * The sweeper loop (libs/poller). Every worker of an asynchronous kind starts one; an API process may run one
 * too. Any number may run at once: each job is ended by exactly one of them.
 */
export function startJobSweeper(deps: JobSweeperDeps, opts: JobSweeperOptions = {}): JobSweeper {
  const log = deps.log.child({ component: 'job-sweeper' });
  const batch = opts.batch ?? SWEEPER_DEFAULTS.batch;
  const poller = startPoller({
    intervalMs: opts.intervalMs ?? SWEEPER_DEFAULTS.intervalMs,
    step: async () => {
      const out = await sweepJobs({ ...deps, log }, opts);
      return out.failed.length >= batch || out.republished.length >= batch;
    },
    onError: (err) => log.error({ err }, 'job sweep failed; the next pass tries again'),
  });
  return { kick: () => poller.kick(), stop: () => poller.stop() };
}
