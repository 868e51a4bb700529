import { ping, type MikroORM } from '@lectern/db';
import type { Bus } from '@lectern/bus';
import type { Storage } from '@lectern/storage';

export type ReadinessCheck = 'postgres' | 'nats' | 'objectStore';

/** How one worker kind of the process stands: `problem` says why it could not start, and the fix. */
export interface KindReadiness {
  ready: boolean;
  problem?: string;
}

export interface Readiness {
  ok: boolean;
  /** Check name → 'ok' or what went wrong. */
  checks: Record<string, string>;
  /** The worker kinds this process hosts, when it hosts any. */
  kinds?: Record<string, KindReadiness>;
}

/** The dependencies a process holds; each one given is checked (a process without an object store has no such check). */
export interface ReadinessDeps {
  orm: MikroORM;
  bus: Bus;
  storage?: Pick<Storage, 'ping'>;
  /** The worker kinds hosted here (a kind that could not start makes the process unready, the rest still run). */
  kinds?: () => Record<string, KindReadiness>;
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
  const kinds = deps.kinds?.();
  const ok =
    Object.values(checks).every((v) => v === 'ok') && Object.values(kinds ?? {}).every((k) => k.ready);
  return { ok, checks, ...(kinds ? { kinds } : {}) };
}

/** The JSON a /readyz answers (the API's and a worker's): 200 ready, or 503 with what is wrong. */
export function readinessBody(r: Readiness): { status: 200 | 503; body: Record<string, unknown> } {
  const kinds = r.kinds ? { kinds: r.kinds } : {};
  if (r.ok) return { status: 200, body: { data: { status: 'ready', checks: r.checks, ...kinds } } };
  const down = Object.entries(r.kinds ?? {})
    .filter(([, k]) => !k.ready)
    .map(([name]) => name);
  const unreachable = Object.values(r.checks).some((v) => v !== 'ok');
  const message = unreachable
    ? 'A dependency is unreachable'
    : `A worker kind could not start: ${down.join(', ')} (see kinds.<kind>.problem for the fix)`;
  return {
    status: 503,
    body: { error: 'service_unavailable', message, status: 'unready', checks: r.checks, ...kinds },
  };
}
