import { loadConfig } from '@lectern/config';
import { closeRuntime, createRuntime, onShutdown, startWorkerHttp } from '@lectern/runtime';
import { startCertificateWorker } from '@lectern/certificates';

const cfg = loadConfig();
const rt = await createRuntime(cfg, { name: 'certificate-worker' });
const worker = await startCertificateWorker(rt);
// Probes and scrapes (WORKER_HTTP_PORT=0: none). The worker writes PDFs, so the object store counts too.
const http =
  cfg.WORKER_HTTP_PORT > 0
    ? await startWorkerHttp(rt, { port: cfg.WORKER_HTTP_PORT, checks: ['postgres', 'nats', 'objectStore'] })
    : null;
onShutdown(rt.log, async () => {
  await worker.stop();
  await http?.close();
  await closeRuntime(rt);
});
