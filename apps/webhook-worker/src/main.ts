import { BaseEnv, BusEnv, DbEnv, MetricsEnv, WorkerEnv, parseEnv } from '@lectern/config';
import { closeRuntime, createRuntime, onShutdown, startWorkerHttp } from '@lectern/runtime';
import { ensureInstallationSecretKey } from '@lectern/secrets';
import { WebhookEnv, startWebhookWorker } from '@lectern/webhooks';

// Connections, the webhook settings and the probe server; no object store (deliveries carry no blobs).
const env = parseEnv([BaseEnv, DbEnv, BusEnv, MetricsEnv, WorkerEnv, WebhookEnv], process.env);
const cfg = await ensureInstallationSecretKey(env);
const rt = await createRuntime(cfg, { name: 'webhook-worker' });
const worker = await startWebhookWorker({ ...rt, cfg });
// Probes and scrapes (WORKER_HTTP_PORT=0: none): /healthz, /readyz (PostgreSQL, NATS), /metrics.
const http =
  cfg.WORKER_HTTP_PORT > 0
    ? await startWorkerHttp(rt, {
        port: cfg.WORKER_HTTP_PORT,
        host: cfg.HOST,
        metricsToken: cfg.METRICS_TOKEN,
      })
    : null;
onShutdown(rt.log, async () => {
  await worker.stop();
  await http?.close();
  await closeRuntime(rt);
});
