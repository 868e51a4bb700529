import { ping } from '@lectern/db';
import type { Runtime } from './index.js';

export type ReadinessCheck = 'postgres' | 'nats' | 'objectStore';

export interface Readiness {
  ok: boolean;
  /** Check name → 'ok' or what went wrong. */
  checks: Record<string, string>;
}

/**
 * The readiness checks shared by the API's /readyz and the workers' /readyz: each dependency answers within
 * `timeoutMs` (default 2 s), all checked at once.
 */
export async function checkReadiness(
  rt: Pick<Runtime, 'orm' | 'bus' | 'storage'>,
  which: readonly ReadinessCheck[] = ['postgres', 'nats', 'objectStore'],
  opts: { timeoutMs?: number } = {},
): Promise<Readiness> {
  const timeoutMs = opts.timeoutMs ?? 2000;
  const probes: Record<ReadinessCheck, () => Promise<unknown>> = {
    postgres: () => ping(rt.orm),
    nats: () => rt.bus.nc.flush(),
    objectStore: () => rt.storage.ping(),
  };
  const checks: Record<string, string> = {};
  await Promise.all(
    which.map(async (name) => {
      let timer: NodeJS.Timeout | undefined;
      try {
        await Promise.race([
          probes[name](),
          new Promise<never>((_, reject) => {
            timer = setTimeout(() => reject(new Error(`timed out after ${timeoutMs / 1000} s`)), timeoutMs);
          }),
        ]);
        checks[name] = 'ok';
      } catch (err) {
        checks[name] = (err as Error).message || 'failed';
      } finally {
        clearTimeout(timer);
      }
    }),
  );
  return { ok: Object.values(checks).every((v) => v === 'ok'), checks };
}
