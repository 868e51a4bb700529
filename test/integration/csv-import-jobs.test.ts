import { expect } from 'chai';
import pg from 'pg';
import {
  makeWorkspace,
  startTestApp,
  testRuntime,
  type TestApp,
  type TestWorkspace,
  type TestRuntime,
} from '../support/context.js';
import { waitFor } from '../support/http.js';
import { courseCount, importCsv, jobsOf, type JobRow } from '../support/csv.js';
import { closeRuntime } from '@lectern/runtime';
import { newId, boundQuery } from '@lectern/db';
import { AppError, isAppError } from '@lectern/errors';
import { CSV_BLOB, CSV_IMPORT_KIND, handleCsvImport, startCsvWorker } from '@lectern/csv-import';
import {
  jobBlobKey,
  jobSubject,
  processJob,
  runSyncJob,
  type JobHandler,
  type JobWorkerHandle,
} from '@lectern/jobs';
import type { JobCommand } from '@lectern/contracts';

const FILE = 'screen,type,text\nJobs,text,Exactly once\n';

/** A queued csv.import job written straight to the database and the store, as runSyncJob does, but not published. */
async function queuedJob(
  rt: TestRuntime,
  workspaceId: string,
  file = FILE,
  status = 'queued',
  attempts = 0,
): Promise<JobCommand> {
  const jobId = newId('job');
  const key = jobBlobKey(jobId, CSV_BLOB);
  await rt.storage.put(key, Buffer.from(file), 'text/csv');
  await boundQuery(
    rt.orm.em.fork(),
    `insert into jobs (id, workspace_id, kind, status, input, attempts, created_at, updated_at)
     values (?, ?, ?, ?, ?::jsonb, ?, now(), now())`,
    [
      jobId,
      workspaceId,
      CSV_IMPORT_KIND,
      status,
      JSON.stringify({ title: null, blobs: { [CSV_BLOB]: key } }),
      attempts,
    ],
  );
  return { jobId, workspaceId, kind: CSV_IMPORT_KIND };
}

async function jobRow(rt: TestRuntime, jobId: string): Promise<JobRow> {
  const [row] = await boundQuery<JobRow>(rt.orm.em.fork(), 'select * from jobs where id = ?', [jobId]);
  return row;
}

/** Resolves on the next done notice of `jobId` (subscribed before the caller acts). */
function doneNotice(rt: TestRuntime, jobId: string, timeoutMs = 10_000): Promise<void> {
  const sub = rt.bus.nc.subscribe(rt.bus.names.jobDone(jobId), { max: 1, timeout: timeoutMs });
  return (async () => {
    for await (const _ of sub) return;
    throw new Error(`no done notice for ${jobId}`);
  })();
}

const csvHandler = { kind: CSV_IMPORT_KIND, handler: handleCsvImport, maxDeliver: 5 } as const;

