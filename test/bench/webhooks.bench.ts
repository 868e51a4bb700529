import { spawnBenchChild, type BenchChild } from './bench-child.js';
import { childReceiver, epochNow, localReceiver, type Receiver } from './webhook-sink.js';
import { readFileSync, readdirSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import {
  makeWorkspace,
  testRuntime,
  type TestWorkspace,
  type TestRuntime,
  type TestConfig,
} from '../support/context.js';
import { waitFor } from '../support/http.js';
import { boundQuery, newId } from '@lectern/db';
import { startRelay, type Relay } from '@lectern/events';
import { EventPayloads, type EventPayload } from '@lectern/contracts';
import { closeRuntime } from '@lectern/runtime';
import {
  SOCKETS_PER_ORIGIN,
  createEndpoint,
  relayFanOut,
  startWebhookWorker,
  signatureHeaders,
  type WebhookWorkerOptions,
} from '@lectern/webhooks';
import { parseEncryptionKey } from '@lectern/secrets';

/**
 * The webhook benchmark (issue 4). Numbers only; nothing here asserts on timing.
 *
 *  clean     N events written to the outbox (batches of 500, as fast as PostgreSQL takes them) and delivered to
 *            one loopback receiver by the whole pipeline: relay → EVENTS, with the deliveries written in the
 *            transaction that marks the batch sent → claim → signed POST (in the claiming worker) → attempt recorded.
 *  bare      the same N bodies POSTed by a bare loop (keep-alive, no signing, no database, no bus) with the
 *            same concurrency the pipeline allows one endpoint from one worker (16 requests at once).
 *  durablePerDelivery  the durable minimal loop (issue 24): per delivery INSERT a delivery row, POST the signed body,
 *            UPDATE the row with the outcome; same receiver, same concurrency, same PostgreSQL.
 *  durableBatched      the same in the worker's claim batches (256): one INSERT, 256 POSTs, one UPDATE per batch.
 *            `cleanThroughputRatios` gives ours against the bare loop and both durable loops; `cpuMsPer1000Deliveries`
 *            the CPU each process spent (bench process, worker, PostgreSQL, NATS) per 1,000 deliveries, and
 *            `machine` the whole machine's; `productionShape.pairs.cpuBound` the ceiling that sets on its cores.
 *  withDeadEndpoint   `clean` again with a second endpoint, subscribed to the same events, that never answers
 *            (every attempt held for the 5 s timeout): the healthy endpoint's numbers should barely move.
 *  paced     latency under light load: BENCH_WEBHOOK_PACED events at BENCH_WEBHOOK_RATE per second, pipeline
 *            and bare loop, each event timed from its outbox commit (pipeline) or its scheduled send (bare).
 *
 * Latency is measured from the outbox commit of an event (its "state change") to its receipt, so in the burst
 * runs it includes the time the event waited behind the others (the bare loop's includes the same queueing).
 *
 * Tunables (environment): BENCH_WEBHOOK_EVENTS (10000), BENCH_WEBHOOK_PACED (1000), BENCH_WEBHOOK_RATE (200).
 * Diagnostics: BENCH_WEBHOOK_TRACE=1 prints every 250 ms how far each stage has got and the event-loop delay;
 * BENCH_WEBHOOK_CPUPROF=<path> writes a CPU profile of each burst run to <path>.<n>.cpuprofile.
 */

const EVENTS = Number(process.env.BENCH_WEBHOOK_EVENTS ?? 10_000);
const PACED = Number(process.env.BENCH_WEBHOOK_PACED ?? 1_000);
const RATE = Number(process.env.BENCH_WEBHOOK_RATE ?? 200);
/** Which shapes to run: `single`, `production` (comma-separated; both by default). */
const SHAPES = (process.env.BENCH_WEBHOOK_SHAPES ?? 'single,production').split(',').map((s) => s.trim());
/** What the worker allows one endpoint in one process (WebhookWorkerOptions.perEndpointRequests default). */
const CONCURRENCY = SOCKETS_PER_ORIGIN;
const INSERT_BATCH = 500;
/**
 * The receivers' host in the endpoint URLs: an address (no name to resolve, the default) or a name such as
 * `localhost`, which the worker then resolves as it would a customer's host (through its `cachedResolver`).
 */
const ENDPOINT_HOST = process.env.BENCH_WEBHOOK_ENDPOINT_HOST ?? '127.0.0.1';
/** BENCH_WEBHOOK_VACUUM=0: no VACUUM before each run (`vacuumTables`), as the bench ran before it had one. */
const VACUUM = process.env.BENCH_WEBHOOK_VACUUM !== '0';
/**
 * Production shape: how many times the bare loop and the clean burst run, alternating, for the ratio between them.
 * On a shared 2-core VM one bare loop (~2 s) moved by half from one run to the next, more than any step measured;
 * the median of the pairs' ratios moves far less than any one of them.
 */
const PAIRS = Math.max(1, Number(process.env.BENCH_WEBHOOK_PAIRS ?? 3));
/** The production default, so the dead endpoint is not re-attempted every second. */
const PRODUCTION_DELAYS = '60,600,3600,21600';

const round = (n: number, digits = 1) => Math.round(n * 10 ** digits) / 10 ** digits;

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[i];
}

