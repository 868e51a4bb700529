/**
 * The scorm worker in a process of its own, for scorm-export.bench.ts and scorm-import.bench.ts (spawned with
 * `node --import tsx`; configuration as JSON in BENCH_WORKER_CONFIG). Runs what apps/scorm-worker runs (every
 * `scorm.*` kind of the job registry) and tells the parent `{ ready, rssMiB }` over IPC; answers `rss` with
 * `{ maxRssMiB }` (its peak resident set so far); on `stop` it answers `{ peakRssMiB, rssMiB }` and exits.
 */
import { BaseEnv, BusEnv, DbEnv, MetricsEnv, StorageEnv, parseEnv } from '@lectern/config';
import { closeRuntime, createRuntime, openStorage } from '@lectern/runtime';
import { SCORM_WORKER_ENV } from '@lectern/scorm';
import { scormJobWorkers } from '@lectern/job-registry';

const raw = process.env.BENCH_WORKER_CONFIG;
if (!raw || !process.send) {
  process.stderr.write('scorm-worker-child: run by the scorm benches (needs BENCH_WORKER_CONFIG and IPC)\n');
  process.exit(2);
}
const env = Object.fromEntries(
  Object.entries(JSON.parse(raw) as Record<string, unknown>)
    .filter(([, v]) => v !== undefined && v !== null)
    .map(([k, v]) => [k, String(v)]),
);
const mib = (bytes: number) => Math.round((bytes / 1024 / 1024) * 10) / 10;
const cfg = parseEnv([BaseEnv, DbEnv, BusEnv, StorageEnv, MetricsEnv, ...SCORM_WORKER_ENV], env);
const rt = await createRuntime(cfg, { name: 'bench-scorm-worker-child', provision: false });
const storage = await openStorage(cfg, { provision: false });
const workers = await Promise.all(scormJobWorkers(env, { storage }).map((w) => w.start({ ...rt, storage })));

// maxRSS is in kilobytes.
const peakRssMiB = () => Math.round((process.resourceUsage().maxRSS / 1024) * 10) / 10;

let stopping: Promise<void> | undefined;
const stop = () =>
  (stopping ??= (async () => {
    try {
      process.send?.({
        peakRssMiB: peakRssMiB(),
        rssMiB: mib(process.memoryUsage().rss),
      });
      await Promise.all(workers.map((w) => w.stop()));
      await closeRuntime({ ...rt, storage });
    } finally {
      process.exit(0);
    }
  })());
process.on('message', (m) => {
  if (m === 'stop') void stop();
  if (m === 'rss') process.send?.({ maxRssMiB: peakRssMiB() });
});
process.on('SIGTERM', () => void stop());
process.on('disconnect', () => void stop());
process.send({ ready: true, rssMiB: mib(process.memoryUsage().rss) });
