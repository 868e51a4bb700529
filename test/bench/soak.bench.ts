/**
 * Soak: one `lectern start` process (API and every worker, spawned as the CLI runs it) under a steady mix of
 * reads, writes, CSV imports and webhook fan-out to a loopback receiver, for SOAK_SECONDS (default 600).
 * Every 10 s it samples the process's resident set size and event-loop delay (its own /metrics) and the
 * client-side p99 of the window, then says whether memory stayed flat. Reports numbers; asserts nothing.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import net from 'node:net';
import path from 'node:path';
import { context } from '../support/context.js';
import { REPO_ROOT, envFor } from '../support/spine.js';
import { Receiver } from '../support/webhook-receiver.js';
import { bigCsv } from '../support/csv.js';

const SOAK_SECONDS = Number(process.env.SOAK_SECONDS ?? 600);
/** Requests started per second, whatever the answers take (an open model), up to MAX_IN_FLIGHT at once. */
const RATE = Number(process.env.SOAK_RATE ?? 10);
/** A tick that finds this many requests unanswered is shed (counted, not sent): a soak, not a stress test. */
const MAX_IN_FLIGHT = Number(process.env.SOAK_MAX_IN_FLIGHT ?? 32);
const SAMPLE_MS = 10_000;
/** Samples before this are warm-up (JIT, pools, caches) and left out of the flatness verdict. */
const WARMUP_MS = Number(process.env.SOAK_WARMUP_SECONDS ?? 60) * 1000;

type Op = 'read' | 'write' | 'csv';

interface Sample {
  t: number;
  rssMiB: number;
  heapUsedMiB: number;
  eventLoopP99Ms: number;
  requests: number;
  errors: number;
  p99Ms: Record<Op, number | null>;
  webhookDeliveries: number;
}

const mib = (bytes: number) => Math.round((bytes / 1024 / 1024) * 10) / 10;

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as net.AddressInfo;
      s.close(() => resolve(port));
    });
    s.on('error', reject);
  });
}

function p99(values: number[]): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  return Math.round(sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * 0.99))] * 10) / 10;
}

/** Least-squares slope of y over x. */
function slope(points: [number, number][]): number {
  const n = points.length;
  if (n < 2) return 0;
  const mx = points.reduce((s, p) => s + p[0], 0) / n;
  const my = points.reduce((s, p) => s + p[1], 0) / n;
  const num = points.reduce((s, p) => s + (p[0] - mx) * (p[1] - my), 0);
  const den = points.reduce((s, p) => s + (p[0] - mx) ** 2, 0);
  return den === 0 ? 0 : num / den;
}

function metric(text: string, name: string): number {
  const m = new RegExp(`^${name}(?:\\{[^}]*\\})? ([0-9.eE+-]+)$`, 'm').exec(text);
  return m ? Number(m[1]) : NaN;
}