function stats(latencies: number[], firstStart: number, lastReceipt: number) {
  const sorted = [...latencies].sort((a, b) => a - b);
  const seconds = (lastReceipt - firstStart) / 1000;
  return {
    count: latencies.length,
    seconds: round(seconds, 2),
    perSec: round(latencies.length / seconds, 0),
    p50Ms: round(percentile(sorted, 50)),
    p99Ms: round(percentile(sorted, 99)),
    maxMs: round(sorted[sorted.length - 1] ?? NaN),
  };
}

/**
 * Where the receivers run: `process` (default), a process of their own (webhook-receiver-child.ts), as a
 * subscriber's server would be; `inprocess`, in the bench's process, which until the fifth round of issue 24 they
 * always were (there they share one thread with the producer and the relay, whose work holds up their receipts).
 */
const RECEIVER = process.env.BENCH_WEBHOOK_RECEIVER ?? 'process';

const urlOf = (r: Receiver): string => `http://${ENDPOINT_HOST}:${r.port}/hook`;

/** The receivers' process when RECEIVER is `process` (started by `run`). */
let receiverChild: BenchChild<unknown> | undefined;

function payload(i: number): EventPayload<'course.completed'> {
  return {
    course: { id: `crs_bench_${i % 50}`, title: 'Workplace safety basics', contentHash: 'sha256:0f3c9a2b7d' },
    identity: {
      id: `idn_${i}`,
      externalId: `learner-${i}`,
      name: 'Bench Learner',
      email: `learner${i}@example.com`,
    },
    completionId: `cmp_${i}`,
    attempt: 1,
    source: 'embed',
    score: { correct: 7, total: 8, percent: 87.5 },
    passed: true,
    passingScore: 70,
    answers: Array.from({ length: 8 }, (_, k) => ({ blockId: `blk_${k}`, correct: k !== 3 })),
    startedAt: '2026-11-21T09:00:00.000Z',
    completedAt: '2026-11-21T09:12:30.000Z',
    timeSpentSeconds: 750,
  };
}

/** Between the payloads of one INSERT: `JSON.stringify` writes every control character in a string as an escape. */
const PAYLOAD_SEPARATOR = '\u001e';

/** The outbox row of each event (validated as `recordEvent` does), made before the clock starts. */
function outboxRows(count: number) {
  return Array.from({ length: count }, (_, i) => ({
    id: newId('evt'),
    data: JSON.stringify(EventPayloads['course.completed'].parse(payload(i))),
  }));
}

/**
 * Writes `count` events with one multi-row INSERT per batch (autocommit: the statement is its transaction); returns
 * each event id's commit time, taken when PostgreSQL answered the INSERT, so latency starts at the state change
 * and none of the producer's own work (building and validating payloads, done beforehand) is on the clock.
 * `pace` spreads them (events/s).
 */
async function writeEvents(rt: TestRuntime, relay: Relay, wsId: string, count: number, pace?: number) {
  const rows = outboxRows(count);
  const committed = new Map<string, number>();
  const batch = pace ? Math.max(1, Math.round(pace / 50)) : INSERT_BATCH;
  const em = rt.orm.em.fork();
  const t0 = epochNow();
  for (let i = 0; i < count; i += batch) {
    if (pace) {
      const due = t0 + (i / pace) * 1000;
      const wait = due - epochNow();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    }
    const slice = rows.slice(i, i + batch);
    // The payloads as one text split by PostgreSQL (as the fan-out sends its bodies): a text array made the driver
    // escape every quote of every payload (~7 µs of this process per event), which the API's own writes never do.
    await boundQuery(
      em,
      `insert into outbox_events (id, workspace_id, type, data, created_at)
       select v.id, ?, 'course.completed', v.data::jsonb, now()
         from unnest(?::text[], string_to_array(?::text, chr(30))) as v(id, data)`,
      [wsId, slice.map((r) => r.id), slice.map((r) => r.data).join(PAYLOAD_SEPARATOR)],
    );
    const at = epochNow();
    for (const r of slice) committed.set(r.id, at);
    relay.kick();
  }
  return committed;
}

