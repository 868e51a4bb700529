/**
 * A generation worker process for the crash test: the real `generation.run` entry with a short AckWait, on the
 * model at GENERATION_BASE_URL. The parent SIGKILLs it mid-job (no ack, no row update).
 * Args: ACK_WAIT_MS. Environment: the test run's configuration plus the GENERATION_* settings.
 */
import { BaseEnv, BusEnv, DbEnv, GenerationEnv, StorageEnv, parseEnv } from '@lectern/config';
import { createLogger } from '@lectern/log';
import { createRuntime, openStorage } from '@lectern/runtime';
import { runJobWorker } from '@lectern/jobs';
import { generationJob } from '@lectern/generation';

const [ackWait] = process.argv.slice(2);
const cfg = parseEnv([BaseEnv, DbEnv, BusEnv, StorageEnv, GenerationEnv], process.env);
const rt = await createRuntime(cfg, {
  name: 'dying-generation-worker',
  log: createLogger({ level: 'silent' }),
});
const storage = await openStorage(cfg);
await runJobWorker(
  { ...rt, storage },
  { ...generationJob({ cfg, allowPrivate: true }), ackWaitMs: Number(ackWait) },
);
process.stdout.write('ready\n');
