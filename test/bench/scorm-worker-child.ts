/**
 * The scorm worker in a process of its own, for scorm-export.bench.ts and scorm-import.bench.ts (the bench-child
 * protocol of bench-child.ts). Runs what `lectern worker scorm` runs: every `scorm.*` kind of the job registry.
 */
import { BaseEnv, BusEnv, DbEnv, MetricsEnv, StorageEnv, parseEnv } from '@lectern/config';
import { closeRuntime, createRuntime, openStorage } from '@lectern/runtime';
import { SCORM_WORKER_ENV } from '@lectern/scorm';
import { WORKER_KINDS } from '@lectern/job-registry';
import { benchChildEnv, serveBench } from './bench-child.js';

const env = benchChildEnv('scorm-worker-child');
const cfg = parseEnv([BaseEnv, DbEnv, BusEnv, StorageEnv, MetricsEnv, ...SCORM_WORKER_ENV], env);
const rt = await createRuntime(cfg, { name: 'bench-scorm-worker-child', provision: false });
const storage = await openStorage(cfg, { provision: false });
const worker = await WORKER_KINDS.scorm.start(env, { ...rt, storage });
serveBench(async () => {
  await worker.stop();
  await closeRuntime({ ...rt, storage });
});
