import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRequire } from 'node:module';
import Koa from 'koa';
import { ConfigError } from '@lectern/config';
import { boundQuery, type MikroORM } from '@lectern/db';
import { searchIdentities, identityDto } from '@lectern/identities';
import { paged, parsePaging } from '@lectern/contracts';
import { recordEvent, startRelay } from '@lectern/events';
import { relayFanOut } from '@lectern/webhooks';
import { parseKey } from '@lectern/auth';
import { usageMonth } from '@lectern/plans';
import { closeRuntime } from '@lectern/runtime';
import { startApiServer } from '@lectern/api';
import {
  makeWorkspace,
  startTestApp,
  testRuntime,
  type TestApp,
  type TestWorkspace,
} from '../support/context.js';
import { call, waitFor } from '../support/http.js';

/**
 * The spine benchmark (issue 2):
 *  (a) GET /identities?limit=1000 and GET /me through the full stack, limiter off and on,
 *      against a bare Koa handler running the same SQL through the same ORM;
 *  (b) bulk upsert of 500 identities, median latency;
 *  (c) outbox → JetStream relay throughput.
 * Numbers only: nothing here asserts on timing. Tunables (environment):
 *   BENCH_DURATION_S (4)  seconds of load per HTTP measurement, after a 1 s warm-up
 *   BENCH_ROUNDS (2)      interleaved rounds per HTTP variant (full stack, bare, limiter on)
 *   BENCH_CONNECTIONS (32) concurrent connections of the load generator
 *   BENCH_BULK_RUNS (30)   bulk upserts measured (after 2 warm-up runs)
 *   BENCH_OUTBOX_EVENTS (20000) outbox rows relayed
 */

const DURATION_S = Number(process.env.BENCH_DURATION_S ?? 4);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 32);
const BULK_RUNS = Number(process.env.BENCH_BULK_RUNS ?? 30);
const OUTBOX_EVENTS = Number(process.env.BENCH_OUTBOX_EVENTS ?? 20_000);
const SEED_IDENTITIES = 1_500;
/** The brief asks for a "very high" limit; the config accepts at most 1,000,000 per minute. */
const HIGH_LIMIT = '1000000';

// autocannon ships no type declarations; load it through require with a local shape.
interface AutocannonResult {
  duration: number;
  errors: number;
  timeouts: number;
  non2xx: number;
  '2xx': number;
  latency: { p50: number; p99: number; average: number; max: number };
  requests: { average: number };
  statusCodeStats: Record<string, { count: number }>;
}
type Autocannon = (opts: Record<string, unknown>) => Promise<AutocannonResult>;
const autocannon = createRequire(import.meta.url)('autocannon') as Autocannon;

interface LoadResult {
  rps: number;
  p50Ms: number;
  p99Ms: number;
  ok: number;
  failed: number;
  statusCodes: Record<string, number>;
}

/**
 * One measurement: a 1 s warm-up, then DURATION_S of load with CONNECTIONS connections.
 * The load generator runs in a worker thread so it does not share the server's event loop.
 * Requests/s counts only 2xx answers.
 */
async function load(url: string, headers: Record<string, string>): Promise<LoadResult> {
  const base = { url, headers, connections: CONNECTIONS, workers: 1 };
  await autocannon({ ...base, duration: 1 });
  const r = await autocannon({ ...base, duration: DURATION_S });
  return {
    rps: round(r['2xx'] / r.duration),
    p50Ms: r.latency.p50,
    p99Ms: r.latency.p99,
    ok: r['2xx'],
    failed: r.non2xx + r.errors + r.timeouts,
    statusCodes: Object.fromEntries(Object.entries(r.statusCodeStats).map(([k, v]) => [k, v.count])),
  };
}

const round = (n: number, digits = 1) => Math.round(n * 10 ** digits) / 10 ** digits;

function stats(samples: number[]) {
  const s = [...samples].sort((a, b) => a - b);
  const at = (q: number) => s[Math.min(s.length - 1, Math.max(0, Math.ceil(q * s.length) - 1))];
  const median = s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
  return {
    runs: s.length,
    medianMs: round(median),
    p90Ms: round(at(0.9)),
    minMs: round(s[0]),
    maxMs: round(s[s.length - 1]),
  };
}

