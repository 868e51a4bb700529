import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import { z } from 'zod';
import {
  makeWorkspace,
  startTestApp,
  testRuntime,
  type TestApp,
  type TestRuntime,
} from '../support/context.js';
import { call, waitFor } from '../support/http.js';
import { startAppBehindNatsProxy } from '../support/spine.js';
import { runConsumer, type ConsumerSpec } from '@lectern/bus';
import { closeRuntime, startWorkerHttp, type WorkerHttp } from '@lectern/runtime';

/** The value of one sample in Prometheus text, e.g. sample(text, 'lectern_rate_limited_total'). */
function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const line of text.split('\n')) {
    if (line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const got = Object.fromEntries(
      [...(m[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((l) => [l[1], l[2]]),
    );
    if (Object.entries(labels).every(([k, v]) => got[k] === v)) return Number(m[3]);
  }
  return undefined;
}

const TOKEN = 'metrics-token-0123456789abcdef';

describe('metrics: Prometheus /metrics, worker probes', () => {
  describe('the API', () => {
    let app: TestApp;
    before(async () => {
      app = await startTestApp({ RATE_LIMIT_PER_MINUTE: '3' });
    });
    after(async () => app?.close());

    it('serves Prometheus text with process metrics, without a key when METRICS_TOKEN is unset', async () => {
      const res = await call(app.url, 'GET', '/metrics');
      expect(res.status).to.equal(200);
      expect(res.headers.get('content-type')).to.match(/^text\/plain; version=0\.0\.4/);
      expect(res.text).to.include('# TYPE lectern_http_requests_total counter');
      expect(res.text).to.include('# TYPE lectern_http_request_duration_seconds histogram');
      expect(sample(res.text, 'lectern_process_cpu_user_seconds_total')).to.be.a('number');
      expect(sample(res.text, 'lectern_nodejs_eventloop_lag_seconds')).to.be.a('number');
    });

    it('counts requests by route template, never by raw path', async () => {
      const ws = await makeWorkspace(app.rt.orm.em.fork(), 'build', 'Metrics');
      const rawId = `idn_${randomBytes(8).toString('hex')}`;
      const res = await call(app.base, 'GET', `/identities/${rawId}`, { key: ws.readKey });
      expect(res.status).to.equal(404);
      const route = { method: 'GET', route: '/api/v1/identities/:id', status: String(res.status) };
      const anonymous = await call(app.base, 'GET', `/identities/${rawId}`);
      expect(anonymous.status).to.equal(401);
      const unmatched = await call(app.url, 'GET', `/no/such/${rawId}`);
      expect(unmatched.status).to.equal(404);

      const text = (await call(app.url, 'GET', '/metrics')).text;
      expect(sample(text, 'lectern_http_requests_total', route)).to.equal(1);
      expect(
        sample(text, 'lectern_http_request_duration_seconds_count', { method: 'GET', route: route.route }),
      ).to.equal(2);
      expect(
        sample(text, 'lectern_http_requests_total', { method: 'GET', route: 'unmatched', status: '404' }),
      ).to.be.at.least(1);
      // Refused by the router-level auth before the route ran: still labelled with the route's template.
      expect(sample(text, 'lectern_http_requests_total', { ...route, status: '401' })).to.equal(1);
      expect(text).not.to.include(rawId);

      // The scrape before this one is counted too, under its template.
      const again = (await call(app.url, 'GET', '/metrics')).text;
      expect(
        sample(again, 'lectern_http_requests_total', { method: 'GET', route: '/metrics', status: '200' }),
      ).to.be.at.least(2);
    });

    it('counts requests refused by the rate limit', async () => {
      const ws = await makeWorkspace(app.rt.orm.em.fork(), 'build', 'Metrics rate');
      const statuses: number[] = [];
      for (let i = 0; i < 5; i++) statuses.push((await call(app.base, 'GET', '/me', { key: ws.key })).status);
      expect(statuses.filter((s) => s === 429).length).to.equal(2);
      const text = (await call(app.url, 'GET', '/metrics')).text;
      expect(sample(text, 'lectern_rate_limited_total')).to.be.at.least(2);
      expect(
        sample(text, 'lectern_http_requests_total', { method: 'GET', route: '/api/v1/me', status: '429' }),
      ).to.equal(2);
    });

    it('is documented in OpenAPI as a public text/plain operation', async () => {
      const doc = (
        await call<{ paths: Record<string, Record<string, Record<string, unknown>>> }>(
          app.base,
          'GET',
          '/openapi.json',
        )
      ).body;
      const op = doc.paths['/metrics'].get as {
        security: unknown[];
        responses: Record<string, { content?: object }>;
      };
      expect(op.security).to.deep.equal([]);
      expect(op.responses['200'].content).to.have.property('text/plain');
      expect(op.responses).to.have.property('401');
    });
  });

  describe('METRICS_TOKEN', () => {
    let app: TestApp;
    before(async () => {
      app = await startTestApp({ METRICS_TOKEN: TOKEN });
    });
    after(async () => app?.close());

    it('is required as a Bearer token when set (401 JSON otherwise)', async () => {
      const none = await call(app.url, 'GET', '/metrics');
      expect(none.status).to.equal(401);
      expect(none.headers.get('content-type')).to.match(/^application\/json/);
      expect(none.body).to.include({ error: 'unauthorized' });
      expect(none.text).not.to.include('lectern_');
      const wrong = await call(app.url, 'GET', '/metrics', {
        headers: { authorization: `Bearer ${TOKEN}x` },
      });
      expect(wrong.status).to.equal(401);
      const ok = await call(app.url, 'GET', '/metrics', { headers: { authorization: `Bearer ${TOKEN}` } });
      expect(ok.status).to.equal(200);
      expect(ok.text).to.include('lectern_http_requests_total');
      // The auth scheme is case-insensitive (RFC 9110 11.1), as Prometheus and proxies may spell it.
      for (const scheme of ['bearer', 'BEARER']) {
        const spelled = await call(app.url, 'GET', '/metrics', {
          headers: { authorization: `${scheme} ${TOKEN}` },
        });
        expect(spelled.status, scheme).to.equal(200);
      }
      // Health stays open.
      expect((await call(app.url, 'GET', '/healthz')).status).to.equal(200);
    });
  });

  describe('the worker HTTP server', () => {
    let rt: TestRuntime;
    let srv: WorkerHttp;
    let locked: WorkerHttp;
    before(async () => {
      rt = await testRuntime('metrics-worker');
      // What the webhook worker hands its probe server: no object store, so /readyz checks PostgreSQL and NATS.
      const deps = { orm: rt.orm, bus: rt.bus, log: rt.log, metrics: rt.metrics };
      srv = await startWorkerHttp(deps, { port: 0, host: '127.0.0.1' });
      locked = await startWorkerHttp(deps, { port: 0, host: '127.0.0.1', metricsToken: TOKEN });
    });
    after(async () => {
      await srv?.close();
      await locked?.close();
      if (rt) await closeRuntime(rt, { keepStorage: true });
    });

    it('a worker that holds the object store (the csv worker) has /readyz check it too', async () => {
      const withStore = await startWorkerHttp(rt, { port: 0, host: '127.0.0.1' });
      try {
        const ready = await call(withStore.url, 'GET', '/readyz');
        expect(ready.status).to.equal(200);
        expect(ready.body).to.deep.equal({
          data: { status: 'ready', checks: { postgres: 'ok', nats: 'ok', objectStore: 'ok' } },
        });
      } finally {
        await withStore.close();
      }
    });

    it('answers /healthz and /readyz (PostgreSQL, NATS)', async () => {
      const health = await call(srv.url, 'GET', '/healthz');
      expect(health.status).to.equal(200);
      expect(health.body).to.deep.equal({ data: { status: 'ok' } });
      const ready = await call(srv.url, 'GET', '/readyz');
      expect(ready.status).to.equal(200);
      expect(ready.body).to.deep.equal({ data: { status: 'ready', checks: { postgres: 'ok', nats: 'ok' } } });
      expect((await call(srv.url, 'GET', '/nope')).status).to.equal(404);
      expect((await call(srv.url, 'POST', '/healthz')).status).to.equal(405);
    });

    it('serves /metrics with consumer outcomes counted by runConsumer', async () => {
      const token = `m${randomBytes(4).toString('hex')}`;
      const spec: ConsumerSpec = {
        stream: 'JOBS',
        app: `metrics-${token}`,
        filter: ['jobs', 'test', token, '>'],
        ackWaitMs: 2000,
        maxDeliver: 1,
      };
      let handled = 0;
      const handle = await runConsumer({
        bus: rt.bus,
        spec,
        schema: z.object({ n: z.number() }),
        log: rt.log,
        onMessage: rt.metrics?.consumerMessage,
        handler: async ({ n }) => {
          handled++;
          if (n < 0) throw new Error('refused');
        },
      });
      try {
        const subject = rt.bus.names.subject('jobs', 'test', token, 'run');
        await rt.bus.js.publish(subject, JSON.stringify({ n: 1 }));
        await rt.bus.js.publish(subject, 'not json');
        await rt.bus.js.publish(subject, JSON.stringify({ n: -1 }));
        await waitFor(() => handled === 2, { what: 'two handled messages' });
        const labels = (outcome: string) => ({ consumer: spec.app, outcome });
        const text = await waitFor(async () => {
          const t = (await call(srv.url, 'GET', '/metrics')).text;
          return sample(t, 'lectern_consumer_messages_total', labels('term')) === 2 ? t : null;
        });
        expect(sample(text, 'lectern_consumer_messages_total', labels('ack'))).to.equal(1);
        expect(text).to.include('# TYPE lectern_jobs_total counter');
        expect(text).to.include('# TYPE lectern_webhook_attempts_total counter');
        expect(text).to.include('# TYPE lectern_webhook_attempt_duration_seconds histogram');
        expect(sample(text, 'lectern_process_resident_memory_bytes')).to.be.a('number');
      } finally {
        await handle.stop();
        await rt.bus.jsm.consumers.delete(rt.bus.names.stream('JOBS'), rt.bus.names.durable(spec.app));
      }
    });

    it('requires the Bearer token on /metrics when METRICS_TOKEN is set, not on the probes', async () => {
      const none = await call(locked.url, 'GET', '/metrics');
      expect(none.status).to.equal(401);
      expect(none.body).to.include({ error: 'unauthorized' });
      const ok = await call(locked.url, 'GET', '/metrics', { headers: { authorization: `Bearer ${TOKEN}` } });
      expect(ok.status).to.equal(200);
      expect(ok.headers.get('content-type')).to.match(/^text\/plain/);
      expect((await call(locked.url, 'GET', '/healthz')).status).to.equal(200);
      expect((await call(locked.url, 'GET', '/readyz')).status).to.equal(200);
    });
  });

  describe('the outbox backlog gauge', () => {
    // Its own app, with NATS behind a proxy it can cut: no other relay runs on the database meanwhile.
    it('reports the unpublished outbox backlog, read on scrape: +3 events while NATS is cut, 0 once it heals', async () => {
      const { app, proxy, close } = await startAppBehindNatsProxy();
      try {
        const ws = await makeWorkspace(app.rt.orm.em.fork(), 'build', 'Metrics backlog');
        const backlog = async () =>
          sample((await call(app.url, 'GET', '/metrics')).text, 'lectern_outbox_unpublished');
        await waitFor(async () => (await backlog()) === 0, { what: 'an empty outbox' });
        proxy.cut();
        for (let i = 0; i < 3; i++) {
          const res = await call(app.base, 'POST', '/identities', {
            key: ws.key,
            body: { externalId: `backlog-${i}` },
          });
          expect(res.status).to.equal(201);
        }
        expect(await backlog()).to.equal(3);
        proxy.restore();
        await waitFor(async () => (await backlog()) === 0, {
          what: 'the relay to drain the outbox',
          timeoutMs: 20_000,
        });
      } finally {
        await close();
      }
    });
  });
});
