import type { Runtime } from '../../../libs/runtime/src/index.js';
import { startWebhookWorker } from '../../../libs/webhooks/src/index.js';
import { startCsvWorker } from '../../../libs/csv-import/src/index.js';

export interface WorkerDef {
  name: string;
  start(rt: Runtime): Promise<{ stop(): Promise<void> }>;
}

/** Every worker `lectern start` runs in-process. Each also has its own app under apps/. */
export const WORKERS: WorkerDef[] = [
  { name: 'webhook-worker', start: startWebhookWorker },
  { name: 'csv-worker', start: (rt) => startCsvWorker(rt) },
];
