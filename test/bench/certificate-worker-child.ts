/**
 * The certificate worker in a process of its own, for certificates.bench.ts (the bench-child protocol of
 * bench-child.ts; BENCH_WORKER_CONCURRENCY sets its concurrency, default 4).
 */
import { BaseEnv, BusEnv, DbEnv, MetricsEnv, StorageEnv, parseEnv } from '@lectern/config';
import { closeRuntime, createRuntime, openStorage } from '@lectern/runtime';
import {
  CERTIFICATE_WORKER_ENV,
  certificateRenderSettings,
  loadFontLibrary,
  startCertificateWorker,
} from '@lectern/certificates';
import { benchChildEnv, serveBench } from './bench-child.js';

const env = benchChildEnv('certificate-worker-child');
// What `lectern worker certificate` reads (its probe server is not started here).
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
serveBench(async () => {
  await worker.stop();
  await closeRuntime({ ...rt, storage });
});
