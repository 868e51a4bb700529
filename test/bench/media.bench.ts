/**
 * Media (issue 21, docs/media.md): upload throughput of 25 MB files through the API (a process of its own,
 * api-child.ts) against a direct `putFile` of the same bytes to the same store; the API process's peak resident
 * set during 4 concurrent 25 MB uploads against its idle set; images processed per second by one media worker.
 *
 * `node --import tsx test/bench/run.ts media` (after `npm run build`). BENCH_MEDIA_ROUNDS (default 3) rounds of
 * BENCH_MEDIA_UPLOADS (default 4) sequential uploads each, the two paths interleaved; BENCH_MEDIA_IMAGES (default
 * 12) real JPEGs and PNGs of ~3 MP for the worker.
 */
import { randomBytes } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import { spawnBenchChild } from './bench-child.js';
import { boundQuery } from '@lectern/db';
import { closeRuntime } from '@lectern/runtime';
import { createStorage } from '@lectern/storage';
import { runJobWorker } from '@lectern/jobs';
import { MEDIA_MAX_BYTES, mediaProcessJob } from '@lectern/media';
import { makeWorkspace, testConfig, testRuntime } from '../support/context.js';

const ROUNDS = Number(process.env.BENCH_MEDIA_ROUNDS ?? 3);
const UPLOADS = Number(process.env.BENCH_MEDIA_UPLOADS ?? 4);
const IMAGES = Number(process.env.BENCH_MEDIA_IMAGES ?? 12);
/** Just under the limit, so a declared Content-Length with the multipart framing is accepted. */
const SIZE = MEDIA_MAX_BYTES - 64 * 1024;
const round = (n: number, d = 2) => Math.round(n * 10 ** d) / 10 ** d;

