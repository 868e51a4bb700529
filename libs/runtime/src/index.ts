import type { AppConfig } from '@lectern/config';
import { createLogger, type Logger } from '@lectern/log';
import { createOrm, type MikroORM } from '@lectern/db';
import { connectBus, provisionStreams, type Bus } from '@lectern/bus';
import { createStorage, type Storage } from '@lectern/storage';
import { createMetrics, type Metrics } from '@lectern/metrics';

export { checkReadiness, type ReadinessCheck, type Readiness } from './readiness.js';
export { startWorkerHttp, type WorkerHttp, type WorkerHttpOptions } from './worker-http.js';

/** The connections a process holds. Built once in main.ts and passed down; no globals. */
export interface Runtime {
  cfg: AppConfig;
  log: Logger;
  orm: MikroORM;
  bus: Bus;
  storage: Storage;
  /** This process's Prometheus registry and metrics (createRuntime makes one; absent in hand-built runtimes). */
  metrics?: Metrics;
}

export async function createRuntime(
  cfg: AppConfig,
  opts: { name: string; log?: Logger; storage?: Storage; provision?: boolean; metrics?: Metrics },
): Promise<Runtime> {
  const log = opts.log ?? createLogger({ level: cfg.LOG_LEVEL, name: opts.name });
  const orm = await createOrm({ url: cfg.DATABASE_URL, poolMax: cfg.DB_POOL_MAX });
  const bus = await connectBus({ url: cfg.NATS_URL, prefix: cfg.BUS_PREFIX, name: opts.name, log });
  if (opts.provision !== false) await provisionStreams(bus);
  const storage = opts.storage ?? (await createStorage(cfg));
  if (!opts.storage && opts.provision !== false) await storage.ensureBucket();
  const metrics = opts.metrics ?? createMetrics();
  return { cfg, log, orm, bus, storage, metrics };
}

export async function closeRuntime(rt: Runtime, opts: { keepStorage?: boolean } = {}): Promise<void> {
  await rt.bus.close().catch((err: unknown) => rt.log.warn({ err }, 'bus close failed'));
  await rt.orm.close(true).catch((err: unknown) => rt.log.warn({ err }, 'orm close failed'));
  if (!opts.keepStorage)
    await rt.storage.close().catch((err: unknown) => rt.log.warn({ err }, 'storage close failed'));
}

/** Runs `stop` once on SIGTERM/SIGINT, then exits; a second signal exits at once. */
export function onShutdown(log: Logger, stop: () => Promise<void>): void {
  let stopping = false;
  const handler = (signal: string) => {
    if (stopping) process.exit(1);
    stopping = true;
    log.info({ signal }, 'shutting down');
    stop()
      .then(() => process.exit(0))
      .catch((err: unknown) => {
        log.error({ err }, 'shutdown failed');
        process.exit(1);
      });
  };
  process.on('SIGTERM', () => handler('SIGTERM'));
  process.on('SIGINT', () => handler('SIGINT'));
}