/** BENCH_WEBHOOK_TRACE=1: prints, every 250 ms, how far each stage of the pipeline has got (diagnostics). */
function startTrace(rt: TestRuntime, wsId: string, sink: Receiver) {
  const t0 = performance.now();
  let stopped = false;
  const lag = monitorEventLoopDelay({ resolution: 5 });
  lag.enable();
  const loop = (async () => {
    while (!stopped) {
      const [row] = await boundQuery<Record<string, string>>(
        rt.orm.em.fork(),
        `select (select count(*) from outbox_events where workspace_id = ?) as written,
                (select count(*) from outbox_events where workspace_id = ? and published_at is not null) as published,
                (select count(*) from webhook_deliveries where workspace_id = ?) as fanned,
                (select count(*) from webhook_deliveries where workspace_id = ? and status = 'delivered') as recorded`,
        [wsId, wsId, wsId, wsId],
      );
      console.log(
        `trace ${Math.round(performance.now() - t0)} ms: written ${row.written} published ${row.published}` +
          ` fanned ${row.fanned} received ${await sink.count()} recorded ${row.recorded}` +
          ` loop delay p50/max ${round(lag.percentile(50) / 1e6)}/${round(lag.max / 1e6)} ms`,
      );
      lag.reset();
      await new Promise((r) => setTimeout(r, 250));
    }
  })();
  return {
    async stop() {
      stopped = true;
      await loop;
      lag.disable();
    },
  };
}

/** Busy and total CPU time of the whole machine so far (ms, all cores), from /proc/stat; undefined elsewhere. */
function machineCpu(): { busy: number; total: number } | undefined {
  try {
    const cpu = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
    const tick = 10; // USER_HZ is 100 on Linux
    const idle = (cpu[3] ?? 0) + (cpu[4] ?? 0);
    const total = cpu.slice(0, 8).reduce((a, b) => a + b, 0);
    return { busy: (total - idle) * tick, total: total * tick };
  } catch {
    return undefined;
  }
}

/**
 * Where the CPU went during a burst: this process, the worker child (productionShape) and the whole machine
 * (PostgreSQL and NATS are the rest), as a share of one core over the run's wall time.
 */
async function cpuMeter(child?: BenchChild<unknown>) {
  const t0 = performance.now();
  const self0 = process.cpuUsage();
  const child0 = (await child?.cpuMicros()) ?? 0;
  const receiver0 = (await receiverChild?.cpuMicros()) ?? 0;
  const m0 = machineCpu();
  return async () => {
    const wall = performance.now() - t0;
    const self = process.cpuUsage(self0);
    const child1 = (await child?.cpuMicros()) ?? 0;
    const receiver1 = (await receiverChild?.cpuMicros()) ?? 0;
    const m1 = machineCpu();
    const cores = (ms: number) => round(ms / wall, 2);
    return {
      benchProcessCores: cores((self.user + self.system) / 1000),
      ...(child ? { workerProcessCores: cores((child1 - child0) / 1000) } : {}),
      ...(receiverChild ? { receiverProcessCores: cores((receiver1 - receiver0) / 1000) } : {}),
      ...(m0 && m1
        ? { machineBusyCores: cores(((m1.busy - m0.busy) / (m1.total - m0.total)) * wall * os.cpus().length) }
        : {}),
    };
  };
}

/** utime + stime of one process so far (ms), from /proc/<pid>/stat; undefined when it is gone or not Linux. */
function procCpuMs(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10; // USER_HZ = 100
  } catch {
    return undefined;
  }
}

/** Pids whose /proc/<pid>/comm is `name` (nats-server). */
function pidsNamed(name: string): number[] {
  try {
    return readdirSync('/proc')
      .filter((d) => /^\d+$/.test(d))
      .filter((d) => {
        try {
          return readFileSync(`/proc/${d}/comm`, 'utf8').trim() === name;
        } catch {
          return false;
        }
      })
      .map(Number);
  } catch {
    return [];
  }
}

