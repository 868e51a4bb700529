import { boundQuery } from '@lectern/db';
import { makeWorkspace, startTestApp } from '../support/context.js';
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
 * The player's own limits are off (0), so the numbers are the path's, not the limiter's. The load is sent with a
 * bare `fetch` (no response-contract check, unlike the tests' client): the bench process also runs the server,
 * so every client-side millisecond would be charged to the path. Numbers only.
 * Tunables: BENCH_PLAYER_RUNS (1000), BENCH_PLAYER_BATCHES (3), BENCH_PLAYER_CONCURRENCY (32).
 */
const RUNS = Number(process.env.BENCH_PLAYER_RUNS ?? 1000);
const BATCHES = Number(process.env.BENCH_PLAYER_BATCHES ?? 3);
const CONCURRENCY = Number(process.env.BENCH_PLAYER_CONCURRENCY ?? 32);

const round = (n: number, d = 1) => Math.round(n * 10 ** d) / 10 ** d;
const pct = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];

/** POST a JSON body to the Player API; the parsed answer, or an error naming the status. */
async function post<T>(url: string, body: unknown, token?: string): Promise<{ status: number; data: T }> {
  const res = await fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      ...(token ? { authorization: `Bearer ${token}` } : {}),
    },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  if (res.status >= 300) throw new Error(`${url}: ${res.status} ${text}`);
  return { status: res.status, data: (JSON.parse(text) as { data: T }).data };
}

/** Runs `n` jobs with `concurrency` workers; returns the wall time and each job's latency (ms). */
async function pool(n: number, concurrency: number, job: (i: number) => Promise<void>) {
  const latencies: number[] = [];
  let next = 0;
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
  latencies.sort((a, b) => a - b);
  return {
    seconds,
    p50Ms: round(pct(latencies, 50)),
    p99Ms: round(pct(latencies, 99)),
    // CPU of this process (server, client and relay alike) per job, user + system: less swayed by other work on
    // a shared machine than the wall-clock numbers.
    cpuMsPerJob: round((cpu.user + cpu.system) / 1000 / n, 2),
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
  const app = await startTestApp({
    PLAYER_OPENS_PER_MINUTE_PER_ADDRESS: '0',
    PLAYER_REQUESTS_PER_MINUTE_PER_RUN: '0',
    RATE_LIMIT_PER_MINUTE: '0',
  });
  try {
    const em = () => app.rt.orm.em.fork();
    const ws = await makeWorkspace(em(), 'scale');
    const courseId = await publishedCourse(app.base, ws.key);
    const runsUrl = `${app.url}/player/v1/runs`;

    // (a) opens
    const runs: OpenRunResult[] = new Array(RUNS);
    const opens = await pool(RUNS, CONCURRENCY, async (i) => {
      const res = await post<OpenRunResult>(runsUrl, { courseId, anonymousId: anonymousId(100_000 + i) });
      if (res.status !== 201) throw new Error(`open ${i}: ${res.status}`);
      runs[i] = res.data;
    });

    // (b) ingest: batch k of run r is job k * RUNS + r, so concurrent jobs are different runs.
    const [{ n: before }] = await boundQuery<{ n: number }>(
      em(),
      'select count(*)::int as n from outbox_events',
    );
    const ingest = await pool(RUNS * BATCHES, CONCURRENCY, async (j) => {
      const r = runs[j % RUNS];
      const b = Math.floor(j / RUNS);
      await post(
        `${runsUrl}/${r.completion.id}/events`,
        { batchId: `b${b}`, events: batchEvents(b) },
        r.runToken,
      );
    });
    const [{ n: after }] = await boundQuery<{ n: number }>(
      em(),
      'select count(*)::int as n from outbox_events',
    );
    const events = RUNS * BATCHES * 10;

    // Baselines: one row per event (the same 10 per batch) of the shape the outbox holds.
    const sample = (await boundQuery<{ type: string; data: unknown }>(
      em(),
      `select type, data from outbox_events where workspace_id = ? and type in ('course.progress','course.answered') limit 10`,
      [ws.id],
    )) as { type: string; data: unknown }[];
    await boundQuery(
      em(),
      'create table if not exists bench_learner_events (like outbox_events including all)',
    );
    const rowsOf = (j: number) =>
      Array.from({ length: 10 }, (_, k) => {
        const s = sample[k % sample.length];
        return [`bev_${j}_${k}`, ws.id, s.type, JSON.stringify(s.data), new Date()];
      });
    const multiRow = await pool(RUNS * BATCHES, CONCURRENCY, async (j) => {
      const rows = rowsOf(j);
      await boundQuery(
        em(),
        `insert into bench_learner_events (id, workspace_id, type, data, created_at) values ${rows.map(() => '(?, ?, ?, ?::jsonb, ?)').join(', ')}`,
        rows.flat(),
      );
    });
    await boundQuery(em(), 'truncate bench_learner_events');
    const perEvent = await pool(RUNS * BATCHES, CONCURRENCY, async (j) => {
      for (const row of rowsOf(j))
        await boundQuery(
          em(),
          'insert into bench_learner_events (id, workspace_id, type, data, created_at) values (?, ?, ?, ?::jsonb, ?)',
          row,
        );
    });
    await boundQuery(em(), 'drop table bench_learner_events');

    const perSec = (s: number) => round(events / s);
    return {
      setup: {
        runs: RUNS,
        batchesPerRun: BATCHES,
        eventsPerBatch: 10,
        concurrency: CONCURRENCY,
        poolMax: app.rt.cfg.DB_POOL_MAX,
      },
      opens: {
        perSec: round(RUNS / opens.seconds),
        p50Ms: opens.p50Ms,
        p99Ms: opens.p99Ms,
        cpuMsPerOpen: opens.cpuMsPerJob,
      },
      ingest: {
        eventsPerSec: perSec(ingest.seconds),
        batchesPerSec: round((RUNS * BATCHES) / ingest.seconds),
        p50Ms: ingest.p50Ms,
        p99Ms: ingest.p99Ms,
        cpuMsPerBatch: ingest.cpuMsPerJob,
        outboxRowsWritten: after - before,
      },
      baselineMultiRow: {
        eventsPerSec: perSec(multiRow.seconds),
        p99Ms: multiRow.p99Ms,
        cpuMsPerBatch: multiRow.cpuMsPerJob,
      },
      baselinePerEvent: {
        eventsPerSec: perSec(perEvent.seconds),
        p99Ms: perEvent.p99Ms,
        cpuMsPerBatch: perEvent.cpuMsPerJob,
      },
      ratios: {
        ingestVsMultiRow: round(multiRow.seconds / ingest.seconds, 2),
        ingestVsPerEvent: round(perEvent.seconds / ingest.seconds, 2),
      },
    };
  } finally {
    await app.close();
  }
}
