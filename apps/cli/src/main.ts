#!/usr/bin/env node
import { parseArgs } from 'node:util';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { ConfigError, loadConfig, type AppConfig } from '@lectern/config';
import { createLogger } from '@lectern/log';
import { createOrm, ensureDatabase, migrate, ping, ApiKeySchema, WorkspaceSchema } from '@lectern/db';
import { createKey, createWorkspace, revokeKey, setBilling, setPlan } from '@lectern/admin';
import { isAppError } from '@lectern/errors';
import { connectBus } from '@lectern/bus';
import { createStorage } from '@lectern/storage';
import { hashKey } from '@lectern/auth';
import { ensureWebhookSecretKey } from '@lectern/webhooks';

const USAGE = `lectern — Lectern admin command

  lectern migrate
  lectern workspace create --name NAME --plan sandbox|build|scale|partner [--json]
  lectern workspace set-plan WORKSPACE_ID PLAN
  lectern workspace billing WORKSPACE_ID --past-due --grace-until ISO
  lectern workspace billing WORKSPACE_ID --paid
  lectern key create --workspace WORKSPACE_ID --scope read|write [--json]
  lectern key revoke KEY_ID
  lectern start            migrate, provision, run the API and every worker in one process
  lectern doctor           check every dependency and say how to fix what is wrong

Configuration comes from environment variables; see .env.example.`;

function fail(message: string, code = 1): never {
  process.stderr.write(`${message}\n`);
  process.exit(code);
}

async function withOrm<T>(
  cfg: AppConfig,
  fn: (em: import('@lectern/db').EntityManager) => Promise<T>,
): Promise<T> {
  const orm = await createOrm({ url: cfg.DATABASE_URL, poolMax: 2 });
  try {
    return await fn(orm.em.fork());
  } finally {
    await orm.close(true);
  }
}

async function runMigrate(cfg: AppConfig): Promise<string[]> {
  const created = await ensureDatabase(cfg.DATABASE_URL);
  if (created) process.stdout.write(`created database ${new URL(cfg.DATABASE_URL).pathname.slice(1)}\n`);
  const orm = await createOrm({ url: cfg.DATABASE_URL, poolMax: 2 });
  try {
    return await migrate(orm);
  } finally {
    await orm.close(true);
  }
}

/** A demo workspace and write key, made on the first `start` and reused after (kept under DATA_DIR). */
async function demoCredentials(cfg: AppConfig): Promise<{ workspaceId: string; key: string }> {
  const file = path.resolve(cfg.DATA_DIR, 'demo-credentials.json');
  return withOrm(cfg, async (em) => {
    try {
      const saved = JSON.parse(await readFile(file, 'utf8')) as { workspaceId: string; key: string };
      const ws = await em.findOne(WorkspaceSchema, { id: saved.workspaceId });
      const key = await em.findOne(ApiKeySchema, { hash: hashKey(saved.key), revokedAt: null });
      if (ws && key) return saved;
    } catch {
      // No saved credentials yet (or the database was reset): make new ones below.
    }
    const ws = await createWorkspace(em, 'Demo workspace', 'scale');
    const { key } = await createKey(em, ws.id, 'write');
    await mkdir(path.dirname(file), { recursive: true });
    await writeFile(file, JSON.stringify({ workspaceId: ws.id, key }, null, 2), { mode: 0o600 });
    return { workspaceId: ws.id, key };
  });
}

async function doctor(): Promise<number> {
  let problems = 0;
  const line = (ok: boolean, what: string, detail: string) => {
    if (!ok) problems++;
    process.stdout.write(`${ok ? 'ok  ' : 'FAIL'} ${what}: ${detail}\n`);
  };
  let cfg: AppConfig;
  try {
    cfg = loadConfig();
    line(true, 'configuration', 'every variable is valid');
  } catch (err) {
    line(
      false,
      'configuration',
      `${(err as Error).message.replace(/\n/g, ' ')} — fix the named variables (see .env.example)`,
    );
    return 1;
  }
  const log = createLogger({ level: 'silent' });
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
  if (cfg.S3_ENDPOINT) {
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
  } else {
    line(
      true,
      'object store',
      `no S3_ENDPOINT: an S3-compatible server on loopback will keep files under ${path.resolve(cfg.DATA_DIR, 's3')}`,
    );
  }
  return problems ? 1 : 0;
}