/** POST /media streaming `file` from disk with a declared Content-Length (what a browser's FormData sends). */
function uploadFile(base: string, key: string, file: string, size: number): Promise<string> {
  const boundary = '----lecternBenchBoundary';
  const head = Buffer.from(
    `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="big.png"\r\n` +
      'Content-Type: application/octet-stream\r\n\r\n',
  );
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
  return new Promise((resolve, reject) => {
    const req = http.request(`${base}/media`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${key}`,
        'content-type': `multipart/form-data; boundary=${boundary}`,
        'content-length': String(head.length + size + tail.length),
      },
    });
    req.on('response', (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString();
        if (res.statusCode !== 201) reject(new Error(`upload: HTTP ${res.statusCode} ${text.slice(0, 300)}`));
        else resolve((JSON.parse(text) as { data: { id: string } }).data.id);
      });
    });
    req.on('error', reject);
    req.write(head);
    const body = createReadStream(file);
    body.on('error', reject);
    body.on('end', () => req.end(tail));
    body.pipe(req, { end: false });
  });
}

/** A photo-like image of `w`×`h` (noise, so it neither compresses to nothing nor decodes in no time). */
async function photo(w: number, h: number, format: 'jpeg' | 'png'): Promise<Buffer> {
  const raw = randomBytes(Math.ceil((w * h * 3) / 64));
  const small = sharp(raw, { raw: { width: Math.ceil(w / 8), height: Math.ceil(h / 8), channels: 3 } })
    .resize(w, h, { kernel: 'cubic' })
    .blur(2);
  return format === 'jpeg' ? small.jpeg({ quality: 85 }).toBuffer() : small.png().toBuffer();
}

export async function run(): Promise<Record<string, unknown>> {
  const rt = await testRuntime('bench-media');
  const dir = await mkdtemp(path.join(os.tmpdir(), 'lectern-media-bench-'));
  // The store in a process of its own, as MinIO runs in production: the API and the direct PUT both reach it over
  // loopback, and neither shares its event loop.
  const store = await spawnBenchChild<{ url: string }>(
    'api-child.ts',
    { ...testConfig(), DATA_DIR: path.join(dir, 'store') },
    {
      env: { BENCH_CHILD_ROLE: 'store' },
      // BENCH_MEDIA_STORE_CPUPROF=<dir>: the store process's --cpu-prof profile, written when it stops.
      ...(process.env.BENCH_MEDIA_STORE_CPUPROF
        ? { nodeArgs: ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_MEDIA_STORE_CPUPROF}`] }
        : {}),
    },
  );
  const storage = await createStorage({ ...testConfig({ S3_ENDPOINT: store.ready.url }) });
  // BENCH_MEDIA_API_CPUPROF=<dir>: the API process's --cpu-prof profile, written when it stops.
  const prof = process.env.BENCH_MEDIA_API_CPUPROF;
  const api = await spawnBenchChild<{ url: string }>(
    'api-child.ts',
    testConfig({ S3_ENDPOINT: store.ready.url }),
    {
      ...(prof ? { nodeArgs: ['--cpu-prof', `--cpu-prof-dir=${prof}`] } : {}),
    },
  );
  try {
    const base = `${api.ready.url}/api/v1`;
    const ws = await makeWorkspace(rt.orm.em.fork(), 'scale', 'Media bench');
    const file = path.join(dir, 'upload.png');
    const png = await sharp({ create: { width: 8, height: 8, channels: 3, background: '#888' } })
      .png()
      .toBuffer();
    await writeFile(file, Buffer.concat([png, randomBytes(SIZE - png.length)]));

    // Warm both paths (JIT, connections, the store's first writes).
    await uploadFile(base, ws.key, file, SIZE);
    await storage.putFile(`bench/${ws.id}/warm`, file, 'image/png');

    const apiMs: number[] = [];
    const directMs: number[] = [];
    // CPU of each process while a path runs (bench: the uploading client; api; store), summed per path.
    const cpu = { api: { bench: 0, api: 0, store: 0 }, direct: { bench: 0, api: 0, store: 0 } };
    const cpuNow = async () => {
      const own = process.cpuUsage();
      return { bench: own.user + own.system, api: await api.cpuMicros(), store: await store.cpuMicros() };
    };
    const timeIt = async (fn: () => Promise<unknown>, into: keyof typeof cpu) => {
      const c0 = await cpuNow();
      const t0 = performance.now();
      for (let i = 0; i < UPLOADS; i++) await fn();
      const ms = performance.now() - t0;
      const c1 = await cpuNow();
      for (const k of ['bench', 'api', 'store'] as const) cpu[into][k] += c1[k] - c0[k];
      return ms;
    };
    for (let r = 0; r < ROUNDS; r++) {
      const viaApi = () => timeIt(() => uploadFile(base, ws.key, file, SIZE), 'api');
      let n = 0;
      const direct = () =>
        timeIt(() => storage.putFile(`bench/${ws.id}/${r}-${n++}`, file, 'image/png'), 'direct');
      // Alternate which goes first, so neither always meets a warmer disk cache.
      if (r % 2 === 0) {
        apiMs.push(await viaApi());
        directMs.push(await direct());
      } else {
        directMs.push(await direct());
        apiMs.push(await viaApi());
      }
    }
    const mbPerS = (ms: number[]) =>
      (UPLOADS * ms.length * SIZE) / 1024 / 1024 / (ms.reduce((a, b) => a + b, 0) / 1000);
    const throughput = {
      apiMBps: round(mbPerS(apiMs), 1),
      directPutMBps: round(mbPerS(directMs), 1),
      apiVsDirect: round(mbPerS(apiMs) / mbPerS(directMs)),
      goal: '>= 0.7',
      // CPU milliseconds per MB moved, by process: where a path's time goes on a machine with few cores.
      cpuMsPerMB: Object.fromEntries(
        (['api', 'direct'] as const).map((path) => {
          const mb = (UPLOADS * ROUNDS * SIZE) / 1024 / 1024;
          const c = cpu[path];
          return [
            path,
            {
              bench: round(c.bench / 1000 / mb),
              api: round(c.api / 1000 / mb),
              store: round(c.store / 1000 / mb),
            },
          ];
        }),
      ),
    };

    // Peak RSS of the API process: its peak so far is the idle one plus what the sequential uploads took, so the
    // concurrent peak is read as the rise of maxRSS over it (maxRSS only grows).
    const idleMiB = api.ready.rssMiB;
    const beforeConcurrentMiB = await api.maxRssMiB();
    await Promise.all(Array.from({ length: 4 }, () => uploadFile(base, ws.key, file, SIZE)));
    const peakMiB = await api.maxRssMiB();
    const rss = {
      idleMiB,
      peakBeforeConcurrentMiB: beforeConcurrentMiB,
      peakDuring4ConcurrentMiB: peakMiB,
      goalMiB: round(1.5 * idleMiB + 50, 1),
      peakVsGoal: round(peakMiB / (1.5 * idleMiB + 50)),
    };

    // The uploads' jobs are not the worker's measure: end them before it starts (a claim of an ended job does
    // nothing).
    await boundQuery(
      rt.orm.em.fork(),
      `update jobs set status = 'failed', completed_at = now() where kind = 'media.process' and status <> 'completed'`,
    );
    const imgWs = await makeWorkspace(rt.orm.em.fork(), 'scale', 'Media bench images');
    const images = await Promise.all(
      Array.from({ length: IMAGES }, (_, i) => photo(2048, 1536, i % 2 === 0 ? 'jpeg' : 'png')),
    );
    const ids: string[] = [];
    for (const [i, bytes] of images.entries()) {
      const f = path.join(dir, `img-${i}`);
      await writeFile(f, bytes);
      ids.push(await uploadFile(base, imgWs.key, f, bytes.length));
    }
    const t0 = performance.now();
    const worker = await runJobWorker(rt, mediaProcessJob({ storage }));
    let statuses: { status: string; n: number }[] = [];
    try {
      for (;;) {
        statuses = await boundQuery<{ status: string; n: number }>(
          rt.orm.em.fork(),
          `select status, count(*)::int as n from media where id = any (?::text[]) group by status`,
          [ids],
        );
        if (!statuses.some((s) => s.status === 'processing')) break;
        await new Promise((r) => setTimeout(r, 100));
      }
    } finally {
      await worker.stop();
    }
    const seconds = (performance.now() - t0) / 1000;
    return {
      fileBytes: SIZE,
      throughput,
      rss,
      processing: {
        images: IMAGES,
        size: '2048×1536, JPEG and PNG alternating',
        outcome: Object.fromEntries(statuses.map((s) => [s.status, s.n])),
        seconds: round(seconds, 1),
        imagesPerSecondPerWorker: round(IMAGES / seconds),
      },
      loadAverageAtEnd: os.loadavg().map((l) => round(l)),
    };
  } finally {
    await api.stop();
    await storage.close();
    await store.stop();
    await rm(dir, { recursive: true, force: true });
    await closeRuntime(rt, { keepStorage: true });
  }
}
