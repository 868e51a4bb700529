import { randomBytes } from 'node:crypto';
import { mkdtemp } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import {
  ApiEnv,
  CertificateEnv,
  BaseEnv,
  BusEnv,
  DbEnv,
  JobsEnv,
  GenerationEnv,
  MediaEnv,
  MetricsEnv,
  ScormEnv,
  StorageEnv,
  WorkerEnv,
  parseEnv,
  type EnvOf,
} from '@lectern/config';
import { createLogger, type Logger } from '@lectern/log';
import { dropDatabase, ensureDatabase, createOrm, migrate, type EntityManager } from '@lectern/db';
import { createStorage, type Storage } from '@lectern/storage';
import { closeRuntime, createRuntime, type Runtime } from '@lectern/runtime';
import { createKey, createWorkspace } from '@lectern/admin';
import { PlayerEnv, startApiServer, type ApiServer } from '@lectern/api';
import { WebhookEnv } from '@lectern/webhooks';
import type { PlanName } from '@lectern/db';

/** Every configuration piece: a test process plays the API and every worker. */
const TEST_ENV = [
  BaseEnv,
  DbEnv,
  BusEnv,
  StorageEnv,
  MetricsEnv,
  ApiEnv,
  JobsEnv,
  GenerationEnv,
  MediaEnv,
  WorkerEnv,
  WebhookEnv,
  PlayerEnv,
  CertificateEnv,
  ScormEnv,
] as const;
export type TestConfig = EnvOf<typeof TEST_ENV>;

/** Parses a test environment with every piece. */
export function loadTestConfig(env: Record<string, string | undefined>): TestConfig {
  return parseEnv(TEST_ENV, env);
}

/**
 * What a test holds: the connections, this run's shared object store and the configuration, so it can hand any
 * library the ports it asks for (`startApiServer(rt)`, `startCsvWorker(rt)`) as a main.ts would.
 */
export type TestRuntime = Runtime & { cfg: TestConfig; storage: Storage };

/**
 * One test run = one PostgreSQL database and one BUS_PREFIX, so runs never collide.
 * The database is created and migrated once (root hook), the loopback S3 server is shared.
 */
export interface TestContext {
  cfg: TestConfig;
  storage: Storage;
  runId: string;
}

let ctx: TestContext | undefined;

export function testConfig(overrides: Record<string, string> = {}): TestConfig {
  if (!ctx) throw new Error('test context not initialised (root hook missing?)');
  return { ...ctx.cfg, ...loadTestConfig({ ...envOf(ctx.cfg), ...overrides }) };
}

function envOf(cfg: TestConfig): Record<string, string> {
  return Object.fromEntries(
    Object.entries(cfg)
      .filter(([, v]) => v !== undefined)
      .map(([k, v]) => [k, String(v)]),
  );
}

export function context(): TestContext {
  if (!ctx) throw new Error('test context not initialised (root hook missing?)');
  return ctx;
}

export async function setupRun(): Promise<TestContext> {
  const runId = `${Date.now().toString(36)}${randomBytes(3).toString('hex')}`;
  const dataDir = await mkdtemp(path.join(os.tmpdir(), `lectern-test-${runId}-`));
  const baseDb = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  const dbUrl = new URL(baseDb);
  dbUrl.pathname = `/lectern_test_${runId}`;
  const cfg = loadTestConfig({
    DATABASE_URL: dbUrl.toString(),
    NATS_URL: process.env.TEST_NATS_URL ?? 'nats://127.0.0.1:4222',
    BUS_PREFIX: `t${runId}`,
    DATA_DIR: dataDir,
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    PORT: '0',
    HOST: '127.0.0.1',
    PUBLIC_URL: 'http://lectern.test',
    ALLOW_PRIVATE_NETWORKS: 'true',
    WEBHOOK_SECRET_KEY: randomBytes(32).toString('hex'),
    WEBHOOK_RETRY_DELAYS: '1,1,1,1',
    // Every test opens runs from 127.0.0.1 into one database: the anonymous limits would refuse tests that have
    // nothing to do with them. Their own tests (player-access.test.ts) set them.
    PLAYER_ANONYMOUS_OPENS_PER_MINUTE_PER_ADDRESS: '0',
    PLAYER_ANONYMOUS_OPENS_PER_MINUTE_PER_ID: '0',
  });
  await ensureDatabase(cfg.DATABASE_URL);
  const orm = await createOrm({ url: cfg.DATABASE_URL, poolMax: 2 });
  await migrate(orm);
  await orm.close(true);
  const storage = await createStorage(cfg);
  await storage.ensureBucket();
  ctx = { cfg: { ...cfg, S3_ENDPOINT: storage.endpoint }, storage, runId };
  return ctx;
}

