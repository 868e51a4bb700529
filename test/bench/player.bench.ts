import { spawnBenchChild, type BenchChild } from './bench-child.js';
import { createRequire } from 'node:module';
import { readFile, readdir } from 'node:fs/promises';
import { boundQuery } from '@lectern/db';
import { closeRuntime } from '@lectern/runtime';
import { makeWorkspace, testConfig, testRuntime } from '../support/context.js';
import { anonymousId, publishedCourse } from '../support/player.js';
import type { OpenRunResult } from '@lectern/contracts';

/**
 * The learner-runs benchmark (issue 9):
 *  (a) run opens per second: BENCH_PLAYER_RUNS anonymous runs opened through POST /player/v1/runs;
 *  (b) learner event ingest: every run sends BENCH_PLAYER_BATCHES batches of 10 events (screen changes,
 *      graded and ungraded answers, time) through POST /player/v1/runs/:id/events — events/s and the p99 of
 *      the call — against two raw baselines writing the same outbox rows straight into PostgreSQL through
 *      the same connection pool, with the same concurrency:
 *        multiRow:  one multi-row INSERT per batch (its rows in one statement, one commit);
 *        perEvent:  one INSERT (and commit) per row.
 * The API runs as production runs it: a process of its own (api-child.ts: the server and its outbox relay),
 * BENCH_PLAYER_API_PROCESSES of them (replicas; the load is spread over them in turn). The bench process is the
 * client, and the baselines' client. The player's own limits are off (0), so the numbers are the path's, not the
 * limiter's. The load is sent with a bare `fetch` (no response-contract check, unlike the tests' client).
 * Numbers only.
 * Tunables: BENCH_PLAYER_RUNS (1000), BENCH_PLAYER_BATCHES (5), BENCH_PLAYER_CONCURRENCY (`32,128`: calls in
 * flight; the ingest and both baselines are measured at each, the opens at the first),
 * BENCH_PLAYER_API_PROCESSES (1), BENCH_PLAYER_RELAY (`api`, or `process`), BENCH_API_NODE_ARGS (extra node flags for the API processes, e.g.
 * `--cpu-prof --cpu-prof-dir=/tmp/prof`).
 */
const RUNS = Number(process.env.BENCH_PLAYER_RUNS ?? 1000);
const BATCHES = Number(process.env.BENCH_PLAYER_BATCHES ?? 5);
const CONCURRENCY = (process.env.BENCH_PLAYER_CONCURRENCY ?? '32,128').split(',').map(Number);
const API_PROCESSES = Number(process.env.BENCH_PLAYER_API_PROCESSES ?? 1);

/** An API (or relay) process: bench-child.ts, its ready message carrying the API's url. */
type ApiChild = BenchChild<{ url: string }>;

/**
 * Where the outbox relay runs (BENCH_PLAYER_RELAY): `api` (default: in the API process, as deployed by default) or
 * `process` (API_OUTBOX_RELAY=false and a relay in a process of its own, as a webhook worker with
 * WEBHOOK_WORKER_OUTBOX_RELAY=true runs it; its CPU is counted with the server's).
 */
const RELAY = process.env.BENCH_PLAYER_RELAY ?? 'api';

/** Starts an API process (api-child.ts) on this run's configuration; resolves once it listens. */
function startApiChild(overrides: Record<string, string>, role: 'api' | 'relay' = 'api'): Promise<ApiChild> {
  const nodeArgs = (process.env.BENCH_API_NODE_ARGS ?? '').split(/\s+/).filter(Boolean);
  return spawnBenchChild('api-child.ts', testConfig(overrides), {
    nodeArgs,
    env: { BENCH_CHILD_ROLE: role },
  });
}

const round = (n: number, d = 1) => Math.round(n * 10 ** d) / 10 ** d;
const pct = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];

// autocannon ships no type declarations; load it through require with a local shape.
interface CannonRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body: string;
}
interface CannonResult {
  duration: number;
  errors: number;
  timeouts: number;
  non2xx: number;
  latency: { p50: number; p99: number };
}
type Autocannon = (opts: Record<string, unknown>) => Promise<CannonResult>;
const autocannon = createRequire(import.meta.url)('autocannon') as Autocannon;

/**
 * CPU (ms) used so far by the whole machine, by PostgreSQL (its processes and the backends it has reaped) and by
 * the NATS server, from /proc (Linux; zeros elsewhere): where a phase's CPU went beyond the two Node processes.
 */