describe('CSV import: the job harness (claims, redelivery, deadlines, shared queue)', function () {
  this.timeout(60_000);
  let rt: TestRuntime;
  let ws: TestWorkspace;

  before(async () => {
    rt = await testRuntime('csv-jobs');
    ws = await makeWorkspace(rt.orm.em.fork(), 'scale', 'CSV jobs');
  });
  after(async () => {
    if (rt) await closeRuntime(rt, { keepStorage: true });
  });

  describe('idempotent on the job id', () => {
    it('two deliveries of one job racing each other create one course; the job is completed once', async () => {
      // A Sandbox workspace: createCourse takes the workspace's course lock, which the test holds,
      // so the first delivery parks inside its work transaction with the job row locked while the
      // second arrives. The second then waits on the job row, either in its claim or (usually,
      // when it claimed first) in its work transaction, which finds the job completed. PostgreSQL
      // does not promise which, so both are accepted: `attempts` is 1 or 2, never two courses.
      const sandbox = await makeWorkspace(rt.orm.em.fork(), 'sandbox', 'CSV race');
      const cmd = await queuedJob(rt, sandbox.id);
      const holder = new pg.Client({ connectionString: rt.cfg.DATABASE_URL });
      await holder.connect();
      let outcomes: string[];
      try {
        await holder.query('select pg_advisory_lock(hashtext($1))', [`lectern:courses:${sandbox.id}`]);
        const running = Promise.all([1, 2].map((n) => processJob(rt, csvHandler, cmd, n, rt.log)));
        await waitFor(
          async () => {
            const [{ n }] = await boundQuery<{ n: number }>(
              rt.orm.em.fork(),
              `select count(*)::int as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'`,
            );
            return n >= 2;
          },
          { what: 'one delivery on the course lock, the other on the job row' },
        );
        await holder.query('select pg_advisory_unlock(hashtext($1))', [`lectern:courses:${sandbox.id}`]);
        outcomes = await running;
      } finally {
        await holder.end();
      }
      expect(outcomes.sort()).to.deep.equal(['completed', 'skipped']);
      expect(await courseCount(rt.orm.em.fork(), sandbox.id)).to.equal(1);
      const row = await jobRow(rt, cmd.jobId);
      expect(row.status).to.equal('completed');
      expect(row.attempts).to.be.oneOf([1, 2]);
      const [course] = await boundQuery<{ id: string; source_kind: string; status: string }>(
        rt.orm.em.fork(),
        'select id, source_kind, status from courses where id = ?',
        [row.result?.courseId],
      );
      expect(course).to.include({ source_kind: 'csv', status: 'draft' });
    });

    it('running the handler again after completion repeats nothing and re-sends the done notice', async () => {
      const cmd = await queuedJob(rt, ws.id);
      expect(await processJob(rt, csvHandler, cmd, 1, rt.log)).to.equal('completed');
      const count = await courseCount(rt.orm.em.fork(), ws.id);
      const first = await jobRow(rt, cmd.jobId);
      const notice = doneNotice(rt, cmd.jobId);
      expect(await processJob(rt, csvHandler, cmd, 2, rt.log)).to.equal('skipped');
      await notice;
      expect(await courseCount(rt.orm.em.fork(), ws.id)).to.equal(count);
      const again = await jobRow(rt, cmd.jobId);
      expect(again.attempts).to.equal(first.attempts);
      expect(again.result).to.deep.equal(first.result);
    });

    it('a job left `processing` by a worker that died is finished by the redelivery, once', async () => {
      const cmd = await queuedJob(rt, ws.id, FILE, 'processing', 1);
      const before = await courseCount(rt.orm.em.fork(), ws.id);
      expect(await processJob(rt, csvHandler, cmd, 2, rt.log)).to.equal('completed');
      const row = await jobRow(rt, cmd.jobId);
      expect(row).to.include({ status: 'completed', attempts: 2 });
      expect(await courseCount(rt.orm.em.fork(), ws.id)).to.equal(before + 1);
    });

    it('a failed job stays failed: a redelivery does not run it again', async () => {
      const cmd = await queuedJob(rt, ws.id, 'screen,type\nA,quizz\n');
      expect(await processJob(rt, csvHandler, cmd, 1, rt.log)).to.equal('failed');
      const failed = await jobRow(rt, cmd.jobId);
      expect(failed.error).to.deep.include({ code: 'invalid_request' });
      expect(await processJob(rt, csvHandler, cmd, 2, rt.log)).to.equal('skipped');
      expect(await jobRow(rt, cmd.jobId)).to.deep.equal(failed);
    });
  });

  describe('blobs', () => {
    /** Sessions of this database, other than the asking one, inside an open transaction right now. */
    const openTransactions = async () => {
      const [{ n }] = await boundQuery<{ n: number }>(
        rt.orm.em.fork(),
        `select count(*)::int as n from pg_stat_activity
          where datname = current_database() and pid <> pg_backend_pid() and xact_start is not null`,
      );
      return n;
    };

    it('are read before the job transaction opens: no transaction or job-row lock waits on the object store', async () => {
      const cmd = await queuedJob(rt, ws.id);
      const seen: number[] = [];
      const storage = {
        async get(key: string) {
          seen.push(await openTransactions());
          return rt.storage.get(key);
        },
      };
      expect(await processJob({ ...rt, storage }, csvHandler, cmd, 1, rt.log)).to.equal('completed');
      expect(seen, 'one read, with no transaction open meanwhile').to.deep.equal([0]);
      expect((await jobRow(rt, cmd.jobId)).status).to.equal('completed');
    });

    it('an object store outage is retried like any fault; the last delivery fails the job', async () => {
      const cmd = await queuedJob(rt, ws.id);
      const before = await courseCount(rt.orm.em.fork(), ws.id);
      const storage = {
        get: async () => Promise.reject(Object.assign(new Error('connect ECONNREFUSED (simulated)'), {})),
      };
      const opts = { ...csvHandler, maxDeliver: 2 };
      let thrown: unknown;
      await processJob({ ...rt, storage }, opts, cmd, 1, rt.log).catch((e: unknown) => (thrown = e));
      expect(String(thrown)).to.include('simulated');
      expect((await jobRow(rt, cmd.jobId)).status).to.equal('processing');
      expect(await processJob({ ...rt, storage }, opts, cmd, 2, rt.log)).to.equal('failed');
      expect((await jobRow(rt, cmd.jobId)).error).to.deep.equal({
        code: 'internal_error',
        message: 'The job failed with an internal error',
      });
      expect(await courseCount(rt.orm.em.fork(), ws.id)).to.equal(before);
    });
  });

  describe('failures', () => {
    it('a retryable fault leaves the job processing for the next delivery (nak); the last delivery fails it as internal_error', async () => {
      const cmd = await queuedJob(rt, ws.id);
      const before = await courseCount(rt.orm.em.fork(), ws.id);
      const flaky: JobHandler<typeof CSV_IMPORT_KIND> = async (job, ctx) => {
        await handleCsvImport(job, ctx); // the course is written in the job's transaction…
        throw new Error('connection reset by peer (simulated)'); // …and rolled back with it
      };
      let thrown: unknown;
      await processJob(rt, { kind: CSV_IMPORT_KIND, handler: flaky, maxDeliver: 3 }, cmd, 1, rt.log).catch(
        (e: unknown) => (thrown = e),
      );
      expect(String(thrown)).to.include('simulated');
      expect((await jobRow(rt, cmd.jobId)).status).to.equal('processing');
      expect(await courseCount(rt.orm.em.fork(), ws.id)).to.equal(before);

      expect(
        await processJob(rt, { kind: CSV_IMPORT_KIND, handler: flaky, maxDeliver: 3 }, cmd, 3, rt.log),
      ).to.equal('failed');
      const row = await jobRow(rt, cmd.jobId);
      expect(row.status).to.equal('failed');
      // Internal detail stays in the worker's log.
      expect(row.error).to.deep.equal({
        code: 'internal_error',
        message: 'The job failed with an internal error',
      });
      expect(await courseCount(rt.orm.em.fork(), ws.id)).to.equal(before);
    });

    it('a non-retryable AppError fails the job at once with its code, message, issues and details', async () => {
      const cmd = await queuedJob(rt, ws.id);
      const refuse: JobHandler<typeof CSV_IMPORT_KIND> = async () => {
        throw new AppError('invalid_request', 'nope', {
          issues: [{ code: 'x', path: ['row', 2], message: 'bad' }],
          details: { limit: 7 },
        });
      };
      expect(await processJob(rt, { kind: CSV_IMPORT_KIND, handler: refuse }, cmd, 1, rt.log)).to.equal(
        'failed',
      );
      expect((await jobRow(rt, cmd.jobId)).error).to.deep.equal({
        code: 'invalid_request',
        message: 'nope',
        issues: [{ code: 'x', path: ['row', 2], message: 'bad' }],
        details: { limit: 7 },
      });
    });

    it('the job queue unreachable at publish → 503 unavailable, and the job is failed (it will never run)', async () => {
      const broken = await testRuntime('csv-jobs-broken');
      try {
        await broken.bus.nc.close();
        let err: unknown;
        await runSyncJob(broken, {
          workspaceId: ws.id,
          kind: CSV_IMPORT_KIND,
          input: { title: null },
          blobs: { [CSV_BLOB]: { body: Buffer.from(FILE) } },
          timeoutMs: 1000,
        }).catch((e: unknown) => (err = e));
        expect(isAppError(err) && err.code).to.equal('unavailable');
        const [job] = (await jobsOf(rt.orm.em.fork(), ws.id)).slice(-1);
        expect(job.status).to.equal('failed');
        expect(job.error).to.deep.include({ code: 'unavailable' });
      } finally {
        await closeRuntime(broken, { keepStorage: true });
      }
    });
  });

  describe('over the bus', () => {
    let app: TestApp;
    let workers: { rt: TestRuntime; handle: JobWorkerHandle }[] = [];
    const startWorker = async (name: string, concurrency?: number) => {
      const wrt = await testRuntime(name);
      const handle = await startCsvWorker(wrt, { concurrency });
      workers.push({ rt: wrt, handle });
      return handle;
    };
    const stopWorkers = async () => {
      for (const w of workers) {
        await w.handle.stop();
        await closeRuntime(w.rt, { keepStorage: true });
      }
      workers = [];
    };

    before(async () => {
      app = await startTestApp({ CSV_IMPORT_TIMEOUT_MS: '1500', RATE_LIMIT_PER_MINUTE: '100000' });
    });
    afterEach(stopWorkers);
    after(async () => {
      await stopWorkers();
      await app?.close();
    });

    it('no worker running: the request answers 504 timeout with the job id; the job completes once a worker starts', async () => {
      const mine = await makeWorkspace(app.rt.orm.em.fork(), 'scale', 'CSV worker down');
      const res = await importCsv(app.base, mine.key, 'screen,text\nLater,Still imported\n', {
        title: 'Late import',
      });
      expect(res.status, res.text).to.equal(504);
      expect(res.body.error).to.equal('timeout');
      const jobId = res.body.jobId;
      expect(jobId).to.match(/^job_/);
      expect(res.body.message).to.include(jobId!).and.include('may complete later');
      expect((await jobRow(app.rt, jobId!)).status).to.equal('queued');
      expect(await courseCount(app.rt.orm.em.fork(), mine.id)).to.equal(0);

      await startWorker('csv-worker-late');
      const done = await waitFor(
        async () => {
          const row = await jobRow(app.rt, jobId!);
          return row.status === 'completed' ? row : null;
        },
        { timeoutMs: 15_000, what: 'the queued job to complete' },
      );
      const [course] = await boundQuery<{ id: string; title: string; source_kind: string; status: string }>(
        app.rt.orm.em.fork(),
        'select id, title, source_kind, status from courses where workspace_id = ?',
        [mine.id],
      );
      expect(course).to.deep.equal({
        id: done.result?.courseId,
        title: 'Late import',
        source_kind: 'csv',
        status: 'draft',
      });
    });

    it('a message that fails the command schema is dropped and its job failed, so nobody waits for it', async () => {
      await startWorker('csv-worker-poison');
      const cmd = await queuedJob(app.rt, ws.id);
      const notice = doneNotice(app.rt, cmd.jobId);
      await app.rt.bus.publish(
        jobSubject(app.rt.bus.names, CSV_IMPORT_KIND),
        { jobId: cmd.jobId, workspaceId: 42 },
        { msgId: `${cmd.jobId}:poison` },
      );
      await notice;
      const row = await jobRow(app.rt, cmd.jobId);
      expect(row.status).to.equal('failed');
      expect(row.error).to.deep.include({ code: 'internal_error' });
    });

    it('the same command published again (past the dedupe window) is acknowledged without a second course', async () => {
      await startWorker('csv-worker-again');
      const mine = await makeWorkspace(app.rt.orm.em.fork(), 'scale', 'CSV redelivery');
      const res = await importCsv(app.base, mine.key, FILE);
      expect(res.status, res.text).to.equal(201);
      const [job] = await jobsOf(app.rt.orm.em.fork(), mine.id);
      const notice = doneNotice(app.rt, job.id);
      // A different msg id gets past JetStream's dedupe, as a publish after the window would.
      await app.rt.bus.publish(
        jobSubject(app.rt.bus.names, CSV_IMPORT_KIND),
        { jobId: job.id, workspaceId: mine.id, kind: CSV_IMPORT_KIND },
        { msgId: `${job.id}:again` },
      );
      await notice;
      expect(await courseCount(app.rt.orm.em.fork(), mine.id)).to.equal(1);
      expect(await jobRow(app.rt, job.id)).to.deep.equal(job);
    });

    it('two csv workers share the queue: every import answered once, both did work', async () => {
      const a = await startWorker('csv-worker-a', 1);
      const b = await startWorker('csv-worker-b', 1);
      const mine = await makeWorkspace(app.rt.orm.em.fork(), 'scale', 'CSV two workers');
      const n = 12;
      const results = await Promise.all(
        Array.from({ length: n }, (_, i) =>
          importCsv(app.base, mine.key, `screen,text\nShared ${i},Hello\n`, { title: `Shared ${i}` }),
        ),
      );
      // A 504 here would only mean the box is slow (1.5 s deadline); the job still completes.
      expect(results.map((r) => r.status).filter((s) => s !== 201 && s !== 504)).to.deep.equal([]);
      await waitFor(
        async () => (await jobsOf(app.rt.orm.em.fork(), mine.id)).every((j) => j.status === 'completed'),
        {
          timeoutMs: 20_000,
          what: 'every job completed',
        },
      );
      expect(await courseCount(app.rt.orm.em.fork(), mine.id)).to.equal(n);
      const jobs = await jobsOf(app.rt.orm.em.fork(), mine.id);
      expect(jobs.every((j) => j.attempts === 1)).to.equal(true);
      expect(a.stats().completed, 'worker a').to.be.greaterThan(0);
      expect(b.stats().completed, 'worker b').to.be.greaterThan(0);
      expect(a.stats().completed + b.stats().completed).to.equal(n);
    });
  });
});
