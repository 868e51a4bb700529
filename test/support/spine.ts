import net from 'node:net';
import http from 'node:http';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { connect, nanos } from '@nats-io/transport-node';
import { AckPolicy, DeliverPolicy, jetstream, jetstreamManager } from '@nats-io/jetstream';
import { boundQuery, type EntityManager } from '@lectern/db';
import { buildApp, type BuiltApp } from '@lectern/api';
import { NO_RELAY } from '@lectern/events';
import { closeRuntime } from '@lectern/runtime';
import type { Logger } from '@lectern/log';
import {
  startTestApp,
  testConfig,
  testRuntime,
  type TestApp,
  type TestConfig,
  type TestRuntime,
} from './context.js';
import { TcpProxy } from './tcp-proxy.js';

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** Sends bytes the fetch API refuses to send (bare LF, obs-fold…) and returns the raw response. */
export function rawHttp(url: string, request: string): Promise<{ status: number; text: string }> {
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    const s = net.connect(Number(u.port), u.hostname, () => s.write(request));
    let out = '';
    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(out)?.[1] ?? 0);
      resolve({ status, text: out });
    };
    s.on('data', (d) => (out += d));
    s.on('end', finish);
    s.on('close', finish);
    s.on('error', reject);
  });
}

export interface StreamMessage<T = Record<string, unknown>> {
  seq: number;
  subject: string;
  msgId: string | undefined;
  body: T;
}

/**
 * Every message on `subject` in `stream`, read with an ephemeral consumer (nats-server 2.9:
 * a single filter_subject). Opens its own connection so it never disturbs a runtime's.
 */
export async function readStream<T = Record<string, unknown>>(
  natsUrl: string,
  stream: string,
  subject: string,
): Promise<StreamMessage<T>[]> {
  const nc = await connect({ servers: natsUrl });
  try {
    const jsm = await jetstreamManager(nc);
    const ci = await jsm.consumers.add(stream, {
      ack_policy: AckPolicy.None,
      deliver_policy: DeliverPolicy.All,
      filter_subject: subject,
      inactive_threshold: nanos(30_000),
    });
    const out: StreamMessage<T>[] = [];
    const want = ci.num_pending;
    if (want > 0) {
      const consumer = await jetstream(nc).consumers.get(stream, ci.name);
      while (out.length < want) {
        const batch = await consumer.fetch({ max_messages: want - out.length, expires: 2000 });
        let got = 0;
        for await (const m of batch) {
          got++;
          out.push({
            seq: m.seq,
            subject: m.subject,
            msgId: m.headers?.get('Nats-Msg-Id'),
            body: m.json<T>(),
          });
        }
        if (got === 0) break;
      }
    }
    await jsm.consumers.delete(stream, ci.name).catch(() => undefined);
    return out;
  } finally {
    await nc.close();
  }
}

export interface OutboxRow {
  id: string;
  workspace_id: string;
  type: string;
  data: Record<string, unknown>;
  created_at: Date;
  published_at: Date | null;
}

export async function outboxOf(em: EntityManager, workspaceId: string): Promise<OutboxRow[]> {
  return boundQuery<OutboxRow>(
    em,
    'select * from outbox_events where workspace_id = ? order by created_at, id',
    [workspaceId],
  );
}

/**
 * A listening app built with `buildApp`, so a test may register extra routes on `api` or
 * `pub` before (or after) listening: the routers match against their stack per request.
 */
export interface CustomApp {
  rt: TestRuntime;
  built: BuiltApp;
  url: string;
  base: string;
  close(): Promise<void>;
}

export async function startCustomApp(
  overrides: Record<string, string> = {},
  extend?: (built: BuiltApp) => void,
  opts: { log?: Logger } = {},
): Promise<CustomApp> {
  const rt = await testRuntime('api', overrides, { log: opts.log });
  const built = buildApp({ ...rt, relay: NO_RELAY });
  extend?.(built);
  const server = http.createServer(built.app.callback());
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const { port } = server.address() as net.AddressInfo;
  const url = `http://127.0.0.1:${port}`;
  return {
    rt,
    built,
    url,
    base: `${url}/api/v1`,
    async close() {
      const closed = new Promise<void>((r) => server.close(() => r()));
      server.closeAllConnections();
      await closed;
      await closeRuntime(rt, { keepStorage: true });
    },
  };
}

/** The environment a CLI or child process needs to reach this run's database, bus and store. */
export function envFor(cfg: TestConfig, overrides: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const [k, v] of Object.entries(cfg)) if (v !== undefined) env[k] = String(v);
  return { ...env, ...overrides };
}

export interface RunResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs a TypeScript entry point through tsx (what `npx tsx file` does, minus npx's start-up). */
export function runTs(
  file: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  timeoutMs = 20_000,
): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', file, ...args], {
      cwd: REPO_ROOT,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${file} ${args.join(' ')} did not exit in ${timeoutMs} ms\n${stdout}\n${stderr}`));
    }, timeoutMs);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** An API whose NATS connection goes through a TcpProxy, for outage tests (cut()/restore()). */
export async function startAppBehindNatsProxy(): Promise<{
  app: TestApp;
  proxy: TcpProxy;
  close(): Promise<void>;
}> {
  const nats = new URL(testConfig().NATS_URL.replace(/^nats:/, 'http:'));
  const proxy = await new TcpProxy({ host: nats.hostname, port: Number(nats.port || 4222) }).start();
  const app = await startTestApp({ NATS_URL: `nats://127.0.0.1:${proxy.port}` });
  return {
    app,
    proxy,
    async close() {
      proxy.restore();
      await app.close();
      await proxy.close();
    },
  };
}
