import type { JobWorkerDeps } from '@lectern/jobs';
import { jobWorkersOf } from '@lectern/jobs';
import { jobRegistry, type JobRegistryPorts } from '@lectern/job-registry';
import { startWebhookWorker, type WebhookWorkerDeps } from '@lectern/webhooks';

/** What `lectern start` hands every worker: each takes the ports it uses from it. */
export type WorkerDeps = JobWorkerDeps & WebhookWorkerDeps;

export interface WorkerDef {
  name: string;
  start(deps: WorkerDeps): Promise<{ stop(): Promise<void> }>;
}

/**
 * Every worker `lectern start` runs in-process (each also has its own app under apps/): the webhook worker, which
 * is not a job worker, then one worker per job kind from the job registry. Throws `JobRegistryError` when the
 * registry and the job kinds disagree.
 */
export function workers(env: Record<string, string | undefined>, ports: JobRegistryPorts): WorkerDef[] {
  return [
    { name: 'webhook-worker', start: (deps) => startWebhookWorker(deps) },
    ...jobWorkersOf(jobRegistry(env, ports)).map((w) => ({
      name: w.app,
      start: (deps: WorkerDeps) => w.start(deps),
    })),
  ];
}