export async function teardownRun(): Promise<void> {
  if (!ctx) return;
  await ctx.storage.close();
  if (!process.env.TEST_KEEP_DB) await dropDatabase(ctx.cfg.DATABASE_URL).catch(() => undefined);
  // Streams of this run's prefix are removed so the NATS server does not accumulate them.
  const { connect } = await import('@nats-io/transport-node');
  const { jetstreamManager } = await import('@nats-io/jetstream');
  const nc = await connect({ servers: ctx.cfg.NATS_URL });
  const jsm = await jetstreamManager(nc);
  for await (const s of jsm.streams.list()) {
    if (s.config.name.startsWith(`${ctx.cfg.BUS_PREFIX}_`)) await jsm.streams.delete(s.config.name);
  }
  await nc.close();
  ctx = undefined;
}

/** A runtime on this run's database, bus prefix and object store (shared: close with `keepStorage`). */
export async function testRuntime(
  name = 'test',
  overrides: Record<string, string> = {},
  opts: { log?: Logger } = {},
): Promise<TestRuntime> {
  const cfg = testConfig(overrides);
  const rt = await createRuntime(cfg, {
    name,
    log: opts.log ?? createLogger({ level: cfg.LOG_LEVEL, name }),
  });
  return { ...rt, cfg, storage: context().storage };
}

/** Job workers on one runtime of their own, as a worker process runs them; `stop` ends them, then the runtime. */
export interface TestWorkers {
  rt: TestRuntime;
  stop(): Promise<void>;
}

export async function startTestWorkers(
  name: string,
  ...starts: ((rt: TestRuntime) => Promise<{ stop(): Promise<void> }>)[]
): Promise<TestWorkers> {
  const rt = await testRuntime(name);
  const handles: { stop(): Promise<void> }[] = [];
  for (const start of starts) handles.push(await start(rt));
  return {
    rt,
    async stop() {
      for (const handle of handles) await handle.stop();
      await closeRuntime(rt, { keepStorage: true });
    },
  };
}

export interface TestApp {
  rt: TestRuntime;
  api: ApiServer;
  url: string;
  base: string;
  close(): Promise<void>;
}

export async function startTestApp(overrides: Record<string, string> = {}): Promise<TestApp> {
  const rt = await testRuntime('api', overrides);
  const api = await startApiServer(rt, { port: 0, host: '127.0.0.1' });
  return {
    rt,
    api,
    url: api.url,
    base: `${api.url}/api/v1`,
    async close() {
      await api.close();
      await closeRuntime(rt, { keepStorage: true });
    },
  };
}

export interface TestWorkspace {
  id: string;
  key: string;
  readKey: string;
  keyId: string;
}

export async function makeWorkspace(
  em: EntityManager,
  plan: PlanName = 'scale',
  name = 'Test workspace',
): Promise<TestWorkspace> {
  const ws = await createWorkspace(em, name, plan);
  const write = await createKey(em, ws.id, 'write');
  const read = await createKey(em, ws.id, 'read');
  return { id: ws.id, key: write.key, readKey: read.key, keyId: write.id };
}
