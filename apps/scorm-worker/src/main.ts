import { BaseEnv, BusEnv, DbEnv, MetricsEnv, StorageEnv, WorkerEnv, parseEnv } from '@lectern/config';
import { closeRuntime, createRuntime, onShutdown, openStorage, startWorkerHttp } from '@lectern/runtime';
import { SCORM_WORKER_ENV } from '@lectern/scorm';
import { scormJobWorkers } from '@lectern/job-registry';

// Connections, the object store (packages in and out), the SCORM settings and the probe server: no PORT, no
// webhook secrets, no other worker's settings.
const cfg = parseEnv(
  [BaseEnv, DbEnv, BusEnv, StorageEnv, MetricsEnv, WorkerEnv, ...SCORM_WORKER_ENV],
  process.env,
);
const rt = await createRuntime(cfg, { name: 'scorm-worker' });
const storage = await openStorage(cfg);
// Every `scorm.*` kind of the job registry (export, import), each on its own durable consumer.
const workers = await Promise.all(
  scormJobWorkers(process.env, { storage }).map((w) => w.start({ ...rt, storage })),
);
// Probes and scrapes (WORKER_HTTP_PORT=0: none). The worker reads and writes packages, so /readyz checks the store.
const http =
  cfg.WORKER_HTTP_PORT > 0
    ? await startWorkerHttp(
        { ...rt, storage },
        { port: cfg.WORKER_HTTP_PORT, host: cfg.HOST, metricsToken: cfg.METRICS_TOKEN },
      )
    : null;
onShutdown(rt.log, async () => {
  await Promise.all(workers.map((w) => w.stop()));
  await http?.close();
  await closeRuntime({ ...rt, storage });
});
