/**
 * The webhook worker in a process of its own, for the `productionShape` runs of webhooks.bench.ts (spawned with
 * `node --import tsx`; the bench passes its configuration as JSON in BENCH_WORKER_CONFIG). Tells the parent
 * `{ ready: true }` over IPC once the worker runs; on the message `stop` (or SIGTERM, or the parent going away)
 * stops the worker gracefully, closes its connections and exits.
 */
import { BaseEnv, BusEnv, DbEnv, MetricsEnv, parseEnv } from '@lectern/config';
import { closeRuntime, createRuntime } from '@lectern/runtime';
import { WebhookEnv, startWebhookWorker } from '@lectern/webhooks';

const raw = process.env.BENCH_WORKER_CONFIG;
if (!raw || !process.send) {
  process.stderr.write(
    'webhook-worker-child: run by webhooks.bench.ts (needs BENCH_WORKER_CONFIG and IPC)\n',
  );
  process.exit(2);
}
const env = Object.fromEntries(
  Object.entries(JSON.parse(raw) as Record<string, unknown>)
    .filter(([, v]) => v !== undefined && v !== null)
    .map(([k, v]) => [k, String(v)]),
);
// What apps/webhook-worker reads (its probe server is not started here).
const cfg = parseEnv([BaseEnv, DbEnv, BusEnv, MetricsEnv, WebhookEnv], env);
const rt = await createRuntime(cfg, { name: 'bench-webhook-worker-child', provision: false });
const worker = await startWebhookWorker({ ...rt, cfg }, {});

let stopping: Promise<void> | undefined;
const stop = () =>
  (stopping ??= (async () => {
    try {
      await worker.stop();
      await closeRuntime(rt);
    } finally {
      process.exit(0);
    }
  })());
process.on('message', (m) => {
  if (m === 'stop') void stop();
  // CPU time this process has used so far (µs), for the bench's accounting.
  if (m === 'cpu') {
    const u = process.cpuUsage();
    process.send!({ cpuMicros: u.user + u.system });
  }
});
process.on('SIGTERM', () => void stop());
process.on('disconnect', () => void stop());
process.send({ ready: true });
