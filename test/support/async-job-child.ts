/**
 * A worker process of an asynchronous test kind whose handler says "started" and never finishes: the parent
 * kills it (SIGKILL: no ack, no drain, no row update) to prove the job is redelivered to another worker.
 * Args: KIND_NAME APP ACK_WAIT_MS DEADLINE_MS MAX_ATTEMPTS. Environment: the test run's configuration.
 */
import { BaseEnv, BusEnv, DbEnv, StorageEnv, parseEnv } from '@lectern/config';
import { createLogger } from '@lectern/log';
import { createRuntime, openStorage } from '@lectern/runtime';
import { runJobWorkerOf } from '@lectern/jobs';
import { testJobKind } from './async-jobs.js';

const [name, app, ackWait, deadline, maxAttempts] = process.argv.slice(2);
const cfg = parseEnv([BaseEnv, DbEnv, BusEnv, StorageEnv], process.env);
const rt = await createRuntime(cfg, { name: 'dying-job-worker', log: createLogger({ level: 'silent' }) });
const storage = await openStorage(cfg);
const kind = testJobKind(name, { deadlineMs: Number(deadline), maxAttempts: Number(maxAttempts) });
await runJobWorkerOf({ ...rt, storage }, kind, {
  app,
  concurrency: 1,
  ackWaitMs: Number(ackWait),
  handler: async (job) => {
    process.stdout.write(`started ${job.id} ${job.attempt}\n`);
    return new Promise(() => undefined);
  },
});
process.stdout.write('ready\n');
