import { expect } from 'chai';
import {
  makeWorkspace,
  startTestApp,
  testConfig,
  type TestApp,
  type TestWorkspace,
} from '../support/context.js';
import { call, waitFor } from '../support/http.js';
import { TcpProxy } from '../support/tcp-proxy.js';

describe('spine: a PostgreSQL outage is a 503, never a crash, and heals by itself', () => {
  let proxy: TcpProxy;
  let app: TestApp;
  let ws: TestWorkspace;
  before(async () => {
    const db = new URL(testConfig().DATABASE_URL);
    proxy = await new TcpProxy({ host: db.hostname, port: Number(db.port || 5432) }).start();
    const proxied = new URL(db);
    proxied.hostname = '127.0.0.1';
    proxied.port = String(proxy.port);
    app = await startTestApp({ DATABASE_URL: proxied.toString() });
    ws = await makeWorkspace(app.rt.orm.em.fork(), 'build', 'DB outage');
  });
  after(async () => {
    proxy?.restore();
    await app?.close();
    await proxy?.close();
  });

  it('503 JSON while PostgreSQL is unreachable; requests succeed again after it returns', async function () {
    this.timeout(30_000);
    expect((await call(app.base, 'GET', '/me', { key: ws.key })).status).to.equal(200);

    proxy.cut();
    const started = Date.now();
    const me = await call(app.base, 'GET', '/me', { key: ws.key });
    expect(me.status, me.text).to.equal(503);
    expect(me.headers.get('content-type')).to.match(/^application\/json/);
    expect(me.body.error).to.equal('service_unavailable');
    expect(me.body.message).to.be.a('string');
    expect(Date.now() - started, 'fails fast, not after a long hang').to.be.lessThan(8000);

    const write = await call(app.base, 'POST', '/identities', {
      key: ws.key,
      body: { externalId: 'during-db-outage' },
    });
    expect(write.status).to.equal(503);

    // The process is up: liveness answers, readiness says what is wrong.
    expect((await call(app.url, 'GET', '/healthz')).status).to.equal(200);
    const ready = await call<{ checks: Record<string, string> }>(app.url, 'GET', '/readyz');
    expect(ready.status).to.equal(503);
    expect(ready.body.checks.postgres).to.not.equal('ok');
    expect(ready.body.checks.nats).to.equal('ok');

    proxy.restore();
    await waitFor(async () => (await call(app.base, 'GET', '/me', { key: ws.key })).status === 200, {
      timeoutMs: 15_000,
      what: 'GET /me to recover',
    });
    const after = await call(app.base, 'POST', '/identities', {
      key: ws.key,
      body: { externalId: 'after-db-outage' },
    });
    expect(after.status).to.equal(201);
    await waitFor(async () => (await call(app.url, 'GET', '/readyz')).status === 200, {
      timeoutMs: 10_000,
      what: '/readyz to recover',
    });
  });
});
