import path from 'node:path';
import {
  WorkerEnv,
  parseEnv,
  type BaseConfig,
  type BusConfig,
  type DbConfig,
  type StorageConfig,
} from '@lectern/config';
import { createLogger } from '@lectern/log';
import { createOrm, ping } from '@lectern/db';
import { connectBus } from '@lectern/bus';
import { createStorage } from '@lectern/storage';
import { WORKER_KINDS, WORKER_KIND_NAMES } from '@lectern/job-registry';
import { START_ENV } from '../start-env.js';

/** Every variable any Lectern process reads: what `lectern start` reads, and the workers' probe port. */
const EVERY_ENV = [...START_ENV, WorkerEnv] as const;

type Line = (ok: boolean, what: string, detail: string) => void;

/** lectern doctor: one line per dependency, ok or what is wrong and how to fix it. Returns the exit code. */
export async function doctorCommand(): Promise<number> {
  let problems = 0;
  const line: Line = (ok, what, detail) => {
    if (!ok) problems++;
    process.stdout.write(`${ok ? 'ok  ' : 'FAIL'} ${what}: ${detail}\n`);
  };
  let cfg: BaseConfig & DbConfig & BusConfig & StorageConfig;
  try {
    cfg = parseEnv(EVERY_ENV, process.env);
    line(true, 'configuration', 'every variable is valid');
  } catch (err) {
    line(
      false,
      'configuration',
      `${(err as Error).message.replace(/\n/g, ' ')} — fix the named variables (see .env.example)`,
    );
    return 1;
  }
  await checkPostgres(cfg, line);
  await checkNats(cfg, line);
  await checkObjectStore(cfg, line);
  checkWorkerKinds(line);
  return problems ? 1 : 0;
}

/** What each worker kind checks before it starts (files it needs, settings it derives), with the fix. */
function checkWorkerKinds(line: Line): void {
  for (const name of WORKER_KIND_NAMES) {
    try {
      WORKER_KINDS[name].preflight(process.env);
      line(true, `${name} worker`, 'can start');
    } catch (err) {
      line(
        false,
        `${name} worker`,
        `cannot start: ${(err as Error).message.replace(/\n/g, ' ')} (lectern start runs everything else)`,
      );
    }
  }
}

async function checkPostgres(cfg: DbConfig, line: Line): Promise<void> {
  try {
    const orm = await createOrm({ url: cfg.DATABASE_URL, poolMax: 1 });
    try {
      await ping(orm);
      const pending = await orm.getMigrator().getPendingMigrations();
      line(
        pending.length === 0,
        'postgres',
        pending.length
          ? `${pending.length} migration(s) pending — run: npx lectern migrate`
          : `connected to ${new URL(cfg.DATABASE_URL).host}, schema up to date`,
      );
    } finally {
      await orm.close(true);
    }
  } catch (err) {
    line(
      false,
      'postgres',
      `${(err as Error).message} — start PostgreSQL or set DATABASE_URL (e.g. pg_ctlcluster --skip-systemctl-redirect 15 main start); a missing database is created by: npx lectern migrate`,
    );
  }
}

async function checkNats(cfg: BusConfig, line: Line): Promise<void> {
  const log = createLogger({ level: 'silent' });
  try {
    const bus = await Promise.race([
      connectBus({ url: cfg.NATS_URL, prefix: cfg.BUS_PREFIX, name: 'doctor', log }),
      new Promise<never>((_, rej) => setTimeout(() => rej(new Error('no answer in 3 s')), 3000)),
    ]);
    try {
      const info = await bus.jsm.getAccountInfo();
      line(true, 'nats', `nats-server ${bus.nc.info?.version} with JetStream (${info.streams} streams)`);
    } catch (err) {
      line(
        false,
        'nats',
        `JetStream is not enabled (${(err as Error).message}) — start nats-server with -js`,
      );
    } finally {
      await bus.close();
    }
  } catch (err) {
    line(
      false,
      'nats',
      `${(err as Error).message} — start NATS (nats-server -js -a 127.0.0.1 -p 4222) or set NATS_URL`,
    );
  }
}

async function checkObjectStore(
  cfg: StorageConfig & Pick<BaseConfig, 'DATA_DIR'>,
  line: Line,
): Promise<void> {
  if (!cfg.S3_ENDPOINT) {
    line(
      true,
      'object store',
      `no S3_ENDPOINT: an S3-compatible server on loopback will keep files under ${path.resolve(cfg.DATA_DIR, 's3')}`,
    );
    return;
  }
  try {
    const storage = await createStorage(cfg);
    const exists = await storage.client.bucketExists(cfg.S3_BUCKET);
    line(
      true,
      'object store',
      `${cfg.S3_ENDPOINT} reachable; bucket ${cfg.S3_BUCKET} ${exists ? 'exists' : 'will be created at start'}`,
    );
  } catch (err) {
    line(
      false,
      'object store',
      `${(err as Error).message} — check S3_ENDPOINT, S3_ACCESS_KEY and S3_SECRET_KEY`,
    );
  }
}
