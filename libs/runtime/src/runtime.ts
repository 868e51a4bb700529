import type { BaseConfig, BusConfig, DbConfig, StorageConfig } from '@lectern/config';
import { createLogger, type Logger } from '@lectern/log';
import { createOrm, type MikroORM } from '@lectern/db';
import { connectBus, provisionStreams, type Bus } from '@lectern/bus';
import { createStorage, type Storage } from '@lectern/storage';
import { createMetrics, type Metrics } from '@lectern/metrics';

/** What every process reads to connect: its log level, PostgreSQL and NATS. */
export type RuntimeConfig = BaseConfig & DbConfig & BusConfig;

/**
 * The connections every process holds. Built once in an app's main.ts; the app hands each library only the
 * ports it uses (`{ orm, bus, log }`, …), never this whole object. The object store is opened separately
 * (`openStorage`) by the processes that read or write blobs.
 */
export interface Runtime {
  log: Logger;
  orm: MikroORM;
  bus: Bus;
  /** This process's Prometheus registry and metrics. */
  metrics: Metrics;
}

export interface RuntimeOptions {
  /** Names the logger and the NATS connection. */
  name: string;
  log?: Logger;
  /** Create the JetStream streams if missing. Default true. */
  provision?: boolean;
  metrics?: Metrics;
}

export async function createRuntime(cfg: RuntimeConfig, opts: RuntimeOptions): Promise<Runtime> {
  const log = opts.log ?? createLogger({ level: cfg.LOG_LEVEL, name: opts.name });
  const orm = await createOrm({
    url: cfg.DATABASE_URL,
    poolMax: cfg.DB_POOL_MAX,
    poolIdleMs: cfg.DB_POOL_IDLE_MS,
  });
  const bus = await connectBus({ url: cfg.NATS_URL, prefix: cfg.BUS_PREFIX, name: opts.name, log });
  if (opts.provision !== false) await provisionStreams(bus, { replicas: cfg.BUS_REPLICAS });
  return { log, orm, bus, metrics: opts.metrics ?? createMetrics() };
}

/** The object store (the loopback server when S3_ENDPOINT is unset); the bucket is created unless `provision: false`. */
export async function openStorage(
  cfg: StorageConfig & Pick<BaseConfig, 'DATA_DIR'>,
  opts: { provision?: boolean } = {},
): Promise<Storage> {
  const storage = await createStorage(cfg);
  if (opts.provision !== false) await storage.ensureBucket();
  return storage;
}

/** Closes the bus and the database pool, and the object store when one is given and not kept (tests share one). */
export async function closeRuntime(
  rt: Runtime & { storage?: Storage },
  opts: { keepStorage?: boolean } = {},
): Promise<void> {
  await rt.bus.close().catch((err: unknown) => rt.log.warn({ err }, 'bus close failed'));
  await rt.orm.close(true).catch((err: unknown) => rt.log.warn({ err }, 'orm close failed'));
  if (rt.storage && !opts.keepStorage)
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
