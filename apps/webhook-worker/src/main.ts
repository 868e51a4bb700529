import { loadConfig } from '@lectern/config';
import { closeRuntime, createRuntime, onShutdown, startWorkerHttp } from '@lectern/runtime';
import { ensureWebhookSecretKey, startWebhookWorker } from '@lectern/webhooks';

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
