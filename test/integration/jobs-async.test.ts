import { expect } from 'chai';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { makeWorkspace, testRuntime, type TestRuntime, type TestWorkspace } from '../support/context.js';
import { closeRuntime } from '@lectern/runtime';
import { boundQuery } from '@lectern/db';
import { AppError } from '@lectern/errors';
import {
  processJobOf,
  readJob,
  recordJob,
  runJobWorkerOf,
  submitJobOf,
  sweepDueStatement,
  sweepJobs,
  type JobRecord,
  type JobWorkerHandle,
} from '@lectern/jobs';
import { waitFor } from '../support/http.js';
import { envFor, REPO_ROOT } from '../support/spine.js';
import { testJobKind } from '../support/async-jobs.js';
import { planNodes } from '../support/plans.js';

/** Asynchronous jobs (docs/jobs.md "Asynchronous jobs") on the real PostgreSQL and NATS. */
describe('jobs: asynchronous jobs, redelivery and the sweeper (libs/jobs)', function () {
  this.timeout(60_000);
  let rt: TestRuntime;
  let ws: TestWorkspace;
  const workers: JobWorkerHandle[] = [];

  before(async () => {
    rt = await testRuntime('jobs-async');
    ws = await makeWorkspace(rt.orm.em.fork(), 'scale', 'Async jobs');
  });
  afterEach(async () => {
    // Every worker runs a sweeper: none may outlive its test and sweep the next one's jobs.
    await Promise.all(workers.splice(0).map((w) => w.stop()));
  });
  after(async () => {
    if (rt) await closeRuntime(rt, { keepStorage: true });
  });

  const job = async (id: string): Promise<JobRecord> => {
    const row = await readJob(rt.orm.em.fork(), ws.id, id);
    if (!row) throw new Error(`job ${id} not found`);
    return row;
  };
  const ended = (id: string, status: 'completed' | 'failed', timeoutMs = 20_000) =>
    waitFor(async () => ((await job(id)).status === status ? job(id) : null), {
      timeoutMs,
      intervalMs: 100,
      what: `job ${id} to be ${status}`,
    });
  /** Counts the done notices of a job (core NATS), flushed through both directions before reading. */
  const doneNotices = (jobId: string) => {
    let n = 0;
    const sub = rt.bus.nc.subscribe(rt.bus.names.jobDone(jobId));
    void (async () => {
      for await (const _ of sub) n++;
    })();
    return {
      count: () => n,
      stop: () => sub.unsubscribe(),
    };
  };

  it('submitJob answers at once with the queued job; a worker claims, runs and completes it', async () => {
    const kind = testJobKind('echo', { deadlineMs: 60_000, maxAttempts: 3 });
    // No worker yet: the answer cannot have waited for one.
    const queued = await submitJobOf(rt, kind, { workspaceId: ws.id, input: { label: 'hello' } });
    expect(queued).to.include({ status: 'queued', attempts: 0, kind: 'test.echo', result: null });
    expect(queued.startedAt).to.equal(null);
    expect(queued.deadlineAt!.getTime() - queued.createdAt.getTime()).to.equal(60_000);
    expect((await job(queued.id)).status).to.equal('queued');

    workers.push(
      await runJobWorkerOf(rt, kind, {
        app: 'test-echo',
        handler: async (j) => ({ label: j.input.label.toUpperCase(), attempt: j.attempt }),
      }),
    );
    const done = await ended(queued.id, 'completed');
    expect(done).to.include({ attempts: 1 });
    expect(done.result).to.deep.equal({ label: 'HELLO', attempt: 1 });
    expect(done.startedAt).to.be.instanceOf(Date);
    expect(done.completedAt!.getTime()).to.be.at.least(done.startedAt!.getTime());
    expect(done.error).to.equal(null);
  });

  it('a worker SIGKILLed mid-job: JetStream redelivers after AckWait and another worker completes it (attempts = 2)', async () => {
    const ackWaitMs = 1500;
    const kind = testJobKind('hold', { deadlineMs: 60_000, maxAttempts: 3 });
    const queued = await submitJobOf(rt, kind, { workspaceId: ws.id, input: { label: 'held' } });
    const child = spawn(
      process.execPath,
      [
        '--import',
        'tsx',
        path.join(REPO_ROOT, 'test/support/async-job-child.ts'),
        'hold',
        'test-hold',
        String(ackWaitMs),
        '60000',
        '3',
      ],
      { cwd: REPO_ROOT, env: envFor(rt.cfg), stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let out = '';
    let err = '';
    child.stdout!.on('data', (d) => (out += d));
    child.stderr!.on('data', (d) => (err += d));
    const exited = new Promise<void>((r) => child.once('exit', () => r()));
    try {
      await waitFor(() => out.includes(`started ${queued.id} 1`), {
        timeoutMs: 20_000,
        what: `the child worker to start the job (${err})`,
      });
      const running = await job(queued.id);
      expect(running).to.include({ status: 'processing', attempts: 1 });
      const startedAt = running.startedAt!;
      child.kill('SIGKILL');
      await exited;

      workers.push(
        await runJobWorkerOf(rt, kind, {
          app: 'test-hold',
          ackWaitMs,
          handler: async (j) => ({ label: j.input.label, attempt: j.attempt }),
        }),
      );
      const done = await ended(queued.id, 'completed');
      expect(done.attempts).to.equal(2);
      expect(done.result).to.deep.equal({ label: 'held', attempt: 2 });
      // started_at is the first claim's, not the redelivery's.
      expect(done.startedAt!.getTime()).to.equal(startedAt.getTime());
    } finally {
      child.kill('SIGKILL');
      await exited;
    }
  });

  it('a job that hangs is failed at its deadline (timeout, signal fired), and its late completion does not overwrite it', async () => {
    const kind = testJobKind('hang', { deadlineMs: 1500, maxAttempts: 3 });
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let aborted = false;
    let handlerReturned = false;
    const queued = await submitJobOf(rt, kind, { workspaceId: ws.id, input: { label: 'slow' } });
    const notices = doneNotices(queued.id);
    const worker = await runJobWorkerOf(rt, kind, {
      app: 'test-hang',
      sweeper: { intervalMs: 100 },
      handler: async (j, ctx) => {
        ctx.signal.addEventListener('abort', () => (aborted = true));
        // A write of the handler's own, which must be rolled back with its late result.
        await boundQuery(ctx.em, `update workspaces set name = 'written late' where id = ?`, [j.workspaceId]);
        await gate;
        handlerReturned = true;
        return { label: j.input.label, attempt: j.attempt };
      },
    });
    workers.push(worker);
    try {
      const failed = await ended(queued.id, 'failed');
      expect(failed.error?.code).to.equal('timeout');
      expect(failed.error?.message).to.match(/did not finish within its deadline of 1\.5 s/);
      expect(failed.completedAt).to.be.instanceOf(Date);
      await waitFor(() => aborted, { what: 'the handler signal to fire at the deadline' });
      await waitFor(() => notices.count() >= 1, { what: 'the done notice of the swept job' });
    } finally {
      release();
    }
    await waitFor(() => handlerReturned && worker.stats().skipped === 1, {
      what: 'the late completion to be refused',
    });
    const after = await job(queued.id);
    expect(after.status).to.equal('failed');
    expect(after.error?.code).to.equal('timeout');
    expect(after.result).to.equal(null);
    const [wsRow] = await boundQuery<{ name: string }>(
      rt.orm.em.fork(),
      'select name from workspaces where id = ?',
      [ws.id],
    );
    expect(wsRow.name).to.equal('Async jobs');
    expect(worker.stats()).to.deep.include({ completed: 0 });
    notices.stop();
  });

  it('two sweepers racing over the same overdue jobs: each job is ended exactly once, with one done notice', async () => {
    // A deadline already past when the row is written: nothing here depends on the wall clock.
    const kind = testJobKind('overdue', { deadlineMs: -1000, maxAttempts: 3 });
    const ids: string[] = [];
    for (let i = 0; i < 24; i++) {
      ids.push(
        (await recordJob(rt.orm.em.fork(), kind, { workspaceId: ws.id, input: { label: `j${i}` } })).id,
      );
    }
    // A synchronous job has no deadline: its caller holds it, the sweeper leaves it alone.
    const syncJob = 'job_sync_untouched';
    await boundQuery(
      rt.orm.em.fork(),
      `insert into jobs (id, workspace_id, kind, status, input, attempts, created_at, updated_at)
       values (?, ?, 'csv.import', 'processing', '{}'::jsonb, 5, now() - interval '1 day', now() - interval '1 day')`,
      [syncJob, ws.id],
    );
    // Half of them look claimed by a worker that died.
    await boundQuery(
      rt.orm.em.fork(),
      `update jobs set status = 'processing', attempts = 1 where id = any (?::text[])`,
      [ids.slice(0, 12)],
    );
    const notices = new Map<string, number>();
    const sub = rt.bus.nc.subscribe(`${rt.bus.names.prefix}.jobdone.*`);
    void (async () => {
      for await (const m of sub) {
        const id = m.subject.split('.').pop()!;
        notices.set(id, (notices.get(id) ?? 0) + 1);
      }
    })();
    const other = await testRuntime('jobs-async-sweeper-b');
    try {
      const endedBy: string[] = [];
      for (;;) {
        const [a, b] = await Promise.all([
          sweepJobs(rt, { batch: 5, republishAfterMs: 3_600_000 }),
          sweepJobs(other, { batch: 5, republishAfterMs: 3_600_000 }),
        ]);
        endedBy.push(...a.failed, ...b.failed);
        if (a.failed.length === 0 && b.failed.length === 0) break;
      }
      expect([...endedBy].sort()).to.deep.equal([...ids].sort());
      expect(new Set(endedBy).size).to.equal(ids.length);
      for (const id of ids) {
        const row = await job(id);
        expect(row.status, id).to.equal('failed');
        expect(row.error?.code, id).to.equal('timeout');
      }
      expect((await job(syncJob)).status).to.equal('processing');
      await other.bus.nc.flush();
      await rt.bus.nc.flush();
      await rt.bus.nc.flush();
      expect(ids.map((id) => notices.get(id) ?? 0)).to.deep.equal(ids.map(() => 1));
    } finally {
      sub.unsubscribe();
      await closeRuntime(other, { keepStorage: true });
    }
  });

  it('past its maximum attempts a job fails: a retried fault on the last attempt, and a redelivery after the last', async () => {
    const kind = testJobKind('retry', { deadlineMs: 60_000, maxAttempts: 2 });
    let calls = 0;
    const queued = await submitJobOf(rt, kind, { workspaceId: ws.id, input: { label: 'flaky' } });
    workers.push(
      await runJobWorkerOf(rt, kind, {
        app: 'test-retry',
        backoffMs: () => 50,
        handler: async () => {
          calls++;
          throw new AppError('unavailable', 'the model server is down', { retryable: true });
        },
      }),
    );
    const failed = await ended(queued.id, 'failed');
    expect(failed.attempts).to.equal(2);
    expect(calls).to.equal(2);
    expect(failed.error?.code).to.equal('unavailable');

    // A worker that died on the last attempt: the consumer's extra delivery finds no claim left and fails it.
    const dead = await recordJob(rt.orm.em.fork(), kind, { workspaceId: ws.id, input: { label: 'dead' } });
    await boundQuery(rt.orm.em.fork(), `update jobs set status = 'processing', attempts = 2 where id = ?`, [
      dead.id,
    ]);
    const outcome = await processJobOf(
      rt,
      kind,
      {
        handler: async () => {
          throw new Error('must not run past the last attempt');
        },
      },
      { jobId: dead.id, workspaceId: ws.id, kind: kind.kind },
      3,
      rt.log,
    );
    expect(outcome).to.equal('failed');
    const row = await job(dead.id);
    expect(row).to.include({ status: 'failed', attempts: 2 });
    expect(row.error).to.deep.include({ code: 'internal_error', message: 'The job failed after 2 attempts' });
    // A second such delivery changes nothing.
    expect(
      await processJobOf(
        rt,
        kind,
        { handler: async (j) => ({ label: j.input.label, attempt: j.attempt }) },
        { jobId: dead.id, workspaceId: ws.id, kind: kind.kind },
        4,
        rt.log,
      ),
    ).to.equal('skipped');
    expect((await job(dead.id)).error?.message).to.equal('The job failed after 2 attempts');
  });

  it('a queued job that was never published is republished by the sweeper and completes', async () => {
    const kind = testJobKind('lost', { deadlineMs: 60_000, maxAttempts: 3 });
    // The row committed, the publish never happened (as when NATS refused it).
    const lost = await recordJob(rt.orm.em.fork(), kind, { workspaceId: ws.id, input: { label: 'lost' } });
    workers.push(
      await runJobWorkerOf(rt, kind, {
        app: 'test-lost',
        sweeper: { intervalMs: 100, republishAfterMs: 200 },
        handler: async (j) => ({ label: j.input.label, attempt: j.attempt }),
      }),
    );
    const done = await ended(lost.id, 'completed');
    expect(done.attempts).to.equal(1);
    expect(done.result).to.deep.equal({ label: 'lost', attempt: 1 });
  });
  /**
   * Every process runs a sweeper pass every few seconds. Finished jobs are never due again, so a pass must not read
   * them: its index holds the open jobs only (it held every job ever submitted, and with nothing due a pass read
   * them all).
   */
  it('a sweeper pass reads the open jobs only, however many have finished', async () => {
    const em = rt.orm.em.fork();
    await boundQuery(
      em,
      `insert into jobs (id, workspace_id, kind, status, input, attempts, max_attempts, deadline_at, created_at,
                         updated_at, completed_at)
       select 'job_finished_' || i, ?, 'test.async', case when i % 2 = 0 then 'completed' else 'failed' end,
              '{}'::jsonb, 1, 3, now() - interval '1 hour', now() - interval '2 hours', now(), now()
         from generate_series(1, 5000) i`,
      [ws.id],
    );
    await boundQuery(em, 'vacuum (analyze) jobs', []);
    const nodes = await planNodes(rt.orm.em.fork(), sweepDueStatement(100), { analyze: true });
    const read = nodes
      .filter((n) => n['Relation Name'] === 'jobs')
      .reduce((sum, n) => sum + (n['Actual Rows'] ?? 0) + (n['Rows Removed by Filter'] ?? 0), 0);
    expect(read, `rows of jobs read by one pass: ${read}`).to.be.lessThan(100);
    await boundQuery(em, "delete from jobs where id like 'job_finished_%'", []);
  });
});
