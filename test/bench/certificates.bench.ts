/**
 * Certificate rendering (issue 11): renders per second of one certificate-worker process
 * and p50/p95 per render through the bus (job row → JetStream → worker → PDF in the
 * object store → done notice → row read), against pdfkit drawing the same page
 * in-process without the bus; then 2 worker processes against 1.
 *
 * `node --import tsx test/bench/run.ts certificates`; BENCH_CERT_RENDERS (default 200)
 * per measurement; BENCH_WORKER_NODE_ARGS adds node flags to the worker processes (profiling). The page is the default design with a Latin name (the common case);
 * a CJK name is measured in-process too, since its face is the expensive one.
 */
import { spawnBenchChild } from './bench-child.js';
import { newId } from '@lectern/db';
import { closeRuntime } from '@lectern/runtime';
import { runSyncJob } from '@lectern/jobs';
import type { CertificateRenderInput } from '@lectern/contracts';
import {
  CERTIFICATE_RENDER_KIND,
  generateSerial,
  loadFontLibrary,
  pdfKeyOf,
  renderCertificate,
  verifyUrl,
} from '@lectern/certificates';
import { makeWorkspace, testConfig, testRuntime, type TestConfig } from '../support/context.js';

const N = Number(process.env.BENCH_CERT_RENDERS ?? 200);
const round = (n: number) => Math.round(n * 10) / 10;

function pct(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

function summary(latencies: number[], wallMs: number) {
  const s = [...latencies].sort((a, b) => a - b);
  return {
    rendersPerSecond: round((latencies.length / wallMs) * 1000),
    p50Ms: round(pct(s, 50)),
    p95Ms: round(pct(s, 95)),
  };
}

function input(
  workspaceId: string,
  publicUrl: string,
  over: Partial<CertificateRenderInput> = {},
): CertificateRenderInput {
  const serial = generateSerial();
  return {
    serial,
    learnerName: 'Ada Lovelace',
    courseTitle: 'Fire safety at work',
    issuerName: 'Acme Academy',
    score: 87.5,
    locale: 'en',
    direction: 'ltr',
    issuedAt: new Date().toISOString(),
    verifyUrl: verifyUrl(publicUrl, serial),
    tokens: { signatureName: 'Dana Reyes', showScore: true },
    pdfKey: pdfKeyOf(workspaceId, serial),
    ...over,
  };
}

/** `count` calls of `fn`, `concurrency` at a time; per-call latencies and the wall time. */
async function drive(count: number, concurrency: number, fn: () => Promise<unknown>) {
  const latencies: number[] = [];
  let next = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < count) {
        next++;
        const t = performance.now();
        await fn();
        latencies.push(performance.now() - t);
      }
    }),
  );
  return summary(latencies, performance.now() - t0);
}

/** A certificate worker process (certificate-worker-child.ts). */
function spawnWorker(cfg: TestConfig) {
  // BENCH_WORKER_NODE_ARGS: extra node flags for the worker processes, e.g.
  // `--cpu-prof --cpu-prof-dir=/tmp/prof` to profile the render path (not allowed in NODE_OPTIONS).
  const nodeArgs = (process.env.BENCH_WORKER_NODE_ARGS ?? '').split(/\s+/).filter(Boolean);
  return spawnBenchChild('certificate-worker-child.ts', { ...cfg, WORKER_HTTP_PORT: 0 }, { nodeArgs });
}

export async function run(): Promise<Record<string, unknown>> {
  const cfg = testConfig();
  const rt = await testRuntime('bench-certificates');
  try {
    const ws = await makeWorkspace(rt.orm.em.fork(), 'scale', 'Bench');
    // The child processes read the default CERTIFICATE_FONT_DIR as well (the test config sets none).
    const fonts = loadFontLibrary();
    const local = (over: Partial<CertificateRenderInput> = {}) =>
      renderCertificate(input(ws.id, cfg.PUBLIC_URL, over), { fonts, logo: null });
    for (let i = 0; i < 20; i++) await local(); // warm the JIT and the font caches
    await local({ learnerName: '山田 太郎', locale: 'ja' });
    const inProcess = await drive(N, 1, () => local());
    const inProcessCjk = await drive(Math.max(20, N / 5), 1, () =>
      local({ learnerName: '山田 太郎', locale: 'ja' }),
    );

    const viaBus = () =>
      runSyncJob(rt, {
        workspaceId: ws.id,
        kind: CERTIFICATE_RENDER_KIND,
        input: input(ws.id, cfg.PUBLIC_URL),
        timeoutMs: 30_000,
      });
    const measureBus = async (workers: number) => {
      const procs = await Promise.all(Array.from({ length: workers }, () => spawnWorker(cfg)));
      try {
        for (let i = 0; i < 20; i++) await viaBus();
        const sequential = await drive(N, 1, viaBus);
        const loaded = await drive(N, 8 * workers, viaBus);
        return { sequential, loaded };
      } finally {
        await Promise.all(procs.map((p) => p.stop()));
      }
    };
    const one = await measureBus(1);
    const two = await measureBus(2);
    return {
      renders: N,
      inProcess,
      inProcessCjk,
      oneWorker: one,
      twoWorkers: two,
      ratios: {
        busVsInProcessP50: round(one.sequential.p50Ms / inProcess.p50Ms),
        oneWorkerThroughputVsInProcess: round(one.loaded.rendersPerSecond / inProcess.rendersPerSecond),
        twoWorkersVsOne: round(two.loaded.rendersPerSecond / one.loaded.rendersPerSecond),
      },
      note: `${newId('run')}: 2 cores shared with other work; see test/bench/README.md`,
    };
  } finally {
    await closeRuntime(rt, { keepStorage: true });
  }
}
