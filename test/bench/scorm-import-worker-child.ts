/**
 * The scorm import worker in a process of its own, for scorm-import.bench.ts (spawned with `node --import tsx`;
 * configuration as JSON in BENCH_WORKER_CONFIG). Tells the parent `{ ready: true }` over IPC once the consumer
 * runs; answers `rss` with `{ maxRssMiB }` (this process's peak resident set so far); on `stop` (or SIGTERM, or
 * the parent going away) stops gracefully and exits.
 */
import { BaseEnv, BusEnv, DbEnv, MetricsEnv, StorageEnv, parseEnv } from '@lectern/config';
import { closeRuntime, createRuntime, openStorage } from '@lectern/runtime';
import { startScormImportWorker } from '@lectern/scorm';

const raw = process.env.BENCH_WORKER_CONFIG;
const send = process.send?.bind(process);
if (!raw || !send) {
  process.stderr.write(
    'scorm-import-worker-child: run by scorm-import.bench.ts (needs BENCH_WORKER_CONFIG and IPC)\n',
  );
  process.exit(2);
}
const env = Object.fromEntries(
  Object.entries(JSON.parse(raw) as Record<string, unknown>)
    .filter(([, v]) => v !== undefined && v !== null)
    .map(([k, v]) => [k, String(v)]),
);
const cfg = parseEnv([BaseEnv, DbEnv, BusEnv, StorageEnv, MetricsEnv], env);
const rt = await createRuntime(cfg, { name: 'bench-scorm-worker-child', provision: false });
// The parent's loopback S3 server (S3_ENDPOINT in the config), whose bucket exists already.
const storage = await openStorage(cfg, { provision: false });
const worker = await startScormImportWorker({ ...rt, storage }, { concurrency: 1 });

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
  if (m === 'rss') send({ maxRssMiB: Math.round((process.resourceUsage().maxRSS / 1024) * 10) / 10 });
});
process.on('SIGTERM', () => void stop());
process.on('disconnect', () => void stop());
send({ ready: true });
