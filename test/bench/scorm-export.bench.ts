/**
 * SCORM export (issue 12): `GET /courses/:id/scorm` of a 30-screen course through the API, the bus and one
 * scorm-worker process (its own process, so its peak RSS is its own), p50/p95 over BENCH_SCORM_EXPORTS
 * (default 20) sequential exports, the body read to the end. Baseline, in the same run: archiver writing the
 * same files (taken from an exported package) to /dev/null in this process — the zip work alone, without the
 * course load, the object store round trip and HTTP.
 *
 * `node --import tsx test/bench/run.ts scorm-export`.
 */
import { spawnBenchChild } from './bench-child.js';
import { createWriteStream } from 'node:fs';
import archiver from 'archiver';
import unzipper from 'unzipper';
import { runSyncJob } from '@lectern/jobs';
import { makeWorkspace, startTestApp, testConfig, type TestConfig } from '../support/context.js';
import { buildPlayerOnce } from '../support/player-browser.js';
import { api } from '../support/authoring.js';

const N = Number(process.env.BENCH_SCORM_EXPORTS ?? 20);
const SCREENS = 30;
const round = (n: number) => Math.round(n * 10) / 10;
const pct = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];

/** A course of 30 screens: a heading, two paragraphs, a single-choice and a true/false quiz on each. */
function screens() {
  return Array.from({ length: SCREENS }, (_, i) => ({
    id: `s${i + 1}`,
    title: `Screen ${i + 1}: handling hazards`,
    blocks: [
      { id: `s${i + 1}h`, type: 'heading', text: `Part ${i + 1}` },
      { id: `s${i + 1}t`, type: 'text', text: 'Fire needs heat, fuel and oxygen. '.repeat(20) },
      {
        id: `s${i + 1}u`,
        type: 'text',
        text: 'Keep exits clear; know where the extinguishers are. '.repeat(10),
      },
      {
        id: `s${i + 1}q`,
        type: 'quiz_single_choice',
        question: `Which extinguisher for class ${i + 1}?`,
        options: [
          { id: 'a', text: 'Water', correct: true },
          { id: 'b', text: 'Foam' },
          { id: 'c', text: 'CO2' },
        ],
        explanation: 'Match the extinguisher to the fire class.',
      },
      { id: `s${i + 1}tf`, type: 'quiz_true_false', statement: 'Lifts are safe in a fire.', correct: false },
    ],
  }));
}

/** A scorm worker process (scorm-worker-child.ts) serving the player bundle built into `assetsDir`. */
const spawnWorker = (cfg: TestConfig, assetsDir: string) =>
  spawnBenchChild('scorm-worker-child.ts', { ...cfg, WORKER_HTTP_PORT: 0, PLAYER_ASSETS_DIR: assetsDir });

/** The same entries zipped by archiver (same level as the worker) into /dev/null: the zip work alone. */
async function zipToNull(entries: { name: string; body: Buffer }[]): Promise<void> {
  const out = createWriteStream('/dev/null');
  const archive = archiver('zip', { zlib: { level: 6 } });
  const closed = new Promise<void>((resolve, reject) => {
    out.on('close', resolve);
    archive.on('error', reject);
  });
  archive.pipe(out);
  for (const e of entries) archive.append(e.body, { name: e.name });
  await archive.finalize();
  await closed;
}

export async function run(): Promise<Record<string, unknown>> {
  const assets = await buildPlayerOnce();
  const app = await startTestApp({ RATE_LIMIT_PER_MINUTE: '0', PLAYER_ASSETS_DIR: assets.dir });
  const worker = await spawnWorker(testConfig(), assets.dir);
  let rss: { peakRssMiB: number; rssMiB: number } | undefined;
  try {
    const ws = await makeWorkspace(app.rt.orm.em.fork(), 'scale', 'Bench SCORM');
    const created = await api(app.base, ws.key)<{ id: string }>('POST', '/courses', {
      title: 'Fire safety at work',
      screens: screens(),
    });
    if (created.status !== 201) throw new Error(`course not created: ${created.text}`);
    const url = `${app.base}/courses/${created.body.data.id}/scorm?version=scorm2004`;
    const exportOnce = async (): Promise<Buffer> => {
      const res = await fetch(url, { headers: { authorization: `Bearer ${ws.key}` } });
      const body = Buffer.from(await res.arrayBuffer());
      if (res.status !== 200) throw new Error(`export answered ${res.status}: ${body.toString()}`);
      return body;
    };
    for (let i = 0; i < 3; i++) await exportOnce(); // JIT, connections, the bundle read
    const latencies: number[] = [];
    let zip: Buffer = Buffer.alloc(0);
    for (let i = 0; i < N; i++) {
      const t = performance.now();
      zip = await exportOnce();
      latencies.push(performance.now() - t);
    }
    const s = [...latencies].sort((a, b) => a - b);

    // The job alone (row, bus, worker builds and uploads, done notice, row read): the API minus streaming out.
    const jobs: number[] = [];
    for (let i = 0; i < N; i++) {
      const t = performance.now();
      await runSyncJob(app.rt, {
        workspaceId: ws.id,
        kind: 'scorm.export',
        input: { courseId: created.body.data.id, version: 'scorm2004', lang: null, track: null },
        timeoutMs: 30_000,
      });
      jobs.push(performance.now() - t);
    }
    const j = [...jobs].sort((a, b) => a - b);

    const dir = await unzipper.Open.buffer(zip);
    const entries = await Promise.all(dir.files.map(async (f) => ({ name: f.path, body: await f.buffer() })));
    for (let i = 0; i < 3; i++) await zipToNull(entries);
    const base: number[] = [];
    for (let i = 0; i < N; i++) {
      const t = performance.now();
      await zipToNull(entries);
      base.push(performance.now() - t);
    }
    const b = [...base].sort((x, y) => x - y);
    rss = await worker.stop();
    if (!rss) throw new Error('the scorm worker child exited before the end');
    return {
      exports: N,
      screens: SCREENS,
      packageBytes: zip.length,
      uncompressedBytes: entries.reduce((n, e) => n + e.body.length, 0),
      api: { p50Ms: round(pct(s, 50)), p95Ms: round(pct(s, 95)) },
      jobOnly: { p50Ms: round(pct(j, 50)), p95Ms: round(pct(j, 95)) },
      baselineArchiverToDevNull: { p50Ms: round(pct(b, 50)), p95Ms: round(pct(b, 95)) },
      ratioP50: round(pct(s, 50) / pct(b, 50)),
      worker: { rssAtReadyMiB: worker.ready.rssMiB, peakRssMiB: rss.peakRssMiB, rssAtEndMiB: rss.rssMiB },
    };
  } finally {
    if (!rss) await worker.stop().catch(() => undefined);
    await app.close();
  }
}
