import { loadConfig } from '../../../libs/config/src/index.js';
import { closeRuntime, createRuntime, onShutdown, startWorkerHttp } from '../../../libs/runtime/src/index.js';
import { ensureWebhookSecretKey, startWebhookWorker } from '../../../libs/webhooks/src/index.js';

const cfg = await ensureWebhookSecretKey(loadConfig());
const rt = await createRuntime(cfg, { name: 'webhook-worker' });
const worker = await startWebhookWorker(rt);
// Probes and scrapes (WORKER_HTTP_PORT=0: none): /healthz, /readyz (PostgreSQL, NATS), /metrics.
const http = cfg.WORKER_HTTP_PORT > 0 ? await startWorkerHttp(rt, { port: cfg.WORKER_HTTP_PORT }) : null;
onShutdown(rt.log, async () => {
  await worker.stop();
  await http?.close();
  await closeRuntime(rt);
});
