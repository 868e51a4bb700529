/**
 * The API server (with its outbox relay unless API_OUTBOX_RELAY=false) in a process of its own, as production runs
 * it, for player.bench.ts (the bench-child protocol of bench-child.ts; its ready message carries `url`). With
 * BENCH_CHILD_ROLE=relay, an outbox relay alone instead (what a webhook worker with WEBHOOK_WORKER_OUTBOX_RELAY
 * adds), and `url` is empty. With BENCH_CHILD_ROLE=store, the loopback S3 server alone (data under the config's
 * DATA_DIR), as MinIO runs beside the API in production, and `url` is its address.
 */
import { closeRuntime, createRuntime, openStorage } from '@lectern/runtime';
import { createStorage } from '@lectern/storage';
import { startApiServer } from '@lectern/api';
import { startRelay } from '@lectern/events';
import { relayFanOut } from '@lectern/webhooks';
import { loadTestConfig } from '../support/context.js';
import { benchChildEnv, serveBench } from './bench-child.js';

const cfg = loadTestConfig(benchChildEnv('api-child'));
if (process.env.BENCH_CHILD_ROLE === 'store') {
  const store = await createStorage({ ...cfg, S3_ENDPOINT: undefined, S3_PUBLIC_ENDPOINT: undefined });
  await store.ensureBucket();
  serveBench(() => store.close(), { url: store.endpoint });
  await new Promise(() => undefined);
}
const rt = await createRuntime(cfg, { name: 'bench-api-child', provision: false });
// The parent's loopback S3 server (S3_ENDPOINT in the config), whose bucket exists already.
const storage = await openStorage(cfg, { provision: false });
const api =
  process.env.BENCH_CHILD_ROLE === 'relay'
    ? {
        url: '',
        close: startRelay({ orm: rt.orm, bus: rt.bus, log: rt.log, fanOut: relayFanOut(rt.bus) }).stop,
      }
    : await startApiServer({ ...rt, storage, cfg }, { port: 0, host: '127.0.0.1' });
serveBench(
  async () => {
    await api.close();
    await closeRuntime({ ...rt, storage });
  },
  { url: api.url },
);
