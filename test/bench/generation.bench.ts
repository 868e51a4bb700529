/**
 * Generation throughput (test/bench/README.md "generation"):
 * - `pipeline` — jobs/s through the whole path (POST /generate → bus → generation worker → course → job row,
 *   polled with GET /generate/:id) with a fake model that answers at once, against `inProcess`: the worker's
 *   `generateCourse` called directly with the same answer (prompt, schema, JSON parse, strict check). The ratio is
 *   what the platform costs around the model.
 * - `model200ms` — jobs/s with a fake model that takes 200 ms, one worker process vs two (each GENERATION_CONCURRENCY
 *   2), over N jobs queued before the workers start, from the first claim to the last completion (job rows'
 *   clock): the work is I/O-bound on the model, so two processes should near double it (goal ≥ 1.8×).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { runJobWorker } from '@lectern/jobs';
import { generateCourse, generationJob, type GenerationProvider } from '@lectern/generation';
import { GenerationEnv, parseEnv } from '@lectern/config';
import { boundQuery } from '@lectern/db';
import { makeWorkspace, startTestApp, type TestApp } from '../support/context.js';
import { call, waitFor } from '../support/http.js';
import { REPO_ROOT, envFor } from '../support/spine.js';
import { goodCourse, startFakeLlm, type FakeLlm } from '../support/fake-llm.js';

const N = Number(process.env.BENCH_GENERATION_JOBS ?? 40);

async function runJobs(app: TestApp, key: string, n: number): Promise<number> {
  const started = performance.now();
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    const res = await call<{ data: { id: string } }>(app.base, 'POST', '/generate', {
      key,
      body: { prompt: `Bench ${i}`, screensTarget: 3 },
    });
    if (res.status !== 202) throw new Error(`POST /generate: ${res.status} ${res.text}`);
    ids.push(res.body.data.id);
  }
  await waitFor(
    async () => {
      const [row] = await boundQuery<{ n: number }>(
        app.rt.orm.em.fork(),
        "select count(*)::int as n from jobs where id = any(?) and status in ('completed', 'failed')",
        [ids],
      );
      return row!.n === ids.length;
    },
    { timeoutMs: 300_000, intervalMs: 50 },
  );
  const [failed] = await boundQuery<{ n: number }>(
    app.rt.orm.em.fork(),
    "select count(*)::int as n from jobs where id = any(?) and status = 'failed'",
    [ids],
  );
  if (failed!.n > 0) throw new Error(`${failed!.n} bench jobs failed`);
  return n / ((performance.now() - started) / 1000);
}

/** Queues `n` jobs with no worker running, then runs `start`; jobs/s from the first claim to the last completion. */
async function drainQueued(app: TestApp, key: string, n: number, start: () => Promise<() => Promise<void>>) {
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    const res = await call<{ data: { id: string } }>(app.base, 'POST', '/generate', {
      key,
      body: { prompt: `Queued ${i}`, screensTarget: 3 },
    });
    if (res.status !== 202) throw new Error(`POST /generate: ${res.status} ${res.text}`);
    ids.push(res.body.data.id);
  }
  const stop = await start();
  try {
    await waitFor(
      async () => {
        const [row] = await boundQuery<{ n: number }>(
          app.rt.orm.em.fork(),
          "select count(*)::int as n from jobs where id = any(?) and status in ('completed', 'failed')",
          [ids],
        );
        return row!.n === ids.length;
      },
      { timeoutMs: 300_000, intervalMs: 50 },
    );
  } finally {
    await stop();
  }
  const [span] = await boundQuery<{ ms: number; failed: number }>(
    app.rt.orm.em.fork(),
    `select (extract(epoch from max(completed_at) - min(started_at)) * 1000)::float8 as ms,
            count(*) filter (where status = 'failed')::int as failed
       from jobs where id = any(?)`,
    [ids],
  );
  if (span!.failed > 0) throw new Error(`${span!.failed} bench jobs failed`);
  return n / (span!.ms / 1000);
}

function startChild(app: TestApp, env: Record<string, string>): Promise<ChildProcess> {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', path.join(REPO_ROOT, 'test/support/generation-worker-child.ts'), '60000'],
    { cwd: REPO_ROOT, env: envFor(app.rt.cfg, env), stdio: ['ignore', 'pipe', 'inherit'] },
  );
  return new Promise((resolve, reject) => {
    child.stdout!.on('data', (d: Buffer) => d.toString().includes('ready') && resolve(child));
    child.once('exit', (code) => reject(new Error(`generation worker child exited ${code}`)));
  });
}

async function stopChild(child: ChildProcess): Promise<void> {
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  await exited;
}

export async function run(): Promise<Record<string, unknown>> {
  const answer = JSON.stringify(goodCourse(3));
  const llm: FakeLlm = await startFakeLlm(() => ({ content: answer }));
  const env = {
    GENERATION_BASE_URL: llm.baseUrl,
    GENERATION_MODEL: 'fake',
    GENERATION_TIMEOUT_MS: '600000',
    GENERATION_CONCURRENCY: '2',
    RATE_LIMIT_PER_MINUTE: '1000000',
  };
  const app = await startTestApp(env);
  try {
    // Partner: no allowance in the way.
    const ws = await makeWorkspace(app.rt.orm.em.fork(), 'partner', 'Generation bench');
    const cfg = parseEnv([GenerationEnv], { ...env, GENERATION_CONCURRENCY: '4' });

    // In process: the same answer through generateCourse, no bus, no database.
    const instant: GenerationProvider = { complete: async () => answer };
    const input = { prompt: 'Bench', audience: null, screensTarget: 3, sourceUrl: null, locale: 'en' };
    const signal = new AbortController().signal;
    for (let i = 0; i < 20; i++)
      await generateCourse({ provider: instant, outbound: { allowPrivate: true } }, input, signal);
    const t0 = performance.now();
    const M = N * 10;
    for (let i = 0; i < M; i++)
      await generateCourse({ provider: instant, outbound: { allowPrivate: true } }, input, signal);
    const inProcess = M / ((performance.now() - t0) / 1000);

    const worker = await runJobWorker(app.rt, generationJob({ cfg, allowPrivate: true }));
    let pipeline: number;
    try {
      await runJobs(app, ws.key, 5); // warm-up: consumer, pools
      pipeline = await runJobs(app, ws.key, N);
    } finally {
      await worker.stop();
    }

    llm.answer = () => ({ content: answer, delayMs: 200 });
    const oneProcess = await drainQueued(app, ws.key, N, async () => {
      const one = await startChild(app, env);
      return () => stopChild(one);
    });
    const twoProcesses = await drainQueued(app, ws.key, N, async () => {
      const [a, b] = await Promise.all([startChild(app, env), startChild(app, env)]);
      return () => Promise.all([stopChild(a), stopChild(b)]).then(() => undefined);
    });
    const r = (x: number) => Math.round(x * 10) / 10;
    return {
      jobs: N,
      instant: { pipelineJobsPerS: r(pipeline), inProcessPerS: r(inProcess), ratio: r(inProcess / pipeline) },
      model200ms: {
        concurrencyPerProcess: 2,
        oneProcessJobsPerS: r(oneProcess),
        twoProcessesJobsPerS: r(twoProcesses),
        speedup: Math.round((twoProcesses / oneProcess) * 100) / 100,
      },
    };
  } finally {
    await app.close();
    await llm.close();
  }
}
