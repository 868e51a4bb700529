import { WorkerEnv, parseEnv } from '@lectern/config';
import {
  UnknownWorkerKindError,
  WORKER_KINDS,
  WORKER_KIND_NAMES,
  workerKindsNamed,
} from '@lectern/job-registry';
import { UsageError } from '../shared.js';

export const WORKER_USAGE = `lectern worker KIND [KIND…]     (or LECTERN_WORKERS=KIND,KIND with no KIND given)

Runs the named worker kinds in one process:
${WORKER_KIND_NAMES.map((n) => `  ${n.padEnd(12)} ${WORKER_KINDS[n].description}`).join('\n')}`;

/** lectern worker: the named kinds (argv, else LECTERN_WORKERS) through the worker host. */
export async function workerCommand(args: string[]): Promise<void> {
  if (args.includes('--help') || args.includes('-h')) {
    process.stdout.write(`${WORKER_USAGE}\n`);
    return;
  }
  const names = args.length > 0 ? args : [parseEnv([WorkerEnv], process.env).LECTERN_WORKERS ?? ''];
  let kinds;
  try {
    kinds = workerKindsNamed(names);
  } catch (err) {
    if (err instanceof UnknownWorkerKindError) throw new UsageError(err.message, 64);
    throw err;
  }
  if (kinds.length === 0)
    throw new UsageError(`name at least one worker kind (or set LECTERN_WORKERS)\n\n${WORKER_USAGE}`, 64);
  const { runWorkerHost } = await import('../worker-host.js');
  await runWorkerHost(kinds, process.env);
}
