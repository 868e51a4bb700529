import { expect } from 'chai';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import {
  makeWorkspace,
  startTestApp,
  testConfig,
  type TestApp,
  type TestWorkspace,
} from '../support/context.js';
import { fontDir } from '../support/certificates.js';
import { waitFor } from '../support/http.js';
import { csvText, importCsv } from '../support/csv.js';
import { REPO_ROOT, envFor, runTs } from '../support/spine.js';

const CLI = 'apps/cli/src/main.ts';

interface Ready {
  data?: { status: string; checks: Record<string, string>; kinds?: Record<string, Kind> };
  error?: string;
  message?: string;
  status?: string;
  checks?: Record<string, string>;
  kinds?: Record<string, Kind>;
}
interface Kind {
  ready: boolean;
  problem?: string;
  warnings?: string[];
}

/** A port nothing listens on now (the child binds it a moment later). */
async function freePort(): Promise<number> {
  const srv = net.createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', () => r()));
  const { port } = srv.address() as net.AddressInfo;
  await new Promise<void>((r) => srv.close(() => r()));
  return port;
}

/** `lectern <args>` as its own OS process on this run's database, bus and store, left running. */
class Cli {
  readonly child: ChildProcess;
  stdout = '';
  stderr = '';
  constructor(args: string[], overrides: Record<string, string>) {
    this.child = spawn(process.execPath, ['--import', 'tsx', CLI, ...args], {
      cwd: REPO_ROOT,
      env: envFor(testConfig(), overrides),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.child.stdout!.on('data', (d: Buffer) => (this.stdout += d.toString()));
    this.child.stderr!.on('data', (d: Buffer) => (this.stderr += d.toString()));
  }
  get output(): string {
    return `exit ${this.child.exitCode}\n${this.stdout}\n${this.stderr}`;
  }
  /** GET `url` once the process answers there (it is still starting until then). */
  async get<T>(url: string): Promise<{ status: number; body: T }> {
    return waitFor(
      async () => {
        if (this.child.exitCode !== null) throw new Error(`exited early: ${this.output}`);
        const res = await fetch(url).catch(() => null);
        return res && { status: res.status, body: (await res.json()) as T };
      },
      { timeoutMs: 40_000, intervalMs: 200, what: `${url} to answer` },
    );
  }
  /** SIGTERM, as an orchestrator stops it; resolves with the exit code. */
  async stop(): Promise<number | null> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return this.child.exitCode;
    this.child.kill('SIGTERM');
    const [code] = (await once(this.child, 'exit')) as [number | null];
    return code;
  }
}

describe('the worker host: lectern worker <kind…>, and lectern start with a kind that cannot start', function () {
  this.timeout(90_000);
  let app: TestApp;
  let ws: TestWorkspace;
  let emptyFonts: string;
  const running: Cli[] = [];
  const start = (args: string[], overrides: Record<string, string>) => {
    const cli = new Cli(args, overrides);
    running.push(cli);
    return cli;
  };

  before(async () => {
    app = await startTestApp({ RATE_LIMIT_PER_MINUTE: '100000', CSV_IMPORT_TIMEOUT_MS: '30000' });
    ws = await makeWorkspace(app.rt.orm.em.fork(), 'scale', 'Worker host');
    emptyFonts = await mkdtemp(path.join(os.tmpdir(), 'lectern-no-fonts-'));
  });
  after(async () => {
    await Promise.all(running.map((c) => c.stop()));
    await app?.close();
  });

  const csv = () =>
    csvText([
      ['screen', 'type', 'text', 'options', 'correct', 'explanation'],
      ['Welcome', 'heading', 'Hello', '', '', ''],
    ]);

  it('runs two kinds in one process: /readyz reports both, and each serves', async () => {
    const port = await freePort();
    const cli = start(['worker', 'webhook', 'csv'], { WORKER_HTTP_PORT: String(port) });
    const ready = await cli.get<Ready>(`http://127.0.0.1:${port}/readyz`);
    expect(ready.status, cli.output).to.equal(200);
    expect(ready.body.data).to.deep.equal({
      status: 'ready',
      // The csv kind reads uploads, so the host opened the object store and checks it.
      checks: { postgres: 'ok', nats: 'ok', objectStore: 'ok' },
      kinds: { webhook: { ready: true }, csv: { ready: true } },
    });
    const res = await importCsv(app.base, ws.key, csv(), { title: 'Two kinds' });
    expect(res.status, `${res.text}\n${cli.output}`).to.equal(201);
    expect(await cli.stop(), cli.output).to.equal(0);
  });

  it('LECTERN_WORKERS: a kind that cannot start is unready with the fix; the other kind still serves', async () => {
    const port = await freePort();
    const cli = start(['worker'], {
      LECTERN_WORKERS: 'csv,certificate',
      CERTIFICATE_FONT_DIR: emptyFonts,
      WORKER_HTTP_PORT: String(port),
      LOG_LEVEL: 'error',
    });
    const ready = await cli.get<Ready>(`http://127.0.0.1:${port}/readyz`);
    expect(ready.status, cli.output).to.equal(503);
    expect(ready.body).to.include({ error: 'service_unavailable', status: 'unready' });
    expect(ready.body.message).to.include('certificate');
    expect(ready.body.checks).to.deep.equal({ postgres: 'ok', nats: 'ok', objectStore: 'ok' });
    expect(ready.body.kinds!.csv).to.deep.equal({ ready: true });
    expect(ready.body.kinds!.certificate.ready).to.equal(false);
    expect(ready.body.kinds!.certificate.problem).to.include(emptyFonts).and.to.include('apt-get install');
    // Alive, and saying so in its log.
    expect((await cli.get<unknown>(`http://127.0.0.1:${port}/healthz`)).status).to.equal(200);
    expect(cli.stdout).to.match(/worker kind \\"certificate\\" could not start: .*apt-get install/);

    const res = await importCsv(app.base, ws.key, csv(), { title: 'Still imported' });
    expect(res.status, `${res.text}\n${cli.output}`).to.equal(201);
    expect(await cli.stop(), cli.output).to.equal(0);
  });

  it('a certificate worker without the CJK fonts runs, ready, and names the missing package in /readyz and doctor', async () => {
    const latinOnly = await fontDir(emptyFonts, 'latin-only', ['latin', 'arabic', 'hebrew']);
    const port = await freePort();
    const cli = start(['worker', 'certificate'], {
      CERTIFICATE_FONT_DIR: latinOnly,
      WORKER_HTTP_PORT: String(port),
      LOG_LEVEL: 'warn',
    });
    const ready = await cli.get<Ready>(`http://127.0.0.1:${port}/readyz`);
    expect(ready.status, cli.output).to.equal(200);
    const kind = ready.body.data!.kinds!.certificate;
    expect(kind.ready).to.equal(true);
    expect(kind.warnings).to.have.length(1);
    expect(kind.warnings![0]).to.include('fonts-noto-cjk is not installed').and.include('answer 503');
    expect(await cli.stop(), cli.output).to.equal(0);
    expect(cli.output).to.include('apt-get install fonts-noto-cjk');

    const r = await runTs(CLI, ['doctor'], envFor(testConfig(), { CERTIFICATE_FONT_DIR: latinOnly }), 40_000);
    expect(r.stdout).to.match(/^ok +certificate worker: can start; but fonts-noto-cjk is not installed/m);
  });

  it('an unknown kind exits non-zero naming the known ones, before connecting to anything', async () => {
    const bad = await runTs(CLI, ['worker', 'csv', 'video', 'pdf'], envFor(testConfig()), 40_000);
    expect(bad.code, bad.stderr).to.equal(64);
    expect(bad.stderr).to.include('unknown worker kinds: video, pdf');
    expect(bad.stderr).to.include('webhook, csv, certificate, scorm');
    const env = await runTs(CLI, ['worker'], envFor(testConfig(), { LECTERN_WORKERS: 'csv,nope' }), 40_000);
    expect(env.code, env.stderr).to.equal(64);
    expect(env.stderr).to.include('unknown worker kind: nope');
    const none = await runTs(CLI, ['worker'], envFor(testConfig(), { LECTERN_WORKERS: '' }), 40_000);
    expect(none.code, none.stderr).to.equal(64);
    expect(none.stderr).to.include('LECTERN_WORKERS');
  });

  it("a bad variable of a chosen kind stops the host before it connects; another kind's is not read", async () => {
    const bad = await runTs(
      CLI,
      ['worker', 'scorm'],
      envFor(testConfig(), { SCORM_PACKAGE_MEDIA_MAX_BYTES: 'lots', NATS_URL: 'nats://127.0.0.1:1' }),
      40_000,
    );
    expect(bad.code, bad.stderr).to.equal(78);
    expect(bad.stderr).to.include('SCORM_PACKAGE_MEDIA_MAX_BYTES');
    const port = await freePort();
    const cli = start(['worker', 'csv'], {
      SCORM_PACKAGE_MEDIA_MAX_BYTES: 'lots',
      WORKER_HTTP_PORT: String(port),
    });
    const ready = await cli.get<Ready>(`http://127.0.0.1:${port}/readyz`);
    expect(ready.status, cli.output).to.equal(200);
    expect(ready.body.data!.kinds).to.deep.equal({ csv: { ready: true } });
    expect(await cli.stop(), cli.output).to.equal(0);
  });

  it('lectern doctor names a kind that cannot start, with the fix, and exits 1', async () => {
    const r = await runTs(
      CLI,
      ['doctor'],
      envFor(testConfig(), { CERTIFICATE_FONT_DIR: emptyFonts }),
      40_000,
    );
    expect(r.code, r.stdout).to.equal(1);
    expect(r.stdout).to.match(
      /^FAIL certificate worker: cannot start: certificate fonts missing: .*apt-get install/m,
    );
    for (const kind of ['webhook', 'csv', 'scorm'])
      expect(r.stdout).to.match(new RegExp(`^ok +${kind} worker`, 'm'));
    expect(r.stdout).to.match(/^ok +postgres/m);
  });

  it('lectern start without certificate fonts: the API answers, /readyz names the problem and the fix', async () => {
    const port = await freePort();
    const dataDir = await mkdtemp(path.join(os.tmpdir(), 'lectern-start-'));
    const cli = start(['start'], {
      PORT: String(port),
      PUBLIC_URL: `http://127.0.0.1:${port}`,
      DATA_DIR: dataDir,
      CERTIFICATE_FONT_DIR: emptyFonts,
    });
    const url = `http://127.0.0.1:${port}`;
    const ready = await cli.get<Ready>(`${url}/readyz`);
    expect(ready.status, cli.output).to.equal(503);
    expect(ready.body.checks).to.deep.equal({ postgres: 'ok', nats: 'ok', objectStore: 'ok' });
    expect(ready.body.kinds!.certificate.ready).to.equal(false);
    expect(ready.body.kinds!.certificate.problem).to.include('apt-get install');
    for (const kind of ['webhook', 'csv', 'scorm'])
      expect(ready.body.kinds![kind], kind).to.deep.equal({ ready: true });

    const key = await waitFor(() => /API key: +(\S+)/.exec(cli.stdout)?.[1], {
      timeoutMs: 10_000,
      what: 'the key',
    });
    expect(cli.stdout).to.match(/NOT RUNNING: +the certificate worker \(certificate fonts missing/);
    const me = await fetch(`${url}/api/v1/me`, { headers: { authorization: `Bearer ${key}` } });
    expect(me.status, cli.output).to.equal(200);
    expect(((await me.json()) as { plan: string }).plan).to.equal('scale');
    // The kinds that started serve: a CSV import goes through this process's csv worker.
    const imported = await importCsv(`${url}/api/v1`, key, csv(), { title: 'From start' });
    expect(imported.status, `${imported.text}\n${cli.output}`).to.equal(201);
    expect(await cli.stop(), cli.output).to.equal(0);
  });
});
