import { parseEnv } from '@lectern/config';
import { START_ENV } from '../start-env.js';

/**
 * lectern start: migrate, a demo workspace and key, then the API and every worker in one process (a laptop).
 * The configuration is checked before the API and the workers are even loaded, so a bad variable answers at once.
 */
export async function startCommand(): Promise<void> {
  const cfg = parseEnv(START_ENV, process.env);
  const { runAll } = await import('../run-all.js');
  await runAll(cfg);
}
