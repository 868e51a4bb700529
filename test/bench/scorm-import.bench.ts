/**
 * SCORM import of 10 MB and 100 MB packages (mostly incompressible media, a manifest and a few HTML pages):
 * wall time of `POST /courses/import/scorm` and the peak RSS of the worker process. Each size gets a fresh worker
 * process (scorm-worker-child.ts), so its peak is that size's own. Goal (issue 12): the 100 MB peak at most 1.5×
 * the 10 MB one and at most 256 MB.
 */
import { spawnBenchChild } from './bench-child.js';
import { randomBytes } from 'node:crypto';
import { makeWorkspace, startTestApp, testConfig, type TestConfig } from '../support/context.js';
import { zipOf, type ZipEntryInput } from '../support/zip.js';

const MB = 1000 * 1000;
const ROUNDS = Number(process.env.BENCH_SCORM_ROUNDS ?? 3);

/** A package of about `bytes`: 1 MB stored (incompressible) media files, 10 items with an HTML page each. */
export function benchPackage(bytes: number): Buffer {
  const media = Math.max(1, Math.floor(bytes / MB) - 1);
  const items = Array.from({ length: 10 }, (_, i) => i + 1);
  const manifest = `<?xml version="1.0"?>
<manifest identifier="bench" xmlns="http://www.imsglobal.org/xsd/imscp_v1p1"><metadata><schema>ADL SCORM</schema><schemaversion>2004 4th Edition</schemaversion></metadata>
<organizations default="o"><organization identifier="o"><title>Bench ${bytes / MB} MB</title>
${items.map((i) => `<item identifier="i${i}" identifierref="r${i}"><title>Page ${i}</title></item>`).join('\n')}
</organization></organizations><resources>
${items.map((i) => `<resource identifier="r${i}" type="webcontent" href="page${i}.html"><file href="page${i}.html"/></resource>`).join('\n')}
<resource identifier="media" type="webcontent">${Array.from({ length: media }, (_, i) => `<file href="media/clip${i}.mp4"/>`).join('')}</resource>
</resources></manifest>`;
  const page = (i: number) =>
    `<html><body><h1>Page ${i}</h1>${'<p>Reading material for the page, one paragraph among many.</p>'.repeat(200)}<video src="media/clip0.mp4"></video></body></html>`;
  const entries: ZipEntryInput[] = [
    { name: 'imsmanifest.xml', data: manifest },
    ...items.map((i) => ({ name: `page${i}.html`, data: page(i) })),
    ...Array.from({ length: media }, (_, i) => ({
      name: `media/clip${i}.mp4`,
      data: randomBytes(MB),
      method: 'store' as const,
    })),
  ];
  return zipOf(entries);
}

/** A scorm worker process (scorm-worker-child.ts). */
const spawnWorker = (cfg: TestConfig) => spawnBenchChild('scorm-worker-child.ts', cfg);

export async function run(): Promise<Record<string, unknown>> {
  const app = await startTestApp({ RATE_LIMIT_PER_MINUTE: '0', SCORM_IMPORT_TIMEOUT_MS: '110000' });
  const cfg = testConfig();
  const out: Record<string, unknown> = { rounds: ROUNDS };
  try {
    const ws = await makeWorkspace(app.rt.orm.em.fork(), 'scale', 'Bench SCORM');
    for (const size of [10, 100]) {
      const pkg = benchPackage(size * MB);
      const worker = await spawnWorker(cfg);
      try {
        const idle = await worker.maxRssMiB();
        const walls: number[] = [];
        for (let r = 0; r < ROUNDS; r++) {
          const t = performance.now();
          const res = await fetch(`${app.base}/courses/import/scorm`, {
            method: 'POST',
            headers: { authorization: `Bearer ${ws.key}`, 'content-type': 'application/zip' },
            body: pkg,
          });
          const text = await res.text();
          if (res.status !== 201)
            throw new Error(`import of ${size} MB: ${res.status} ${text.slice(0, 300)}`);
          walls.push(performance.now() - t);
        }
        walls.sort((a, b) => a - b);
        out[`mb${size}`] = {
          packageBytes: pkg.length,
          wallMsMedian: Math.round(walls[Math.floor(walls.length / 2)]),
          wallMsMin: Math.round(walls[0]),
          wallMsMax: Math.round(walls[walls.length - 1]),
          workerIdleRssMiB: idle,
          workerPeakRssMiB: await worker.maxRssMiB(),
        };
      } finally {
        await worker.stop();
      }
    }
    const peak = (k: string) => (out[k] as { workerPeakRssMiB: number }).workerPeakRssMiB;
    out.peakRatio100vs10 = Math.round((peak('mb100') / peak('mb10')) * 100) / 100;
    out.apiPeakRssMiB = Math.round((process.resourceUsage().maxRSS / 1024) * 10) / 10;
  } finally {
    await app.close();
  }
  return out;
}