/**
 * PostgreSQL's processes that work for this run: the backends connected to the run's database plus the server's
 * own background processes (WAL writer, checkpointer...; shared with anything else using the server).
 */
async function postgresPids(rt: TestRuntime): Promise<number[]> {
  const rows = await boundQuery<{ pid: number }>(
    rt.orm.em.fork(),
    `select pid from pg_stat_activity where datname = current_database() or backend_type <> 'client backend'`,
  );
  return rows.map((r) => Number(r.pid));
}

/**
 * CPU time per delivery of each process on the path (ms per 1,000 deliveries): this process (producer and relay,
 * or the baseline loop; and the receiver when it runs here), the worker child, the receiver child, PostgreSQL (the
 * run's backends and the background processes; a backend that ends during the run loses its share) and
 * nats-server (shared with everything else on the machine).
 */
async function processCpuMeter(rt: TestRuntime, child?: BenchChild<unknown>) {
  const snapshot = async () => {
    const pg = new Map<number, number>();
    for (const pid of await postgresPids(rt)) {
      const ms = procCpuMs(pid);
      if (ms !== undefined) pg.set(pid, ms);
    }
    const nats = pidsNamed('nats-server').reduce((a, pid) => a + (procCpuMs(pid) ?? 0), 0);
    const self = process.cpuUsage();
    const worker = ((await child?.cpuMicros()) ?? 0) / 1000;
    const receiver = ((await receiverChild?.cpuMicros()) ?? 0) / 1000;
    const machine = machineCpu()?.busy;
    return { pg, nats, self: (self.user + self.system) / 1000, worker, receiver, machine };
  };
  const s0 = await snapshot();
  return async (deliveries: number) => {
    const s1 = await snapshot();
    let pg = 0;
    for (const [pid, ms] of s1.pg) pg += ms - (s0.pg.get(pid) ?? 0);
    const per1000 = (ms: number) => round((ms / deliveries) * 1000, 0);
    return {
      benchProcess: per1000(s1.self - s0.self),
      ...(child ? { worker: per1000(s1.worker - s0.worker) } : {}),
      ...(receiverChild ? { receiver: per1000(s1.receiver - s0.receiver) } : {}),
      postgres: per1000(pg),
      nats: per1000(s1.nats - s0.nats),
      // Every process on the machine, these and whatever else ran (/proc/stat).
      ...(s0.machine !== undefined && s1.machine !== undefined
        ? { machine: per1000(s1.machine - s0.machine) }
        : {}),
    };
  };
}

let profiles = 0;
/** BENCH_WEBHOOK_CPUPROF=path: a CPU profile of each burst run of the pipeline (diagnostics). */
async function startProfile() {
  const { Session } = await import('node:inspector/promises');
  const { writeFile } = await import('node:fs/promises');
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.start');
  return {
    async stop(file: string) {
      const { profile } = await session.post('Profiler.stop');
      await writeFile(file, JSON.stringify(profile));
      session.disconnect();
    },
  };
}

/**
 * Before each measured run (not timed): VACUUM ANALYZE what the runs write. Each run then starts from the state
 * autovacuum leaves a busy installation in, rather than walking the dead index entries of the runs before it
 * (every delivery leaves two in the claim's index until a vacuum; the durable loops alone leave ~40,000 in front
 * of the pipeline's endpoints, and the claim's scans read past them on every claim), and with the statistics of a
 * quiet moment (nothing pending, nothing unsent), under which two plans of the path had gone bad (see the claim's
 * `STILL_PENDING` and the outbox's `outbox_unsent_order_idx`): every run now measures that case too.
 */
async function vacuumTables(rt: TestRuntime): Promise<void> {
  await boundQuery(
    rt.orm.em.fork(),
    'vacuum (analyze) webhook_deliveries, webhook_attempts, outbox_events',
    [],
  );
}

