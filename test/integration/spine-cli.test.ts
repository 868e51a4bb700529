import { expect } from 'chai';
import pg from 'pg';
import { startTestApp, testConfig, type TestApp } from '../support/context.js';
import { call } from '../support/http.js';
import { envFor, runTs, type RunResult } from '../support/spine.js';
import { dropDatabase } from '@lectern/db';

const CLI = 'apps/cli/src/main.ts';

describe('spine: the lectern CLI', function () {
  // Each step spawns the CLI through tsx (a few seconds each on a loaded 2-core machine).
  this.timeout(180_000);
  let app: TestApp;

  // Each CLI run is a fresh Node process (~1.5 s of start-up): a few run at once, and the
  // checks that depend on nothing start in `before`, alongside the workspace/key chain.
  let slots = 3;
  const queue: (() => void)[] = [];
  async function cli(args: string[], overrides: Record<string, string> = {}): Promise<RunResult> {
    while (slots === 0) await new Promise<void>((r) => queue.push(r));
    slots--;
    try {
      return await runTs(CLI, args, envFor(testConfig(), overrides), 40_000);
    } finally {
      slots++;
      queue.shift()?.();
    }
  }
  const settle = <T>(p: Promise<T>): Promise<T | Error> =>
    p.catch((e: unknown) => (e instanceof Error ? e : new Error(String(e))));
  const freshDb = () => {
    const u = new URL(testConfig().DATABASE_URL);
    u.pathname = `${u.pathname}_cli_new`;
    return u.toString();
  };
  let independent: {
    migrate: Promise<[RunResult, RunResult] | Error>;
    badEnv: Promise<RunResult | Error>;
    unreadBadEnv: Promise<RunResult | Error>;
    doctor: Promise<RunResult | Error>;
  };

  before(async () => {
    app = await startTestApp();
    independent = {
      migrate: settle(
        (async () => {
          const first = await cli(['migrate'], { DATABASE_URL: freshDb() });
          return [first, await cli(['migrate'], { DATABASE_URL: freshDb() })] as [RunResult, RunResult];
        })(),
      ),
      // `start` reads every variable, so it names every bad one, before touching anything.
      badEnv: settle(cli(['start'], { PORT: 'abc', RATE_LIMIT_PER_MINUTE: '-1', BUS_PREFIX: 'has.dots' })),
      // `workspace create` reads DATABASE_URL only: variables of the API and the bus are not its business.
      unreadBadEnv: settle(
        cli(['workspace', 'create', '--name', 'Unread variables', '--json'], {
          PORT: 'abc',
          BUS_PREFIX: 'has.dots',
        }),
      ),
      doctor: settle(cli(['doctor'])),
    };
  });
  after(async () => {
    if (independent) await Promise.all(Object.values(independent));
    await dropDatabase(freshDb());
    await app?.close();
  });

  const ok = (r: RunResult, what: string) => {
    expect(r.code, `${what} exited ${r.code}\n${r.stdout}\n${r.stderr}`).to.equal(0);
    return r;
  };
  const json = <T>(r: RunResult): T => JSON.parse(r.stdout.trim()) as T;
  async function result<T>(p: Promise<T | Error>): Promise<T> {
    const r = await p;
    if (r instanceof Error) throw r;
    return r;
  }

  it('workspace create, key create, set-plan, billing and key revoke drive what the API answers', async () => {
    const ws = json<{ id: string; name: string; plan: string }>(
      ok(
        await cli(['workspace', 'create', '--name', 'CLI workspace', '--plan', 'sandbox', '--json']),
        'workspace create',
      ),
    );
    expect(ws).to.have.all.keys('id', 'name', 'plan');
    expect(ws).to.include({ name: 'CLI workspace', plan: 'sandbox' });

    const write = json<{ id: string; key: string; scope: string }>(
      ok(await cli(['key', 'create', '--workspace', ws.id, '--scope', 'write', '--json']), 'key create'),
    );
    expect(write).to.have.all.keys('id', 'key', 'scope');
    expect(write.scope).to.equal('write');
    expect(write.key).to.match(/^lk_[A-Za-z0-9]{32,}$/);
    const me = await call(app.base, 'GET', '/me', { key: write.key });
    expect(me.status).to.equal(200);
    expect(me.body).to.deep.equal({
      workspace_id: ws.id,
      workspace_name: 'CLI workspace',
      plan: 'sandbox',
      key_scope: 'write',
      generations_used: 0,
      generations_allowance: 5,
      storageBytes: 0,
      storageLimitBytes: 1024 ** 3,
    });
    expect(
      (await call(app.base, 'POST', '/identities', { key: write.key, body: { externalId: 'cli' } })).status,
    ).to.equal(201);

    const past = new Date(Date.now() - 86_400_000).toISOString();
    const [setPlan, pastDue] = await Promise.all([
      cli(['workspace', 'set-plan', ws.id, 'build']),
      cli(['workspace', 'billing', ws.id, '--past-due', '--grace-until', past]),
    ]);
    ok(setPlan, 'set-plan');
    ok(pastDue, 'billing --past-due');
    const blocked = await call(app.base, 'GET', '/me', { key: write.key });
    expect(blocked.status).to.equal(402);
    expect(blocked.body.error).to.equal('plan_required');

    ok(await cli(['workspace', 'billing', ws.id, '--paid']), 'billing --paid');
    const paid = await call(app.base, 'GET', '/me', { key: write.key });
    expect(paid.status, 'paid: service resumes at once').to.equal(200);
    expect(paid.body.plan, 'set-plan took effect').to.equal('build');

    ok(await cli(['key', 'revoke', write.id]), 'key revoke');
    const gone = await call(app.base, 'GET', '/me', { key: write.key });
    expect(gone.status).to.equal(401);
    expect(gone.body.error).to.equal('unauthorized');
  });

  it('migrate creates a brand-new database and applies every migration; a second run has nothing to do', async () => {
    const [first, second] = await result(independent.migrate);
    ok(first, 'migrate');
    expect(first.stdout).to.match(/created database/);
    expect(first.stdout).to.match(/applied .*Migration/);
    const client = new pg.Client({ connectionString: freshDb() });
    await client.connect();
    try {
      const tables = await client.query(
        `select table_name from information_schema.tables where table_schema = 'public'`,
      );
      expect(tables.rows.map((r: { table_name: string }) => r.table_name)).to.include.members([
        'workspaces',
        'api_keys',
        'identities',
        'outbox_events',
        'usage_counters',
        'lectern_migrations',
      ]);
    } finally {
      await client.end();
    }
    ok(second, 'second migrate');
    expect(second.stdout).to.match(/up to date/);
  });

  it('a bad variable exits non-zero with one message naming every bad variable', async () => {
    const bad = await result(independent.badEnv);
    expect(bad.code, bad.stderr).to.equal(78);
    for (const v of ['PORT', 'RATE_LIMIT_PER_MINUTE', 'BUS_PREFIX']) expect(bad.stderr).to.include(v);
    expect(bad.stderr).to.include('"abc"');
    expect(bad.stdout, 'nothing started').to.equal('');
  });

  it('a command checks only the variables it reads', async () => {
    const made = ok(await result(independent.unreadBadEnv), 'workspace create with a bad PORT');
    expect(json<{ name: string }>(made)).to.include({ name: 'Unread variables' });
  });

  it('doctor exits 0 with one ok line per dependency on a healthy machine', async () => {
    const doctor = ok(await result(independent.doctor), 'doctor');
    const lines = doctor.stdout.trim().split('\n');
    expect(lines.length).to.be.at.least(4);
    for (const line of lines) expect(line, line).to.match(/^ok\s/);
    expect(doctor.stdout).to.match(/postgres/);
    expect(doctor.stdout).to.match(/nats/);
    expect(doctor.stdout).to.match(/object store/);
    // No model provider in the test environment: the generation worker can start, and doctor says what to set.
    expect(doctor.stdout).to.match(
      /generation worker: can start; but AI generation has no model provider: set GENERATION_BASE_URL and GENERATION_MODEL/,
    );
  });
});
