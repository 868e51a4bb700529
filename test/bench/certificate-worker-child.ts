/**
 * The certificate worker in a process of its own, for certificates.bench.ts (spawned with
 * `node --import tsx`; configuration as JSON in BENCH_WORKER_CONFIG). Tells the parent
 * `{ ready: true }` over IPC once the consumer runs; on `stop` (or SIGTERM, or the parent
 * going away) stops gracefully and exits.
 */
import { BaseEnv, BusEnv, DbEnv, MetricsEnv, StorageEnv, parseEnv } from '@lectern/config';
import { closeRuntime, createRuntime, openStorage } from '@lectern/runtime';
import {
  CERTIFICATE_WORKER_ENV,
  certificateRenderSettings,
  loadFontLibrary,
  startCertificateWorker,
} from '@lectern/certificates';

const raw = process.env.BENCH_WORKER_CONFIG;
if (!raw || !process.send) {
  process.stderr.write(
    'certificate-worker-child: run by certificates.bench.ts (needs BENCH_WORKER_CONFIG and IPC)\n',
  );
  process.exit(2);
}
const env = Object.fromEntries(
  Object.entries(JSON.parse(raw) as Record<string, unknown>)
    .filter(([, v]) => v !== undefined && v !== null)
    .map(([k, v]) => [k, String(v)]),
);
// What apps/certificate-worker reads (its probe server is not started here).
const cfg = parseEnv([BaseEnv, DbEnv, BusEnv, StorageEnv, MetricsEnv, ...CERTIFICATE_WORKER_ENV], env);
const fonts = loadFontLibrary(cfg.CERTIFICATE_FONT_DIR);
const rt = await createRuntime(cfg, { name: 'bench-certificate-worker-child', provision: false });
// The parent's loopback S3 server (S3_ENDPOINT in the config), whose bucket exists already.
const storage = await openStorage(cfg, { provision: false });
const worker = await startCertificateWorker(
  { ...rt, storage },
  {
    ...certificateRenderSettings(cfg, fonts),
    concurrency: Number(process.env.BENCH_WORKER_CONCURRENCY ?? 4),
  },
);

let stopping: Promise<void> | undefined;
const stop = () =>
  (stopping ??= (async () => {
    try {
      await worker.stop();
      await closeRuntime({ ...rt, storage });
    } finally {
      process.exit(0);
    }
  })());
process.on('message', (m) => {
  if (m === 'stop') void stop();
});
process.on('SIGTERM', () => void stop());
process.on('disconnect', () => void stop());
process.send({ ready: true });