async function pipelineRun(
  rt: TestRuntime,
  relay: Relay,
  ws: TestWorkspace,
  sink: Receiver,
  count: number,
  pace?: number,
  child?: BenchChild<unknown>,
) {
  if (VACUUM) await vacuumTables(rt);
  const cpu = pace ? undefined : await cpuMeter(child);
  const perProcess = pace ? undefined : await processCpuMeter(rt, child);
  const trace = process.env.BENCH_WEBHOOK_TRACE ? startTrace(rt, ws.id, sink) : undefined;
  const prof = process.env.BENCH_WEBHOOK_CPUPROF && !pace ? await startProfile() : undefined;
  const committed = await writeEvents(rt, relay, ws.id, count, pace);
  // Each run has a receiver of its own, so it has seen them all once it has seen as many.
  await waitFor(async () => (await sink.count()) >= count, {
    timeoutMs: 600_000,
    intervalMs: 50,
    what: `${count} deliveries`,
  });
  const seen = await sink.times();
  const cpuUse = await cpu?.();
  const cpuMsPer1000Deliveries = await perProcess?.(count);
  await trace?.stop();
  await prof?.stop(`${process.env.BENCH_WEBHOOK_CPUPROF}.${++profiles}.cpuprofile`);
  const receipt = (id: string): number => {
    const at = seen.get(id);
    if (at === undefined) throw new Error(`event ${id} was never received`);
    return at;
  };
  const latencies = [...committed].map(([id, at]) => receipt(id) - at);
  const first = Math.min(...committed.values());
  const last = Math.max(...[...committed.keys()].map(receipt));
  return {
    ...stats(latencies, first, last),
    ...(cpuUse ? { cpu: cpuUse } : {}),
    ...(cpuMsPer1000Deliveries ? { cpuMsPer1000Deliveries } : {}),
  };
}

/** The same bodies POSTed with `CONCURRENCY` requests in flight; `pace` schedules them like the paced run. */
async function bareRun(url: string, bodies: string[], pace?: number): Promise<ReturnType<typeof stats>> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: CONCURRENCY });
  const target = new URL(url);
  const post = (body: string, id: string) =>
    new Promise<void>((resolve, reject) => {
      const req = http.request(
        {
          host: target.hostname,
          port: target.port,
          path: target.pathname,
          method: 'POST',
          agent,
          headers: {
            'content-type': 'application/json',
            'content-length': Buffer.byteLength(body),
            'x-bench-id': id,
          },
        },
        (res) => {
          res.resume();
          res.on('end', resolve);
        },
      );
      req.on('error', reject);
      req.end(body);
    });
  const t0 = performance.now();
  const scheduled = bodies.map((_, i) => (pace ? t0 + (i / pace) * 1000 : t0));
  const done: number[] = new Array<number>(bodies.length);
  let next = 0;
  const lane = async () => {
    while (next < bodies.length) {
      const i = next++;
      const wait = scheduled[i] - performance.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      await post(bodies[i], `bare-${i}`);
      done[i] = performance.now();
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, lane));
  agent.destroy();
  return stats(
    done.map((d, i) => d - scheduled[i]),
    t0,
    Math.max(...done),
  );
}

/** The worker's claim batch (the dispatcher's `batch` in startWebhookWorker): the batched baseline's unit. */
const WORKER_BATCH = 256;

/**
 * The durable minimal loops: what any delivery system must at least do per delivery: record it (INSERT a
 * `webhook_deliveries` row, to the same endpoint row, so its keys and indexes are paid), send it (the signed POST,
 * both signatures, with the same keep-alive agent and `CONCURRENCY` sockets) and record the outcome (UPDATE the row
 * to delivered with the status code). No bus, no claims, no retries, no isolation between endpoints.
 *
 *  batch = 1   per delivery: `CONCURRENCY` lanes, each INSERT → POST → UPDATE, one statement each (autocommit);
 *  batch = 256 batched: two lanes (as the worker's fan-out ran two batches at once when it was set), one INSERT for
 *              256 deliveries, their 256 POSTs (the agent keeps `CONCURRENCY` on the wire), one multi-row UPDATE.
 */