async function machineCpu(): Promise<{ machine: number; postgres: number; nats: number }> {
  const TICK_MS = 10; // USER_HZ = 100
  const out = { machine: 0, postgres: 0, nats: 0 };
  try {
    const stat = (await readFile('/proc/stat', 'utf8')).split('\n')[0].trim().split(/\s+/).map(Number);
    // user nice system idle iowait irq softirq steal
    out.machine = (stat[1] + stat[2] + stat[3] + stat[6] + stat[7] + stat[8]) * TICK_MS;
    for (const pid of await readdir('/proc')) {
      if (!/^\d+$/.test(pid)) continue;
      const line = (await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => '')).trim();
      const m = /^\d+ \((.*)\) (.*)$/.exec(line);
      if (!m || (m[1] !== 'postgres' && m[1] !== 'nats-server')) continue;
      const f = m[2].split(' ').map(Number); // f[11..14]: utime stime cutime cstime
      const ticks = f[11] + f[12] + f[13] + f[14];
      if (m[1] === 'postgres') out.postgres += ticks * TICK_MS;
      else out.nats += ticks * TICK_MS;
    }
  } catch {
    // not Linux
  }
  return out;
}

/** The request of call `j`: a POST of a JSON body to a Player API path, with a run token or none. */
interface Call {
  path: string;
  body: unknown;
  token?: string;
}

/**
 * Sends `n` calls over `concurrency` keep-alive connections spread over the API processes (autocannon: a load
 * generator that costs the client a fraction of what `fetch` does, so the two cores go to the server and the
 * database). `onBody` gets each answer's parsed `data` with the call's index. Any non-2xx answer fails the bench.
 */
async function load(
  { apis, relays }: { apis: ApiChild[]; relays: ApiChild[] },
  n: number,
  concurrency: number,
  call: (j: number) => Call,
  onBody?: (j: number, data: unknown) => void,
) {
  let next = 0;
  let answered = 0;
  let t1 = 0;
  const cpuOf = async (children: ApiChild[]) =>
    (await Promise.all(children.map((s) => s.cpuMicros()))).reduce((a, b) => a + b, 0);
  const server0 = await cpuOf(apis);
  const relay0 = await cpuOf(relays);
  const machine0 = await machineCpu();
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const r = await autocannon({
    url: apis.map((a) => a.ready.url),
    connections: concurrency,
    amount: n,
    timeout: 60,
    sampleInt: 100,
    requests: [
      {
        setupRequest(req: CannonRequest, context: { j?: number }) {
          const j = (context.j = next++ % n);
          const c = call(j);
          req.method = 'POST';
          req.path = c.path;
          req.headers = {
            'content-type': 'application/json',
            ...(c.token ? { authorization: `Bearer ${c.token}` } : {}),
          };
          req.body = JSON.stringify(c.body);
          return req;
        },
        onResponse(status: number, body: string, context: { j: number }) {
          // autocannon notices the end only at its next sample tick: the phase ends at the last answer.
          if (++answered === n) t1 = performance.now();
          if (onBody && status < 300) onBody(context.j, (JSON.parse(body) as { data: unknown }).data);
        },
      },
    ],
  });
  const seconds = ((t1 || performance.now()) - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  const server = (await cpuOf(apis)) - server0;
  const relay = (await cpuOf(relays)) - relay0;
  const machine1 = await machineCpu();
  const failed = r.non2xx + r.errors + r.timeouts;
  if (failed) throw new Error(`${failed} of ${n} calls failed (non-2xx ${r.non2xx}, errors ${r.errors})`);
  return {
    seconds,
    p50Ms: r.latency.p50,
    p99Ms: r.latency.p99,
    clientCpuMsPerJob: round((cpu.user + cpu.system) / 1000 / n, 2),
    serverCpuMsPerJob: round(server / 1000 / n, 2),
    relayCpuMsPerJob: round(relay / 1000 / n, 2),
    postgresCpuMsPerJob: round((machine1.postgres - machine0.postgres) / n, 2),
    natsCpuMsPerJob: round((machine1.nats - machine0.nats) / n, 2),
    machineCpuMsPerJob: round((machine1.machine - machine0.machine) / n, 2),
  };
}

/**
 * Runs `n` jobs with `concurrency` workers (the baselines, straight through the connection pool); returns the wall
 * time, each job's latency (ms) and this process's CPU per job, user + system.
 */
async function pool(n: number, concurrency: number, job: (i: number) => Promise<void>) {
  const latencies: number[] = [];
  let next = 0;
  const machine0 = await machineCpu();
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < n) {
        const i = next++;
        const s = performance.now();
        await job(i);
        latencies.push(performance.now() - s);
      }
    }),
  );
  const seconds = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  const machine1 = await machineCpu();
  latencies.sort((a, b) => a - b);
  return {
    seconds,
    p50Ms: round(pct(latencies, 50)),
    p99Ms: round(pct(latencies, 99)),
    cpuMsPerJob: round((cpu.user + cpu.system) / 1000 / n, 2),
    postgresCpuMsPerJob: round((machine1.postgres - machine0.postgres) / n, 2),
    machineCpuMsPerJob: round((machine1.machine - machine0.machine) / n, 2),
  };
}