/**
 * The full stack with the limiter disabled (RATE_LIMIT_PER_MINUTE=0). If the configuration
 * refuses 0, the same runtime is started with the limit set to 0 on its parsed config, which
 * is what the auth middleware reads; the result says which way was taken.
 */
async function startUnlimitedApp(): Promise<{ app: TestApp; via: string }> {
  try {
    return { app: await startTestApp({ RATE_LIMIT_PER_MINUTE: '0' }), via: 'RATE_LIMIT_PER_MINUTE=0' };
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    const rt0 = await testRuntime('api');
    const rt = { ...rt0, cfg: { ...rt0.cfg, RATE_LIMIT_PER_MINUTE: 0 } };
    const api = await startApiServer(rt, { port: 0, host: '127.0.0.1' });
    return {
      via: 'limit 0 set on parsed config (env 0 refused)',
      app: {
        rt,
        api,
        url: api.url,
        base: `${api.url}/api/v1`,
        async close() {
          await api.close();
          await closeRuntime(rt, { keepStorage: true });
        },
      },
    };
  }
}

/** A bare Koa app on port 0: no auth, no envelope middleware, no logging; the same queries. */
async function startBareApp(
  orm: MikroORM,
  workspaceId: string,
  key: string,
): Promise<{ url: string; close(): Promise<void> }> {
  const lookup = parseKey(key)!.lookup;
  const app = new Koa();
  app.use(async (ctx) => {
    if (ctx.path === '/identities') {
      // The same ORM query as GET /api/v1/identities (findAndCount, newest first).
      const paging = parsePaging(ctx.query);
      const { rows, total } = await searchIdentities(orm.em.fork(), workspaceId, paging);
      ctx.body = paged(rows.map(identityDto), total, paging);
    } else if (ctx.path === '/me') {
      // The one statement GET /api/v1/me costs: the key lookup of the auth middleware.
      const [row] = await boundQuery<{ workspace_id: string; name: string; plan: string }>(
        orm.em.fork(),
        `select k.id as key_id, k.hash, k.scope, k.revoked_at, w.id as workspace_id, w.name, w.plan,
                w.billing_status, w.grace_until,
                coalesce((select u.count from usage_counters u
                           where u.workspace_id = w.id and u.month = ? and u.metric = 'views'), 0) as views
           from api_keys k join workspaces w on w.id = k.workspace_id
          where k.lookup = ?`,
        [usageMonth(), lookup],
      );
      ctx.body = { workspace_id: row.workspace_id, workspace_name: row.name, plan: row.plan };
    } else {
      ctx.status = 404;
    }
  });
  const server = http.createServer(app.callback());
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

function people(prefix: string, n: number) {
  return Array.from({ length: n }, (_, i) => ({
    externalId: `${prefix}-${i}`,
    name: `Learner ${prefix} ${i}`,
    email: `${prefix}.${i}@bench.example`,
  }));
}

async function seed(app: TestApp, ws: TestWorkspace): Promise<void> {
  for (let i = 0; i * 500 < SEED_IDENTITIES; i++) {
    const res = await call(app.base, 'POST', '/identities/bulk', {
      key: ws.key,
      body: { identities: people(`seed${i}`, 500) },
    });
    if (res.status !== 201) throw new Error(`seeding failed: ${res.status} ${res.text.slice(0, 200)}`);
  }
}

async function expectOk(
  url: string,
  headers: Record<string, string>,
  check: (body: Record<string, unknown>) => boolean,
  what: string,
) {
  const res = await fetch(url, { headers });
  const body = (await res.json()) as Record<string, unknown>;
  if (res.status !== 200 || !check(body))
    throw new Error(`${what}: unexpected answer ${res.status} ${JSON.stringify(body).slice(0, 200)}`);
}

/** Mean of the rounds; per-round requests/s kept so noise between rounds is visible. */
function combine(rounds: LoadResult[]) {
  const mean = (f: (r: LoadResult) => number) => round(rounds.reduce((a, r) => a + f(r), 0) / rounds.length);
  const codes: Record<string, number> = {};
  for (const r of rounds) for (const [k, v] of Object.entries(r.statusCodes)) codes[k] = (codes[k] ?? 0) + v;
  return {
    rps: mean((r) => r.rps),
    p50Ms: mean((r) => r.p50Ms),
    p99Ms: mean((r) => r.p99Ms),
    ok: rounds.reduce((a, r) => a + r.ok, 0),
    failed: rounds.reduce((a, r) => a + r.failed, 0),
    statusCodes: codes,
    rpsPerRound: rounds.map((r) => r.rps),
  };
}

async function httpBench(off: TestApp, on: TestApp, ws: TestWorkspace) {
  const auth = { authorization: `Bearer ${ws.key}` };
  const bare = await startBareApp(off.rt.orm, ws.id, ws.key);
  const clearHits = () => boundQuery(off.rt.orm.em.fork(), 'delete from rate_hits');
  const out: Record<string, unknown> = {};
  try {
    const has1000 = (b: Record<string, unknown>) => Array.isArray(b.data) && b.data.length === 1000;
    await expectOk(`${off.base}/identities?limit=1000`, auth, has1000, 'full stack /identities');
    await expectOk(`${bare.url}/identities?limit=1000`, {}, has1000, 'bare /identities');
    await expectOk(`${bare.url}/me`, {}, (b) => b.workspace_id === ws.id, 'bare /me');

    for (const [name, path] of [
      ['identities1000', '/identities?limit=1000'],
      ['me', '/me'],
    ] as const) {
      const variants = {
        fullStack: () => load(off.base + path, auth),
        bareKoa: () => load(bare.url + path, {}),
        // Every run of the limiter starts from an empty window, so runs are comparable.
        fullStackLimiterOn: async () => {
          await clearHits();
          return load(on.base + path, auth);
        },
      };
      const rounds: Record<keyof typeof variants, LoadResult[]> = {
        fullStack: [],
        bareKoa: [],
        fullStackLimiterOn: [],
      };
      const order = Object.keys(variants) as (keyof typeof variants)[];
      // Interleaved, the second round in reverse order, so drift on a shared machine hits all alike.
      for (let r = 0; r < ROUNDS; r++) {
        for (const v of r % 2 ? [...order].reverse() : order) rounds[v].push(await variants[v]());
      }
      const full = combine(rounds.fullStack);
      const b = combine(rounds.bareKoa);
      const limited = combine(rounds.fullStackLimiterOn);
      out[name] = {
        fullStack: full,
        bareKoa: b,
        fullStackLimiterOn: limited,
        fullVsBare: {
          rpsRatio: round(full.rps / b.rps, 2),
          p99Ratio: round(full.p99Ms / Math.max(b.p99Ms, 1), 2),
        },
        limiterOnVsOff: {
          rpsRatio: round(limited.rps / full.rps, 2),
          p99Ratio: round(limited.p99Ms / Math.max(full.p99Ms, 1), 2),
        },
      };
    }
  } finally {
    await bare.close();
    await clearHits().catch(() => undefined);
  }
  return out;
}

async function bulkBench(app: TestApp, ws: TestWorkspace) {
  const time = async (prefix: string, expectStatus: number) => {
    const t0 = performance.now();
    const res = await call(app.base, 'POST', '/identities/bulk', {
      key: ws.key,
      body: { identities: people(prefix, 500) },
    });
    const ms = performance.now() - t0;
    if (res.status !== expectStatus) throw new Error(`bulk upsert: ${res.status} ${res.text.slice(0, 200)}`);
    return ms;
  };
  for (let i = 0; i < 2; i++) await time(`warm${i}`, 201);
  const created: number[] = [];
  for (let i = 0; i < BULK_RUNS; i++) created.push(await time(`bulk${i}`, 201));
  // The same 500 externalIds again: every row an update, no events.
  const updated: number[] = [];
  for (let i = 0; i < Math.ceil(BULK_RUNS / 3); i++) updated.push(await time(`bulk${i}`, 200));
  return { allCreated: stats(created), allUpdated: stats(updated) };
}

async function outboxBench(workspaceId: string) {
  const rt = await testRuntime('bench-relay');
  const unpublished = async () =>
    Number(
      (
        await boundQuery<{ n: string }>(
          rt.orm.em.fork(),
          'select count(*) as n from outbox_events where published_at is null',
        )
      )[0].n,
    );
  try {
    // Publish whatever earlier steps left behind so the measurement starts from an empty outbox.
    const leftover = startRelay({ orm: rt.orm, bus: rt.bus, log: rt.log, fanOut: relayFanOut(rt.bus) });
    await waitFor(async () => (await unpublished()) === 0, { timeoutMs: 60_000, what: 'an empty outbox' });
    await leftover.stop();

    const batch = 1_000;
    const t0 = performance.now();
    for (let done = 0; done < OUTBOX_EVENTS; done += batch) {
      const em = rt.orm.em.fork();
      for (let i = done; i < Math.min(OUTBOX_EVENTS, done + batch); i++) {
        recordEvent(em, workspaceId, 'identity.created', {
          identity: { id: `idn_bench${i}`, externalId: `outbox-${i}`, name: `Learner ${i}`, email: null },
        });
      }
      await em.flush();
    }
    const insertMs = performance.now() - t0;
    if ((await unpublished()) !== OUTBOX_EVENTS) throw new Error('outbox rows missing after insert');

    const streamName = rt.bus.names.stream('EVENTS');
    const before = (await rt.bus.jsm.streams.info(streamName)).state.messages;
    const t1 = performance.now();
    const relay = startRelay({ orm: rt.orm, bus: rt.bus, log: rt.log, fanOut: relayFanOut(rt.bus) });
    await waitFor(async () => (await unpublished()) === 0, {
      timeoutMs: 120_000,
      intervalMs: 20,
      what: 'the relay to publish every row',
    });
    const relayMs = performance.now() - t1;
    await relay.stop();
    const after = (await rt.bus.jsm.streams.info(streamName)).state.messages;

    return {
      events: OUTBOX_EVENTS,
      insert: {
        batchSize: batch,
        ms: Math.round(insertMs),
        rowsPerSec: Math.round(OUTBOX_EVENTS / (insertMs / 1000)),
      },
      relay: {
        batchSize: 500,
        ms: Math.round(relayMs),
        eventsPerSec: Math.round(OUTBOX_EVENTS / (relayMs / 1000)),
      },
      streamMessagesAdded: after - before,
    };
  } finally {
    await closeRuntime(rt, { keepStorage: true });
  }
}

export async function run(): Promise<Record<string, unknown>> {
  const open: TestApp[] = [];
  const closeAll = async () => {
    for (const app of open.splice(0)) await app.close();
  };
  try {
    const { app: off, via } = await startUnlimitedApp();
    open.push(off);
    const on = await startTestApp({ RATE_LIMIT_PER_MINUTE: HIGH_LIMIT });
    open.push(on);
    const ws = await makeWorkspace(off.rt.orm.em.fork(), 'scale', 'Bench');
    await seed(off, ws);
    const httpResults = await httpBench(off, on, ws);
    const bulk = await bulkBench(off, ws);
    const setup = {
      connections: CONNECTIONS,
      durationS: DURATION_S,
      rounds: ROUNDS,
      seededIdentities: SEED_IDENTITIES,
      limiterOff: via,
      limiterOn: `RATE_LIMIT_PER_MINUTE=${HIGH_LIMIT}`,
      logLevel: off.rt.cfg.LOG_LEVEL,
      dbPoolMax: off.rt.cfg.DB_POOL_MAX,
    };
    // The API servers run relays of their own: stop them before measuring the relay alone.
    await closeAll();
    const outbox = await outboxBench(ws.id);
    return { setup, http: httpResults, bulkUpsert500: bulk, outboxRelay: outbox };
  } finally {
    await closeAll().catch(() => undefined);
  }
}