async function durableRun(
  rt: TestRuntime,
  target: { workspaceId: string; endpointId: string; secret: string; url: string },
  bodies: { id: string; body: string }[],
  batch: number,
) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: CONCURRENCY });
  const url = new URL(target.url);
  const post = (eventId: string, body: string) =>
    new Promise<number>((resolve, reject) => {
      const headers = signatureHeaders({
        secret: target.secret,
        eventId,
        eventType: 'course.completed',
        body,
      });
      const req = http.request(
        {
          host: url.hostname,
          port: url.port,
          path: url.pathname,
          method: 'POST',
          agent,
          headers: { ...headers, 'content-length': Buffer.byteLength(body) },
        },
        (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode ?? 0));
        },
      );
      req.on('error', reject);
      req.end(body);
    });
  const insert = (rows: { delivery: string; id: string; body: string }[]) =>
    boundQuery(
      rt.orm.em.fork(),
      `insert into webhook_deliveries (id, workspace_id, endpoint_id, event_id, event_type, payload, status, next_attempt_at)
       select v.id, ?, ?, v.event_id, 'course.completed', v.payload, 'pending', now()
         from unnest(?::text[], ?::text[], ?::text[]) as v(id, event_id, payload)`,
      [
        target.workspaceId,
        target.endpointId,
        rows.map((r) => r.delivery),
        rows.map((r) => r.id),
        rows.map((r) => r.body),
      ],
    );
  const record = (done: { delivery: string; code: number }[]) =>
    boundQuery(
      rt.orm.em.fork(),
      `update webhook_deliveries d
          set status = case when v.code between 200 and 299 then 'delivered' else 'pending' end,
              attempts = d.attempts + 1, last_status_code = v.code, updated_at = now()
         from unnest(?::text[], ?::int[]) as v(id, code)
        where d.id = v.id`,
      [done.map((r) => r.delivery), done.map((r) => r.code)],
    );
  const t0 = performance.now();
  const finished = new Array<number>(bodies.length);
  let next = 0;
  const lane = async () => {
    while (next < bodies.length) {
      const from = next;
      next = Math.min(bodies.length, next + batch);
      const rows = bodies.slice(from, next).map((b) => ({ ...b, delivery: newId('whd') }));
      await insert(rows);
      const codes = await Promise.all(rows.map((r) => post(r.id, r.body)));
      await record(rows.map((r, k) => ({ delivery: r.delivery, code: codes[k] })));
      const at = performance.now();
      for (let k = from; k < next; k++) finished[k] = at;
    }
  };
  await Promise.all(Array.from({ length: batch === 1 ? CONCURRENCY : 2 }, lane));
  agent.destroy();
  return stats(
    finished.map((d) => d - t0),
    t0,
    Math.max(...finished),
  );
}

/**
 * The webhook worker in a child process (test/bench/webhook-worker-child.ts), as in production.
 * BENCH_WEBHOOK_WORKER_CPUPROF=<dir>: a CPU profile of the worker child, written to <dir> when it stops.
 * BENCH_WEBHOOK_WORKER_NODE_ARGS: more options for its `node` (space-separated), e.g. V8's heap sizes.
 */
