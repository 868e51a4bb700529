import { BaseEnv, BusEnv, DbEnv, MetricsEnv, StorageEnv, WorkerEnv, parseEnv } from '@lectern/config';
import { closeRuntime, createRuntime, onShutdown, openStorage, startWorkerHttp } from '@lectern/runtime';
import { startCsvWorker } from '@lectern/csv-import';

// Connections, the object store (uploads) and the probe server: no PORT, no webhook settings.
const cfg = parseEnv([BaseEnv, DbEnv, BusEnv, StorageEnv, MetricsEnv, WorkerEnv], process.env);
const rt = await createRuntime(cfg, { name: 'csv-worker' });
const storage = await openStorage(cfg);
const worker = await startCsvWorker({ ...rt, storage });
// Probes and scrapes (WORKER_HTTP_PORT=0: none). The worker reads uploads, so /readyz checks the object store too.
const http =
  cfg.WORKER_HTTP_PORT > 0
    ? await startWorkerHttp(
        { ...rt, storage },
        { port: cfg.WORKER_HTTP_PORT, host: cfg.HOST, metricsToken: cfg.METRICS_TOKEN },
      )
    : null;
onShutdown(rt.log, async () => {
  await worker.stop();
  await http?.close();
  await closeRuntime({ ...rt, storage });
});
