/**
 * The API server (with its outbox relay unless API_OUTBOX_RELAY=false) in a process of its own, as production runs
 * it, for player.bench.ts (spawned with `node --import tsx`; configuration as JSON in BENCH_API_CONFIG). With
 * BENCH_CHILD_ROLE=relay, an outbox relay alone instead (what a webhook worker with WEBHOOK_WORKER_OUTBOX_RELAY
 * adds), and the url it reports is empty. Tells the parent `{ url }` over IPC once it runs; answers `'cpu'` with
 * `{ cpu }` (this process's CPU so far, µs, user + system); on `stop` (or SIGTERM, or the parent going away) closes
 * gracefully and exits.
 */
import { closeRuntime, createRuntime, openStorage } from '@lectern/runtime';
import { startApiServer } from '@lectern/api';
import { startRelay } from '@lectern/events';
import { loadTestConfig } from '../support/context.js';

const raw = process.env.BENCH_API_CONFIG;
if (!raw || !process.send) {
  process.stderr.write('api-child: run by a bench (needs BENCH_API_CONFIG and IPC)\n');
  process.exit(2);
}
const env = Object.fromEntries(
  Object.entries(JSON.parse(raw) as Record<string, unknown>)
    .filter(([, v]) => v !== undefined && v !== null)
    .map(([k, v]) => [k, String(v)]),
);
const cfg = loadTestConfig(env);
const rt = await createRuntime(cfg, { name: 'bench-api-child', provision: false });
// The parent's loopback S3 server (S3_ENDPOINT in the config), whose bucket exists already.
const storage = await openStorage(cfg, { provision: false });
const api =
  process.env.BENCH_CHILD_ROLE === 'relay'
    ? { url: '', close: startRelay({ orm: rt.orm, bus: rt.bus, log: rt.log }).stop }
    : await startApiServer({ ...rt, storage, cfg }, { port: 0, host: '127.0.0.1' });

let stopping: Promise<void> | undefined;
const stop = () =>
  (stopping ??= (async () => {
    try {
      await api.close();
      await closeRuntime({ ...rt, storage });
    } finally {
      process.exit(0);
    }
  })());
process.on('message', (m) => {
  if (m === 'stop') void stop();
  if (m === 'cpu') {
    const { user, system } = process.cpuUsage();
    process.send!({ cpu: user + system });
  }
});
process.on('SIGTERM', () => void stop());
process.on('disconnect', () => void stop());
process.send({ url: api.url });
