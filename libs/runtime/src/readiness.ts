import { ping, type MikroORM } from '@lectern/db';
import type { Bus } from '@lectern/bus';
import type { Storage } from '@lectern/storage';

export type ReadinessCheck = 'postgres' | 'nats' | 'objectStore';

export interface Readiness {
  ok: boolean;
  /** Check name → 'ok' or what went wrong. */
  checks: Record<string, string>;
}

/** The dependencies a process holds; each one given is checked (a process without an object store has no such check). */
export interface ReadinessDeps {
  orm: MikroORM;
  bus: Bus;
  storage?: Pick<Storage, 'ping'>;
}

/**
 * The readiness checks shared by the API's /readyz and the workers' /readyz: each dependency the process holds
 * answers within `timeoutMs` (default 2 s), all checked at once.
 */
export async function checkReadiness(
  deps: ReadinessDeps,
  opts: { timeoutMs?: number } = {},
): Promise<Readiness> {
  const timeoutMs = opts.timeoutMs ?? 2000;
  const { storage } = deps;
  const probes: Partial<Record<ReadinessCheck, () => Promise<unknown>>> = {
    postgres: () => ping(deps.orm),
    nats: () => deps.bus.nc.flush(),
    ...(storage ? { objectStore: () => storage.ping() } : {}),
  };
  const checks: Record<string, string> = {};
  await Promise.all(
    Object.entries(probes).map(async ([name, probe]) => {
      let timer: NodeJS.Timeout | undefined;
      try {
        await Promise.race([
          probe(),
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
