import {
  BaseEnv,
  BusEnv,
  DbEnv,
  MetricsEnv,
  StorageEnv,
  WorkerEnv,
  parseEnv,
  type ConfigPiece,
} from '@lectern/config';
import type { Logger } from '@lectern/log';
import {
  closeRuntime,
  createRuntime,
  onShutdown,
  openStorage,
  startWorkerHttp,
  type KindReadiness,
} from '@lectern/runtime';
import type { WorkerKind, WorkerKindDeps, RunningWorkerKind } from '@lectern/job-registry';

type Env = Record<string, string | undefined>;

/** The worker kinds of one process, started: what each reports to /readyz, and one stop for them all. */
export interface HostedKinds {
  readiness(): Record<string, KindReadiness>;
  stop(): Promise<void>;
}

/**
 * Starts each kind on the process's connections. A kind whose start throws is logged and reported unready with
 * the error's message (which says how to fix it); the other kinds, and whatever else the process serves, run on.
 */
export async function startKinds(
  kinds: readonly WorkerKind[],
  env: Env,
  deps: WorkerKindDeps,
): Promise<HostedKinds> {
  const state: Record<string, KindReadiness> = {};
  const running: RunningWorkerKind[] = [];
  for (const kind of kinds) {
    try {
      running.push(await kind.start(env, deps));
      state[kind.name] = { ready: true };
    } catch (err) {
      const problem = (err as Error)?.message || String(err);
      state[kind.name] = { ready: false, problem };
      deps.log.error({ kind: kind.name, err }, `worker kind "${kind.name}" could not start: ${problem}`);
    }
  }
  return {
    readiness: () => structuredClone(state),
    stop: async () => void (await Promise.all(running.map((r) => r.stop()))),
  };
}

/** The connection pieces every host reads, then the chosen kinds' own (the object store's only if one uses it). */
export function hostEnvPieces(kinds: readonly WorkerKind[]): ConfigPiece[] {
  return [
    BaseEnv,
    DbEnv,
    BusEnv,
    MetricsEnv,
    WorkerEnv,
    ...(kinds.some((k) => k.storage) ? [StorageEnv] : []),
    ...new Set(kinds.flatMap((k) => k.env)),
  ];
}

/**
 * `lectern worker <kind…>`: the chosen kinds in one process, their probe server (WORKER_HTTP_PORT; 0: none) and
 * a graceful stop on SIGTERM. Only the configuration the chosen kinds read is parsed (every bad variable named
 * at once, before anything connects); only the connections they use are opened.
 */
export async function runWorkerHost(kinds: readonly WorkerKind[], env: Env): Promise<void> {
  parseEnv(hostEnvPieces(kinds), env);
  const cfg = parseEnv([BaseEnv, DbEnv, BusEnv, MetricsEnv, WorkerEnv], env);
  const name = `${kinds.map((k) => k.name).join('+')}-worker`;
  const rt = await createRuntime(cfg, { name });
  const storage = kinds.some((k) => k.storage)
    ? await openStorage(parseEnv([BaseEnv, StorageEnv], env))
    : undefined;
  const deps = { ...rt, storage };
  const hosted = await startKinds(kinds, env, deps);
  // Probes and scrapes: /readyz checks the object store when a kind uses one, and reports every kind.
  const http =
    cfg.WORKER_HTTP_PORT > 0
      ? await startWorkerHttp(
          { ...deps, kinds: hosted.readiness },
          { port: cfg.WORKER_HTTP_PORT, host: cfg.HOST, metricsToken: cfg.METRICS_TOKEN },
        )
      : null;
  logStarted(rt.log, hosted);
  onShutdown(rt.log, async () => {
    await hosted.stop();
    await http?.close();
    await closeRuntime(deps);
  });
}

export function logStarted(log: Logger, hosted: HostedKinds, extra: Record<string, unknown> = {}): void {
  const kinds = hosted.readiness();
  const up = Object.keys(kinds).filter((k) => kinds[k].ready);
  const down = Object.keys(kinds).filter((k) => !kinds[k].ready);
  log.info(
    { ...extra, kinds: up, unready: down },
    down.length ? 'started; some worker kinds are unready' : 'started',
  );
}
