import { expect } from 'chai';
import type { TestApp } from '../support/context.js';
import { call, waitFor } from '../support/http.js';
import type { TcpProxy } from '../support/tcp-proxy.js';
import { startAppBehindNatsProxy } from '../support/spine.js';

interface Ready {
  data?: { status: string; checks: Record<string, string> };
  error?: string;
  checks?: Record<string, string>;
}

describe('spine: /healthz and /readyz', () => {
  let proxy: TcpProxy;
  let app: TestApp;
  let close: () => Promise<void>;
  before(async () => {
    ({ app, proxy, close } = await startAppBehindNatsProxy());
  });
  after(async () => close?.());

  it('/healthz answers 200 without a key', async () => {
    const res = await call(app.url, 'GET', '/healthz');
    expect(res.status).to.equal(200);
    expect(res.body).to.deep.equal({ data: { status: 'ok' } });
  });

  it('/readyz answers 200 with every check ok', async () => {
    const res = await call<Ready>(app.url, 'GET', '/readyz');
    expect(res.status, res.text).to.equal(200);
    expect(res.body.data!.checks).to.deep.equal({ postgres: 'ok', nats: 'ok', objectStore: 'ok' });
  });

  it('/readyz answers 503 promptly while NATS is unreachable, and 200 again after', async function () {
    this.timeout(20_000);
    proxy.cut();
    const started = Date.now();
    const res = await call<Ready>(app.url, 'GET', '/readyz');
    expect(Date.now() - started, 'does not hang').to.be.lessThan(5000);
    expect(res.status, res.text).to.equal(503);
    expect(res.body.error).to.equal('service_unavailable');
    expect(res.body.checks!.nats).to.not.equal('ok');
    expect(res.body.checks!.postgres).to.equal('ok');
    expect(res.body.checks!.objectStore).to.equal('ok');
    // Liveness is not readiness: the process is fine.
    expect((await call(app.url, 'GET', '/healthz')).status).to.equal(200);

    proxy.restore();
    await waitFor(async () => (await call(app.url, 'GET', '/readyz')).status === 200, {
      timeoutMs: 10_000,
      what: '/readyz to recover',
    });
  });
});
