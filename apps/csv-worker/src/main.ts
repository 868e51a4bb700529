import { loadConfig } from '@lectern/config';
import { closeRuntime, createRuntime, onShutdown, startWorkerHttp } from '@lectern/runtime';
import { startCsvWorker } from '@lectern/csv-import';

const cfg = loadConfig();
const rt = await createRuntime(cfg, { name: 'csv-worker' });
const worker = await startCsvWorker(rt);
// Probes and scrapes (WORKER_HTTP_PORT=0: none). The worker reads uploads, so the object store counts too.
const http =
  cfg.WORKER_HTTP_PORT > 0
    ? await startWorkerHttp(rt, { port: cfg.WORKER_HTTP_PORT, checks: ['postgres', 'nats', 'objectStore'] })
    : null;
onShutdown(rt.log, async () => {
  await worker.stop();
  await http?.close();
  await closeRuntime(rt);
});