async function main(argv: string[]): Promise<void> {
  const [cmd, sub, ...rest] = argv;
  if (!cmd || cmd === 'help' || cmd === '--help' || cmd === '-h') {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  if (cmd === 'doctor') process.exit(await doctor());
  const cfg = loadConfig();
  switch (cmd) {
    case 'migrate': {
      const applied = await runMigrate(cfg);
      process.stdout.write(applied.length ? `applied ${applied.join(', ')}\n` : 'schema is up to date\n');
      return;
    }
    case 'workspace': {
      if (sub === 'create') {
        const { values } = parseArgs({
          args: rest,
          options: {
            name: { type: 'string' },
            plan: { type: 'string', default: 'sandbox' },
            json: { type: 'boolean' },
          },
        });
        if (!values.name) fail('--name is required');
        const ws = await withOrm(cfg, (em) => createWorkspace(em, values.name!, values.plan!));
        process.stdout.write(
          values.json
            ? `${JSON.stringify({ id: ws.id, name: ws.name, plan: ws.plan })}\n`
            : `created workspace ${ws.id} (${ws.name}, ${ws.plan})\n`,
        );
        return;
      }
      if (sub === 'set-plan') {
        const [id, plan] = rest;
        if (!id || !plan) fail('usage: lectern workspace set-plan WORKSPACE_ID PLAN');
        const ws = await withOrm(cfg, (em) => setPlan(em, id, plan));
        process.stdout.write(`workspace ${ws.id} is now on ${ws.plan}\n`);
        return;
      }
      if (sub === 'billing') {
        const { values, positionals } = parseArgs({
          args: rest,
          allowPositionals: true,
          options: {
            'past-due': { type: 'boolean' },
            'grace-until': { type: 'string' },
            paid: { type: 'boolean' },
          },
        });
        const id = positionals[0];
        if (!id)
          fail('usage: lectern workspace billing WORKSPACE_ID (--past-due --grace-until ISO | --paid)');
        if (values.paid === values['past-due']) fail('give exactly one of --past-due or --paid');
        let graceUntil: Date | undefined;
        if (values['past-due']) {
          graceUntil = new Date(values['grace-until'] ?? '');
          if (!values['grace-until'] || Number.isNaN(graceUntil.getTime()))
            fail('--past-due needs --grace-until with an ISO 8601 timestamp');
        }
        const ws = await withOrm(cfg, (em) =>
          setBilling(em, id, values.paid ? { pastDue: false } : { pastDue: true, graceUntil: graceUntil! }),
        );
        process.stdout.write(
          `workspace ${ws.id} billing: ${ws.billingStatus}${ws.graceUntil ? ` (grace until ${ws.graceUntil.toISOString()})` : ''}\n`,
        );
        return;
      }
      break;
    }
    case 'key': {
      if (sub === 'create') {
        const { values } = parseArgs({
          args: rest,
          options: {
            workspace: { type: 'string' },
            scope: { type: 'string', default: 'write' },
            json: { type: 'boolean' },
          },
        });
        if (!values.workspace) fail('--workspace is required');
        const k = await withOrm(cfg, (em) =>
          createKey(em, values.workspace!, values.scope as 'read' | 'write'),
        );
        process.stdout.write(
          values.json
            ? `${JSON.stringify(k)}\n`
            : `created ${k.scope} key ${k.id}\n${k.key}\n(shown once; store it now)\n`,
        );
        return;
      }
      if (sub === 'revoke') {
        const [id] = rest;
        if (!id) fail('usage: lectern key revoke KEY_ID');
        await withOrm(cfg, (em) => revokeKey(em, id));
        process.stdout.write(`revoked ${id}\n`);
        return;
      }
      break;
    }
    case 'start': {
      // Before anything else: production without WEBHOOK_SECRET_KEY stops here with the fix in the message.
      const startCfg = await ensureWebhookSecretKey(cfg);
      await runMigrate(cfg);
      const creds = await demoCredentials(cfg);
      // Loaded only here: it pulls in the API and every worker.
      const { startAll } = await import('./start.js');
      const running = await startAll(startCfg);
      const base = `${cfg.PUBLIC_URL}/api/v1`;
      process.stdout.write(
        [
          '',
          `Lectern is running at ${cfg.PUBLIC_URL}`,
          `  API base:     ${base}`,
          `  API docs:     ${base}/docs`,
          `  Workspace:    ${creds.workspaceId} (Scale plan)`,
          `  API key:      ${creds.key}`,
          '',
          'Try:',
          `  curl -s ${base}/me -H 'Authorization: Bearer ${creds.key}'`,
          `  curl -s -X POST ${base}/identities -H 'Authorization: Bearer ${creds.key}' -H 'Content-Type: application/json' -d '{"externalId":"learner-1","name":"Ada"}'`,
          '',
        ].join('\n') + '\n',
      );
      await running.done;
      return;
    }
  }
  fail(`unknown command: ${argv.join(' ')}\n\n${USAGE}`, 2);
}

main(process.argv.slice(2)).catch((err: unknown) => {
  if (err instanceof ConfigError) fail(err.message, 78);
  if (isAppError(err)) fail(`${err.code}: ${err.message}`);
  fail(`error: ${(err as Error)?.stack ?? String(err)}`);
});
