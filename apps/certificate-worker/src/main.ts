import { BaseEnv, BusEnv, DbEnv, MetricsEnv, StorageEnv, WorkerEnv, parseEnv } from '@lectern/config';
import { closeRuntime, createRuntime, onShutdown, openStorage, startWorkerHttp } from '@lectern/runtime';
import {
  CERTIFICATE_WORKER_ENV,
  certificateRenderSettings,
  loadFontLibrary,
  startCertificateWorker,
} from '@lectern/certificates';

// Connections, the object store (PDFs), the render settings and the probe server: no PORT, no webhook secrets.
const cfg = parseEnv(
  [BaseEnv, DbEnv, BusEnv, StorageEnv, MetricsEnv, WorkerEnv, ...CERTIFICATE_WORKER_ENV],
  process.env,
);
// The faces are read before anything connects: a machine without them fails here, with the fix in the message,
// and the first render does not pay for reading them.
const fonts = loadFontLibrary(cfg.CERTIFICATE_FONT_DIR);
const rt = await createRuntime(cfg, { name: 'certificate-worker' });
const storage = await openStorage(cfg);
const worker = await startCertificateWorker({ ...rt, storage }, certificateRenderSettings(cfg, fonts));
// Probes and scrapes (WORKER_HTTP_PORT=0: none). The worker writes PDFs, so /readyz checks the object store too.
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