/** Ten events: three screen changes, four graded answers, one poll answer, two time reports; never the last screen. */
function batchEvents(b: number) {
  return [
    { type: 'screen', screenId: 's1' },
    { type: 'answer', blockId: 'q1', answer: b % 2 ? 'a' : 'b' },
    { type: 'time', seconds: 5 },
    { type: 'screen', screenId: 's2' },
    { type: 'answer', blockId: 'q2', answer: b % 2 === 0 },
    { type: 'answer', blockId: 'p1', answer: 'y' },
    { type: 'screen', screenId: 's1' },
    { type: 'answer', blockId: 'q1', answer: 'a' },
    { type: 'answer', blockId: 'q2', answer: true },
    { type: 'time', seconds: 5 },
  ];
}

export async function run(): Promise<Record<string, unknown>> {
  const overrides = {
    PLAYER_OPENS_PER_MINUTE_PER_ADDRESS: '0',
    PLAYER_REQUESTS_PER_MINUTE_PER_RUN: '0',
    RATE_LIMIT_PER_MINUTE: '0',
  };
  // The baselines' client: the same pool size as each API process's.
  const rt = await testRuntime('bench-player', overrides);
  const apis: ApiChild[] = [];
  const relays: ApiChild[] = [];
  try {
    const apiOverrides = RELAY === 'process' ? { ...overrides, API_OUTBOX_RELAY: 'false' } : overrides;
    for (let i = 0; i < API_PROCESSES; i++) apis.push(await startApiChild(apiOverrides));
    if (RELAY === 'process') relays.push(await startApiChild(overrides, 'relay'));
    const em = () => rt.orm.em.fork();
    const ws = await makeWorkspace(em(), 'scale');
    const courseId = await publishedCourse(`${apis[0].ready.url}/api/v1`, ws.key);

    // (a) opens
    const runs: OpenRunResult[] = new Array(RUNS);
    const opens = await load(
      { apis, relays },
      RUNS,
      CONCURRENCY[0],
      (i) => ({ path: '/player/v1/runs', body: { courseId, anonymousId: anonymousId(100_000 + i) } }),
      (i, data) => (runs[i] = data as OpenRunResult),
    );
    if (runs.filter(Boolean).length !== RUNS) throw new Error('not every run opened');

    // The baselines' rows: one per event (the same 10 per batch) of the shape the outbox holds.
    await boundQuery(
      em(),
      'create table if not exists bench_learner_events (like outbox_events including all)',
    );
    let sample: { type: string; data: unknown }[] = [];
    const rowsOf = (j: number) =>
      Array.from({ length: 10 }, (_, k) => {
        const s = sample[k % sample.length];
        return [`bev_${j}_${k}`, ws.id, s.type, JSON.stringify(s.data), new Date()];
      });
    const outboxCount = async () =>
      (await boundQuery<{ n: number }>(em(), 'select count(*)::int as n from outbox_events'))[0].n;

    // (b) at each concurrency: the ingest (every run's next BATCHES batches), then both baselines.
    const events = RUNS * BATCHES * 10;
    const perSec = (s: number) => round(events / s);
    const levels: Record<string, unknown> = {};
    for (const [level, concurrency] of CONCURRENCY.entries()) {
      // Batch k of run r is job k * RUNS + r, so concurrent jobs are different runs (as long as fewer than RUNS
      // are in flight): a player never sends two batches of one run at once.
      const before = await outboxCount();
      const ingest = await load({ apis, relays }, RUNS * BATCHES, concurrency, (j) => {
        const r = runs[j % RUNS];
        const b = level * BATCHES + Math.floor(j / RUNS);
        return {
          path: `/player/v1/runs/${r.completion.id}/events`,
          body: { batchId: `b${b}`, events: batchEvents(b) },
          token: r.runToken,
        };
      });
      const after = await outboxCount();
      sample = await boundQuery<{ type: string; data: unknown }>(
        em(),
        `select type, data from outbox_events where workspace_id = ? and type in ('course.progress','course.answered') limit 10`,
        [ws.id],
      );
      await boundQuery(em(), 'truncate bench_learner_events');
      const multiRow = await pool(RUNS * BATCHES, concurrency, async (j) => {
        const rows = rowsOf(j);
        await boundQuery(
          em(),
          `insert into bench_learner_events (id, workspace_id, type, data, created_at) values ${rows.map(() => '(?, ?, ?, ?::jsonb, ?)').join(', ')}`,
          rows.flat(),
        );
      });
      await boundQuery(em(), 'truncate bench_learner_events');
      const perEvent = await pool(RUNS * BATCHES, concurrency, async (j) => {
        for (const row of rowsOf(j))
          await boundQuery(
            em(),
            'insert into bench_learner_events (id, workspace_id, type, data, created_at) values (?, ?, ?, ?::jsonb, ?)',
            row,
          );
      });
      levels[`inFlight${concurrency}`] = {
        ingest: {
          eventsPerSec: perSec(ingest.seconds),
          batchesPerSec: round((RUNS * BATCHES) / ingest.seconds),
          p50Ms: ingest.p50Ms,
          p99Ms: ingest.p99Ms,
          serverCpuMsPerBatch: ingest.serverCpuMsPerJob,
          ...(RELAY === 'process' ? { relayProcessCpuMsPerBatch: ingest.relayCpuMsPerJob } : {}),
          clientCpuMsPerBatch: ingest.clientCpuMsPerJob,
          postgresCpuMsPerBatch: ingest.postgresCpuMsPerJob,
          natsCpuMsPerBatch: ingest.natsCpuMsPerJob,
          machineCpuMsPerBatch: ingest.machineCpuMsPerJob,
          outboxRowsWritten: after - before,
        },
        baselineMultiRow: {
          eventsPerSec: perSec(multiRow.seconds),
          p99Ms: multiRow.p99Ms,
          cpuMsPerBatch: multiRow.cpuMsPerJob,
          postgresCpuMsPerBatch: multiRow.postgresCpuMsPerJob,
          machineCpuMsPerBatch: multiRow.machineCpuMsPerJob,
        },
        baselinePerEvent: {
          eventsPerSec: perSec(perEvent.seconds),
          p99Ms: perEvent.p99Ms,
          cpuMsPerBatch: perEvent.cpuMsPerJob,
          postgresCpuMsPerBatch: perEvent.postgresCpuMsPerJob,
          machineCpuMsPerBatch: perEvent.machineCpuMsPerJob,
        },
        ratios: {
          ingestVsMultiRow: round(multiRow.seconds / ingest.seconds, 2),
          ingestVsPerEvent: round(perEvent.seconds / ingest.seconds, 2),
        },
      };
    }
    await boundQuery(em(), 'drop table bench_learner_events');

    return {
      setup: {
        runs: RUNS,
        batchesPerRun: BATCHES * CONCURRENCY.length,
        eventsPerBatch: 10,
        concurrency: CONCURRENCY.join(', '),
        apiProcesses: API_PROCESSES,
        relay: RELAY === 'process' ? 'a process of its own' : 'in the API process',
        poolMax: rt.cfg.DB_POOL_MAX,
      },
      opens: {
        perSec: round(RUNS / opens.seconds),
        p50Ms: opens.p50Ms,
        p99Ms: opens.p99Ms,
        serverCpuMsPerOpen: opens.serverCpuMsPerJob,
        clientCpuMsPerOpen: opens.clientCpuMsPerJob,
        postgresCpuMsPerOpen: opens.postgresCpuMsPerJob,
        machineCpuMsPerOpen: opens.machineCpuMsPerJob,
      },
      ...levels,
    };
  } finally {
    await Promise.all([...apis, ...relays].map((a) => a.stop()));
    await closeRuntime(rt, { keepStorage: true });
  }
}
