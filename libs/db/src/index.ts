import { MikroORM, type EntityManager } from '@mikro-orm/postgresql';
import { Migrator } from '@mikro-orm/migrations';
import pg from 'pg';
import { AppError } from '@lectern/errors';
import { ENTITIES } from './entities/index.js';
import { migrationsList } from './migrations/index.js';
import { PostgresNamingStrategy } from './naming.js';

export * from './entities/index.js';
export { newId, randomBase62 } from './ids.js';
export { migrationsList } from './migrations/index.js';
export { boundQuery } from './bound-query.js';
export { Batcher, type BatcherOptions } from './batcher.js';
export type { EntityManager };
export { MikroORM };

export interface DbOptions {
  url: string;
  poolMax?: number;
  /** Idle time before a pooled connection is closed (`DB_POOL_IDLE_MS`). Default 10 minutes. */
  poolIdleMs?: number;
  debug?: boolean;
}

/** See `DB_POOL_IDLE_MS` in @lectern/config. */
const DEFAULT_POOL_IDLE_MS = 600_000;

export async function createOrm(opts: DbOptions): Promise<MikroORM> {
  return MikroORM.init({
    clientUrl: opts.url,
    entities: ENTITIES,
    namingStrategy: PostgresNamingStrategy,
    schemaGenerator: {
      // rate_hits and rate_keys (the API's rate limit) and player_rate (the player's) are UNLOGGED tables: a
      // crash only forgives a minute of requests. Only the plpgsql function lectern_rate_hit() and the SQL of
      // libs/learner-runs limits.ts read and write them. An entity cannot say UNLOGGED, and no code uses them
      // through the ORM, so they are left out of the comparison rather than described wrongly.
      skipTables: ['player_rate', 'rate_hits', 'rate_keys'],
    },
    extensions: [Migrator],
    discovery: { warnWhenNoEntities: false },
    debug: opts.debug ?? false,
    allowGlobalContext: false,
    forceUtcTimezone: true,
    // A short acquire timeout turns "database down" into a fast 503 instead of a hung request.
    pool: {
      min: 0,
      max: opts.poolMax ?? 10,
      acquireTimeoutMillis: 5000,
      idleTimeoutMillis: opts.poolIdleMs ?? DEFAULT_POOL_IDLE_MS,
    },
    driverOptions: { connection: { connectionTimeoutMillis: 3000, keepAlive: true } },
    // Silent: callers report what was applied in their own words.
    migrations: {
      migrationsList,
      tableName: 'lectern_migrations',
      transactional: true,
      allOrNothing: true,
      silent: true,
    },
    // Connecting is lazy: a process started while PostgreSQL is down comes up and recovers by itself.
    connect: false,
  });
}

/** Key of the session advisory lock that serialises migrations across processes. */
const MIGRATION_LOCK = 7_302_150_811;

/**
 * Applies pending migrations; returns their names. Processes that start together (several
 * replicas running `lectern start`, or a migration Job beside one) take turns on an advisory
 * lock held on a connection of its own, so each migration runs exactly once.
 */
export async function migrate(orm: MikroORM): Promise<string[]> {
  const lock = new pg.Client({
    connectionString: orm.config.get('clientUrl'),
    connectionTimeoutMillis: 5000,
  });
  await lock.connect();
  try {
    await lock.query('select pg_advisory_lock($1)', [MIGRATION_LOCK]);
    const applied = await orm.getMigrator().up();
    return applied.map((m) => m.name);
  } finally {
    await lock.end();
  }
}

/** Creates the database named in `url` when it does not exist yet. */
export async function ensureDatabase(url: string): Promise<boolean> {
  const target = new URL(url);
  const dbName = decodeURIComponent(target.pathname.replace(/^\//, ''));
  if (!dbName) throw new Error(`DATABASE_URL names no database: ${url}`);
  const admin = new URL(url);
  admin.pathname = '/postgres';
  const client = new pg.Client({ connectionString: admin.toString(), connectionTimeoutMillis: 5000 });
  await client.connect();
  try {
    const exists = await client.query('select 1 from pg_database where datname = $1', [dbName]);
    if (exists.rowCount) return false;
    await client.query(`create database "${dbName.replace(/"/g, '""')}"`);
    return true;
  } finally {
    await client.end();
  }
}

export async function dropDatabase(url: string): Promise<void> {
  const target = new URL(url);
  const dbName = decodeURIComponent(target.pathname.replace(/^\//, ''));
  const admin = new URL(url);
  admin.pathname = '/postgres';
  const client = new pg.Client({ connectionString: admin.toString() });
  await client.connect();
  try {
    await client.query(`drop database if exists "${dbName.replace(/"/g, '""')}" with (force)`);
  } finally {
    await client.end();
  }
}

const CONNECTION_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'ENOTFOUND',
  'EAI_AGAIN',
  '57P01', // admin_shutdown
  '57P02', // crash_shutdown
  '57P03', // cannot_connect_now
  '08000',
  '08003',
  '08006',
  '08001',
  '08004',
]);

/**
 * True when an error means "the database is unreachable", not "the query is wrong". `timeout expired` is pg's
 * connect timeout (a starved event loop or a slow server): transient, so 503 with Retry-After, not a 500.
 */
export function isDbUnavailable(err: unknown): boolean {
  let e: unknown = err;
  for (let depth = 0; e && depth < 5; depth++) {
    const anyErr = e as { code?: string; name?: string; message?: string; cause?: unknown };
    if (anyErr.code && CONNECTION_CODES.has(anyErr.code)) return true;
    if (anyErr.name === 'KnexTimeoutError') return true;
    const msg = anyErr.message ?? '';
    if (
      /Connection terminated|connection timeout|Client has encountered a connection error|terminating connection|the database system is (starting|shutting) up|Timeout acquiring a connection|^timeout expired$/i.test(
        msg,
      )
    )
      return true;
    e = anyErr.cause;
  }
  return false;
}

// SQLSTATE classification lives with the errors (isRetryable uses it); re-exported for the callers here.
export { sqlStateOf, isTransientSqlState } from '@lectern/errors';

/** Wraps database outages into a retryable 503-class AppError; other errors pass through. */
export function asUnavailable(err: unknown): unknown {
  if (isDbUnavailable(err)) {
    return new AppError('unavailable', 'The database is unreachable; retry shortly', {
      cause: err,
      retryAfter: 2,
    });
  }
  return err;
}

export async function ping(orm: MikroORM): Promise<void> {
  await orm.em.getConnection().execute('select 1');
}
