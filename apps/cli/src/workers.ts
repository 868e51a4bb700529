import type { Runtime } from '@lectern/runtime';
import { startWebhookWorker } from '@lectern/webhooks';
import { startCsvWorker } from '@lectern/csv-import';
import { startCertificateWorker } from '@lectern/certificates';

export interface WorkerDef {
  name: string;
  start(rt: Runtime): Promise<{ stop(): Promise<void> }>;
}

/** Every worker `lectern start` runs in-process. Each also has its own app under apps/. */
export const WORKERS: WorkerDef[] = [
  { name: 'webhook-worker', start: startWebhookWorker },
  { name: 'csv-worker', start: (rt) => startCsvWorker(rt) },
  { name: 'certificate-worker', start: (rt) => startCertificateWorker(rt) },
];