const spawnWorker = (cfg: TestConfig) =>
  spawnBenchChild('webhook-worker-child.ts', cfg, {
    nodeArgs: [
      ...(process.env.BENCH_WEBHOOK_WORKER_NODE_ARGS?.split(' ').filter(Boolean) ?? []),
      ...(process.env.BENCH_WEBHOOK_WORKER_CPUPROF
        ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_WEBHOOK_WORKER_CPUPROF}`]
        : []),
    ],
  });

export async function run(): Promise<Record<string, unknown>> {
  const overrides = { WEBHOOK_RETRY_DELAYS: PRODUCTION_DELAYS, DB_POOL_MAX: '20' };
  const producer = await testRuntime('bench-producer', overrides);
  const workerRt = await testRuntime('bench-webhook-worker', overrides);
  const relay = startRelay({
    orm: producer.orm,
    bus: producer.bus,
    log: producer.log,
    fanOut: relayFanOut(producer.bus),
  });
  const policy = { key: () => parseEncryptionKey(producer.cfg.WEBHOOK_SECRET_KEY!), allowPrivate: true };
  const workerOptions: WebhookWorkerOptions = {};
  let worker: { stop(): Promise<void> } | undefined;
  let child: BenchChild<unknown> | undefined;
  const sinks: Receiver[] = [];
  const sink = async (hang = false) => {
    const s = receiverChild ? await childReceiver(receiverChild, hang) : await localReceiver(hang);
    sinks.push(s);
    return s;
  };
  const workspaceWith = async (urls: string[]) => {
    const em = producer.orm.em.fork();
    const ws = await makeWorkspace(em, 'scale', 'Webhook bench');
    for (const url of urls)
      await createEndpoint(em, policy, ws.id, { name: 'bench', url, eventTypes: ['course.completed'] });
    return ws;
  };
  /** A burst to one healthy endpoint. */
  const cleanRun = async () => {
    const s = await sink();
    return pipelineRun(producer, relay, await workspaceWith([urlOf(s)]), s, EVENTS, undefined, child);
  };
  /** A burst to a healthy endpoint with a never-answering one beside it; the dead one is removed afterwards. */
  const deadRun = async (clean: { perSec: number }) => {
    const healthy = await sink();
    const dead = await sink(true);
    const deadWs = await workspaceWith([urlOf(healthy), urlOf(dead)]);
    const withDead = await pipelineRun(producer, relay, deadWs, healthy, EVENTS, undefined, child);
    const [deadProgress] = await boundQuery<{ attempted: string; waiting: string }>(
      producer.orm.em.fork(),
      `select count(*) filter (where d.attempts > 0 or d.locked_until > now()) as attempted,
              count(*) filter (where d.attempts = 0 and (d.locked_until is null or d.locked_until <= now())) as waiting
         from webhook_deliveries d join webhook_endpoints e on e.id = d.endpoint_id
        where e.workspace_id = ? and e.url = ?`,
      [deadWs.id, urlOf(dead)],
    );
    // Stop the dead endpoint's traffic before the next runs.
    await boundQuery(producer.orm.em.fork(), 'delete from webhook_endpoints where workspace_id = ?', [
      deadWs.id,
    ]);
    return {
      healthy: withDead,
      deadEndpointAttemptsStartedOrDone: Number(deadProgress.attempted),
      deadEndpointDeliveriesWaiting: Number(deadProgress.waiting),
      healthyThroughputVsClean: round(withDead.perSec / clean.perSec, 2),
    };
  };
  const pacedRun = async () => {
    const s = await sink();
    return pipelineRun(producer, relay, await workspaceWith([urlOf(s)]), s, PACED, RATE);
  };

  try {
    if (RECEIVER === 'process') receiverChild = await spawnBenchChild('webhook-receiver-child.ts', {});
    const bodies = Array.from({ length: EVENTS }, (_, i) =>
      JSON.stringify({
        id: `evt_bare_${i}`,
        type: 'course.completed',
        createdAt: new Date().toISOString(),
        workspaceId: 'ws_bench',
        data: payload(i),
      }),
    );

    // The bare loop first (after a short warm-up), with nothing else running.
    await bareRun(urlOf(await sink()), bodies.slice(0, 1000));
    /** The bare loop over all the bodies, with the CPU it took. */
    const bareLoop = async () => {
      const bareSink = await sink();
      const bareCpu = await processCpuMeter(producer);
      return { ...(await bareRun(urlOf(bareSink), bodies)), cpuMsPer1000Deliveries: await bareCpu(EVENTS) };
    };
    const bare = await bareLoop();

    // The durable minimal loops (per delivery, then in the worker's batches), each to a fresh endpoint.
    const durableTarget = async () => {
      const s = await sink();
      const em = producer.orm.em.fork();
      const ws = await makeWorkspace(em, 'scale', 'Webhook bench (durable loop)');
      const created = await createEndpoint(em, policy, ws.id, {
        name: 'bench',
        url: urlOf(s),
        eventTypes: ['course.completed'],
      });
      return {
        workspaceId: ws.id,
        endpointId: created.endpoint.id,
        secret: created.signingSecret,
        url: urlOf(s),
      };
    };
    const durableBodies = bodies.map((body, i) => ({ id: `evt_durable_${i}`, body }));
    const durable = async (batch: number) => {
      const target = await durableTarget();
      await durableRun(producer, await durableTarget(), durableBodies.slice(0, 500), batch); // warm-up
      if (VACUUM) await vacuumTables(producer);
      const meter = await processCpuMeter(producer);
      const r = await durableRun(producer, target, durableBodies, batch);
      return { ...r, cpuMsPer1000Deliveries: await meter(EVENTS) };
    };
    const durablePerDelivery = await durable(1);
    const durableBatched = await durable(WORKER_BATCH);
    const vs = (ours: { perSec: number }) => ({
      vsBare: round(ours.perSec / bare.perSec, 2),
      vsDurablePerDelivery: round(ours.perSec / durablePerDelivery.perSec, 2),
      vsDurableBatched: round(ours.perSec / durableBatched.perSec, 2),
    });
    const results: Record<string, unknown> = {
      setup: {
        events: EVENTS,
        concurrencyPerEndpoint: CONCURRENCY,
        bodyBytes: Buffer.byteLength(bodies[0]),
        producer: `one multi-row INSERT per ${INSERT_BATCH} events; clock starts when it commits`,
        workerOptions:
          'defaults: 512 slots; per endpoint 128 leases (16 when slow) and 16 requests; poll 250 ms',
      },
      bare,
      durablePerDelivery,
      durableBatched,
    };

    if (SHAPES.includes('single')) {
      // singleProcess: producer, relay, worker and receiver on one Node thread. Warm-up first (JIT, pools).
      worker = await startWebhookWorker(workerRt, workerOptions);
      const warm = await sink();
      await pipelineRun(producer, relay, await workspaceWith([urlOf(warm)]), warm, 300);
      const spClean = await cleanRun();
      const spDead = await deadRun(spClean);
      const spPaced = await pacedRun();
      const pacedBareSink = await sink();
      const pacedBare = await bareRun(urlOf(pacedBareSink), bodies.slice(0, PACED), RATE);
      results.singleProcess = {
        clean: spClean,
        cleanVsBare: { throughputRatio: round(spClean.perSec / bare.perSec, 2) },
        cleanThroughputRatios: vs(spClean),
        withDeadEndpoint: spDead,
        paced: { ratePerSec: RATE, events: PACED, pipeline: spPaced, bare: pacedBare },
      };
    }

    if (SHAPES.includes('production')) {
      // productionShape: the worker in a process of its own; this one produces, relays and receives.
      await worker?.stop();
      worker = undefined;
      child = await spawnWorker(workerRt.cfg);
      const warm2 = await sink();
      await pipelineRun(producer, relay, await workspaceWith([urlOf(warm2)]), warm2, 300);
      // Clean bursts and bare loops in turn (PAIRS of each); the clean burst reported in full is the first.
      const cleans: Awaited<ReturnType<typeof cleanRun>>[] = [];
      const baresAfter: (typeof bare)[] = [];
      for (let i = 0; i < PAIRS; i++) {
        cleans.push(await cleanRun());
        baresAfter.push(await bareLoop());
      }
      const psClean = cleans[0];
      const psDead = await deadRun(psClean);
      const psPaced = await pacedRun();
      // Each clean burst against the mean of the bare loops on either side of it (for the first: the bare loop the
      // run opened with, and the one right after it).
      const baresAround = [bare, ...baresAfter];
      const bareMean = (i: number) => (baresAround[i].perSec + baresAround[i + 1].perSec) / 2;
      const pairRatios = cleans.map((c, i) => round(c.perSec / bareMean(i), 2));
      // No burst goes faster than the machine's cores allow at its CPU per delivery (every process on the machine):
      // the ceiling of each burst, as a ratio of its bare loops, and the CPU per delivery a burst could spend at most
      // to reach half of them with every core busy.
      const cores = os.cpus().length;
      const machineMs = (r: { cpuMsPer1000Deliveries?: { machine?: number } }) =>
        r.cpuMsPer1000Deliveries?.machine ?? NaN;

      results.productionShape = {
        clean: psClean,
        cleanVsBare: { throughputRatio: round(psClean.perSec / bare.perSec, 2) },
        cleanThroughputRatios: vs(psClean),
        /** The bare loop again, right after: how much the machine moved since the first. */
        bareAgainPerSec: baresAfter[0].perSec,
        pairs: {
          cleanPerSec: cleans.map((c) => c.perSec),
          barePerSec: baresAround.map((b) => b.perSec),
          ratiosVsBare: pairRatios,
          // Nearest rank: with an even number of pairs, the lower of the two middle ratios.
          medianRatioVsBare: percentile(
            [...pairRatios].sort((a, b) => a - b),
            50,
          ),
          cleanCpuMsPer1000Deliveries: cleans.map((c) => c.cpuMsPer1000Deliveries),
          cpuBound: {
            cores,
            cleanMachineCpuMsPer1000Deliveries: cleans.map(machineMs),
            bareMachineCpuMsPer1000Deliveries: baresAround.map(machineMs),
            ceilingRatiosVsBare: cleans.map((c, i) => round((cores * 1e6) / machineMs(c) / bareMean(i), 2)),
            machineCpuMsPer1000ForHalfBare: cleans.map((_, i) =>
              round((cores * 1e6) / (0.5 * bareMean(i)), 0),
            ),
          },
        },
        withDeadEndpoint: psDead,
        paced: { ratePerSec: RATE, events: PACED, pipeline: psPaced },
      };
    }
    results.peakRssMiB = round(process.resourceUsage().maxRSS / 1024);
    return results;
  } finally {
    await worker?.stop();
    await child?.stop();
    await relay.stop();
    await Promise.all(sinks.map((s) => s.close()));
    await receiverChild?.stop();
    receiverChild = undefined;
    await closeRuntime(workerRt, { keepStorage: true });
    await closeRuntime(producer, { keepStorage: true });
  }
}