async function startLectern(port: number): Promise<{ child: ChildProcess; key: string; base: string }> {
  const cfg = context().cfg;
  const env = envFor(cfg, {
    PORT: String(port),
    HOST: '127.0.0.1',
    PUBLIC_URL: `http://127.0.0.1:${port}`,
    RATE_LIMIT_PER_MINUTE: '0',
    LOG_LEVEL: 'warn',
    ALLOW_PRIVATE_NETWORKS: 'true',
  });
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', path.join(REPO_ROOT, 'apps/cli/src/main.ts'), 'start'],
    { env, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let out = '';
  child.stdout!.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr!.on('data', (c: Buffer) => process.stderr.write(c));
  const deadline = Date.now() + 60_000;
  for (;;) {
    const key = /API key:\s+(lk_\S+)/.exec(out)?.[1];
    if (key) return { child, key, base: `http://127.0.0.1:${port}/api/v1` };
    if (child.exitCode !== null) throw new Error(`lectern start exited with ${child.exitCode}:\n${out}`);
    if (Date.now() > deadline) throw new Error(`lectern start did not come up in 60 s:\n${out}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

export async function run(): Promise<Record<string, unknown>> {
  const port = await freePort();
  const receiver = new Receiver();
  await receiver.start();
  const { child, key, base } = await startLectern(port);
  const auth = { authorization: `Bearer ${key}` };
  const json = { ...auth, 'content-type': 'application/json' };
  const send = async (method: string, p: string, body?: unknown, headers: Record<string, string> = json) => {
    const res = await fetch(base + p, {
      method,
      headers,
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    });
    const text = await res.text();
    return {
      status: res.status,
      body: text ? (JSON.parse(text) as { data?: Record<string, unknown> }) : null,
    };
  };

  try {
    // Fixtures: a webhook on everything the traffic emits, courses to read and edit, a collection.
    const hook = await send('POST', '/webhooks', {
      name: 'soak',
      url: `http://127.0.0.1:${receiver.port}/hook`,
      eventTypes: ['identity.created', 'course.published', 'course.unpublished'],
    });
    if (hook.status !== 201) throw new Error(`webhook create: ${hook.status} ${JSON.stringify(hook.body)}`);
    const courseIds: string[] = [];
    for (let i = 0; i < 20; i++) {
      const c = await send('POST', '/courses', {
        title: `Soak ${i}`,
        screens: Array.from({ length: 10 }, (_, s) => ({
          id: `s${s}`,
          title: `Screen ${s}`,
          blocks: [
            { id: `s${s}h`, type: 'heading', text: `Heading ${s}` },
            { id: `s${s}t`, type: 'text', text: 'Some reading material. '.repeat(20) },
            {
              id: `s${s}q`,
              type: 'quiz_single_choice',
              question: 'Which?',
              options: [
                { id: 'a', text: 'A', correct: true },
                { id: 'b', text: 'B' },
              ],
            },
          ],
        })),
      });
      courseIds.push(c.body!.data!.id as string);
    }
    const col = await send('POST', '/collections', { name: 'Soak' });
    const colId = col.body!.data!.id as string;
    for (const id of courseIds.slice(0, 10))
      await send('POST', `/collections/${colId}/courses`, { courseId: id });
    const csv = bigCsv(100);

    // Weighted mix per tick: mostly reads, a steady share of writes, a CSV import every ~2.5 s.
    const plan: [Op, number][] = [
      ['read', 70],
      ['write', 28],
      ['csv', 1],
    ];
    const total = plan.reduce((s, [, w]) => s + w, 0);
    let seq = 0;
    const pick = (): Op => {
      let r = (seq * 7919) % total;
      seq++;
      for (const [op, w] of plan) {
        if (r < w) return op;
        r -= w;
      }
      return 'read';
    };
    const one = async (op: Op, n: number): Promise<number> => {
      const course = courseIds[n % courseIds.length];
      if (op === 'csv') {
        return (
          await send('POST', '/courses/import/csv?title=Soak%20CSV', csv, {
            ...auth,
            'content-type': 'text/csv',
          })
        ).status;
      }
      if (op === 'read') {
        switch (n % 4) {
          case 0:
            return (await send('GET', `/courses/${course}`)).status;
          case 1:
            return (await send('GET', '/identities?limit=50&search=learner-1')).status;
          case 2:
            return (await send('GET', `/collections/${colId}`)).status;
          default:
            return (await send('GET', '/me')).status;
        }
      }
      switch (n % 3) {
        case 0:
          // A new learner each time: identity.created fans out to the receiver.
          return (await send('POST', '/identities', { externalId: `learner-${n}`, name: `L ${n}` })).status;
        case 1:
          return (await send('PATCH', `/courses/${course}`, { status: n % 2 === 0 ? 'published' : 'draft' }))
            .status;
        default:
          return (await send('PATCH', `/courses/${course}`, { title: `Soak ${n}` })).status;
      }
    };

    const samples: Sample[] = [];
    const window: Record<Op, number[]> = { read: [], write: [], csv: [] };
    let requests = 0;
    let errors = 0;
    let inFlight = 0;
    let maxInFlight = 0;
    let shed = 0;
    const failures: Record<string, number> = {};
    let deliveriesBefore = 0;
    const started = Date.now();
    const pending = new Set<Promise<void>>();
    const tickMs = 1000 / RATE;
    let next = started;
    const sampler = setInterval(() => {
      const at = Math.round((Date.now() - started) / 1000);
      void (async () => {
        const res = await fetch(`http://127.0.0.1:${port}/metrics`);
        const text = await res.text();
        const delivered = receiver.receipts.length;
        samples.push({
          t: at,
          rssMiB: mib(metric(text, 'lectern_process_resident_memory_bytes')),
          heapUsedMiB: mib(metric(text, 'lectern_nodejs_heap_size_used_bytes')),
          eventLoopP99Ms:
            Math.round(metric(text, 'lectern_nodejs_eventloop_lag_p99_seconds') * 1000 * 10) / 10,
          requests,
          errors,
          p99Ms: { read: p99(window.read), write: p99(window.write), csv: p99(window.csv) },
          webhookDeliveries: delivered - deliveriesBefore,
        });
        deliveriesBefore = delivered;
        window.read = [];
        window.write = [];
        window.csv = [];
        requests = 0;
        errors = 0;
        const s = samples[samples.length - 1];
        process.stdout.write(
          `  t=${s.t}s rss=${s.rssMiB}MiB heap=${s.heapUsedMiB}MiB loopP99=${s.eventLoopP99Ms}ms ` +
            `p99 read/write/csv=${s.p99Ms.read}/${s.p99Ms.write}/${s.p99Ms.csv}ms req=${s.requests} err=${s.errors} hooks=${s.webhookDeliveries}\n`,
        );
      })().catch((err: unknown) => process.stderr.write(`sample failed: ${String(err)}\n`));
    }, SAMPLE_MS);

    let n = 0;
    while (Date.now() - started < SOAK_SECONDS * 1000) {
      if (inFlight >= MAX_IN_FLIGHT) {
        shed++;
        next += tickMs;
        const wait = next - Date.now();
        if (wait > 0) await new Promise((r) => setTimeout(r, wait));
        continue;
      }
      const op = pick();
      const i = n++;
      const t0 = performance.now();
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      const p: Promise<void> = one(op, i)
        .then((status) => {
          requests++;
          if (status >= 400) {
            errors++;
            failures[`${op} ${status}`] = (failures[`${op} ${status}`] ?? 0) + 1;
          }
          window[op].push(performance.now() - t0);
        })
        .catch((err: unknown) => {
          requests++;
          errors++;
          const why = `${op} ${(err as Error)?.message ?? 'error'}`;
          failures[why] = (failures[why] ?? 0) + 1;
        })
        .finally(() => {
          inFlight--;
          pending.delete(p);
        });
      pending.add(p);
      next += tickMs;
      const wait = next - Date.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    }
    await Promise.all(pending);
    clearInterval(sampler);

    const steady = samples.filter((s) => s.t * 1000 >= WARMUP_MS);
    const rssSlope = slope(steady.map((s) => [s.t / 60, s.rssMiB]));
    const heapSlope = slope(steady.map((s) => [s.t / 60, s.heapUsedMiB]));
    const third = Math.max(1, Math.floor(steady.length / 3));
    const avg = (xs: number[]) =>
      Math.round((xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length)) * 10) / 10;
    const firstThird = avg(steady.slice(0, third).map((s) => s.rssMiB));
    const lastThird = avg(steady.slice(-third).map((s) => s.rssMiB));
    const all = (k: Op) => steady.map((s) => s.p99Ms[k]).filter((v): v is number => v !== null);
    return {
      setup: {
        seconds: SOAK_SECONDS,
        ratePerSecond: RATE,
        warmupSeconds: WARMUP_MS / 1000,
        samples: samples.length,
      },
      memory: {
        rssMiB: {
          min: Math.min(...steady.map((s) => s.rssMiB)),
          max: Math.max(...steady.map((s) => s.rssMiB)),
        },
        rssFirstThirdMiB: firstThird,
        rssLastThirdMiB: lastThird,
        rssSlopeMiBPerMin: Math.round(rssSlope * 100) / 100,
        heapSlopeMiBPerMin: Math.round(heapSlope * 100) / 100,
        // Flat: the steady-state trend would add under 1 MiB per minute (60 MiB an hour).
        flat: Math.abs(rssSlope) < 1 && Math.abs(heapSlope) < 1,
      },
      eventLoopP99Ms: {
        max: Math.max(...steady.map((s) => s.eventLoopP99Ms)),
        median: median(steady.map((s) => s.eventLoopP99Ms)),
      },
      p99Ms: {
        readWorstWindow: Math.max(...all('read')),
        writeWorstWindow: Math.max(...all('write')),
        csvWorstWindow: all('csv').length ? Math.max(...all('csv')) : null,
        readMedianWindow: median(all('read')),
        writeMedianWindow: median(all('write')),
      },
      traffic: {
        requests: samples.reduce((s, x) => s + x.requests, 0),
        errors: samples.reduce((s, x) => s + x.errors, 0),
        maxInFlight,
        shed,
        failures,
        webhookDeliveries: receiver.receipts.length,
      },
      // One row per 10 s window in the table; the JSON keeps the same text.
      samples: Object.fromEntries(
        samples.map((x) => [
          `t${String(x.t).padStart(4, '0')}s`,
          `rss ${x.rssMiB} MiB, heap ${x.heapUsedMiB} MiB, loop p99 ${x.eventLoopP99Ms} ms, ` +
            `p99 read/write/csv ${x.p99Ms.read}/${x.p99Ms.write}/${x.p99Ms.csv} ms, ${x.requests} req, ` +
            `${x.errors} err, ${x.webhookDeliveries} hooks`,
        ]),
      ),
    };
  } finally {
    child.kill('SIGTERM');
    await Promise.race([once(child, 'exit'), new Promise((r) => setTimeout(r, 15_000))]);
    if (child.exitCode === null) child.kill('SIGKILL');
    await receiver.close();
  }
}

function median(xs: number[]): number | null {
  if (xs.length === 0) return null;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}
