import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import tls from 'node:tls';
import { SOCKETS_PER_ORIGIN, closeDeliveryAgents, deliverOnce, parseRetryAfter } from '@lectern/webhooks';
import { generateSigningSecret } from '@lectern/webhooks';
import { signatureHeaders } from '@lectern/webhooks';
import type { ResolvedAddress } from '@lectern/outbound';
import { waitFor } from '../../support/http.js';

interface Received {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

interface TestServer {
  port: number;
  origin: string;
  received: Received[];
  connections: number;
  close(): Promise<void>;
}

async function listen(
  server: http.Server | https.Server,
  handler: (req: http.IncomingMessage, res: http.ServerResponse, body: string) => void,
): Promise<TestServer> {
  const state = { received: [] as Received[], connections: 0 };
  server.on('connection', () => state.connections++);
  server.on('request', (req: http.IncomingMessage, res: http.ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      state.received.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
      handler(req, res, body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    origin: `http://127.0.0.1:${port}`,
    received: state.received,
    get connections() {
      return state.connections;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

const startServer = (handler: (req: http.IncomingMessage, res: http.ServerResponse, body: string) => void) =>
  listen(http.createServer(), handler);

const resolveTo = (address: string) => async (): Promise<ResolvedAddress[]> => [{ address, family: 4 }];

describe('webhooks/deliverOnce', () => {
  const secret = generateSigningSecret();
  const body = JSON.stringify({
    id: 'evt_1',
    type: 'course.viewed',
    createdAt: '2025-01-01T00:00:00Z',
    workspaceId: 'w',
    data: {},
  });
  const headers = signatureHeaders({ secret, eventId: 'evt_1', eventType: 'course.viewed', body });
  const servers: TestServer[] = [];
  const track = (s: TestServer): TestServer => {
    servers.push(s);
    return s;
  };

  afterEach(async () => {
    closeDeliveryAgents();
    await Promise.all(servers.splice(0).map((s) => s.close()));
  });

  it('200 is delivered; the request carries the body and verifiable signatures', async () => {
    const s = track(await startServer((_req, res) => res.end('ok thanks')));
    const r = await deliverOnce({ url: `${s.origin}/hooks?x=1`, body, headers, allowPrivate: true });
    expect(r).to.include({
      statusCode: 200,
      error: null,
      outcome: 'delivered',
      responseBody: 'ok thanks',
      retryAfterSec: null,
    });
    expect(r.durationMs).to.be.a('number').and.to.be.below(5000);
    expect(s.received).to.have.length(1);
    const got = s.received[0];
    expect(got.method).to.equal('POST');
    expect(got.url).to.equal('/hooks?x=1');
    expect(got.body).to.equal(body);
    expect(got.headers['content-type']).to.equal('application/json');
    expect(got.headers['content-length']).to.equal(String(Buffer.byteLength(body)));
    expect(got.headers['user-agent']).to.equal('Lectern-Webhooks/1.0 (+https://lectern.dev/docs/webhooks)');
    expect(got.headers['x-service-event']).to.equal('course.viewed');
    expect(got.headers['x-service-delivery']).to.equal('evt_1');
    expect(got.headers['webhook-id']).to.equal('evt_1');
    // Independent verification of what arrived on the wire.
    const hex = createHmac('sha256', secret).update(got.body).digest('hex');
    expect(got.headers['x-service-signature']).to.equal(`sha256=${hex}`);
    const ts = String(got.headers['webhook-timestamp']);
    const key = Buffer.from(secret.slice('whsec_'.length), 'base64');
    const b64 = createHmac('sha256', key).update(`evt_1.${ts}.${got.body}`).digest('base64');
    expect(got.headers['webhook-signature']).to.equal(`v1,${b64}`);
  });

  it('500 is a retry and records only the first 2 KB of the body', async () => {
    const big = 'A'.repeat(1000) + 'B'.repeat(1048) + 'C'.repeat(100_000);
    const s = track(
      await startServer((_req, res) => {
        res.writeHead(500, { 'content-type': 'text/plain' });
        res.end(big);
      }),
    );
    const r = await deliverOnce({ url: s.origin, body, headers, allowPrivate: true });
    expect(r).to.include({ statusCode: 500, outcome: 'retry', error: 'HTTP 500', retryAfterSec: null });
    expect(r.responseBody).to.have.length(2048);
    expect(r.responseBody).to.equal(big.slice(0, 2048));
    expect(r.responseBody).not.to.contain('C');
  });

  it('does not split a multi-byte character at the 2 KB cut', async () => {
    const text = 'x'.repeat(2047) + 'é'.repeat(10);
    const s = track(await startServer((_req, res) => res.writeHead(400).end(text)));
    const r = await deliverOnce({ url: s.origin, body, headers, allowPrivate: true });
    expect(r.responseBody).to.equal('x'.repeat(2047));
  });

  it('410 is a failure like any other non-2xx (SPEC Retries 2), to be retried', async () => {
    const s = track(await startServer((_req, res) => res.writeHead(410).end('endpoint removed')));
    const r = await deliverOnce({ url: s.origin, body, headers, allowPrivate: true });
    expect(r).to.include({
      statusCode: 410,
      outcome: 'retry',
      error: 'HTTP 410',
      responseBody: 'endpoint removed',
    });
  });

  it('302 is a failure and the redirect is not followed', async () => {
    const target = track(await startServer((_req, res) => res.end('should not be reached')));
    const s = track(
      await startServer((_req, res) => res.writeHead(302, { location: `${target.origin}/elsewhere` }).end()),
    );
    const r = await deliverOnce({ url: s.origin, body, headers, allowPrivate: true });
    expect(r).to.include({ statusCode: 302, outcome: 'retry' });
    expect(r.error).to.match(/redirect not followed/);
    expect(target.received).to.have.length(0);
  });

  it('reads Retry-After on 429 (seconds) and 503 (HTTP date) only', async () => {
    const s429 = track(await startServer((_req, res) => res.writeHead(429, { 'retry-after': '120' }).end()));
    const r1 = await deliverOnce({ url: s429.origin, body, headers, allowPrivate: true });
    expect(r1).to.include({ statusCode: 429, outcome: 'retry', retryAfterSec: 120 });

    const date = new Date(Date.now() + 90_000).toUTCString();
    const s503 = track(await startServer((_req, res) => res.writeHead(503, { 'retry-after': date }).end()));
    const r2 = await deliverOnce({ url: s503.origin, body, headers, allowPrivate: true });
    expect(r2.retryAfterSec).to.be.within(85, 91);

    const s500 = track(await startServer((_req, res) => res.writeHead(500, { 'retry-after': '120' }).end()));
    const r3 = await deliverOnce({ url: s500.origin, body, headers, allowPrivate: true });
    expect(r3.retryAfterSec).to.equal(null);
  });

  it('parseRetryAfter handles seconds, dates and garbage', () => {
    const now = Date.parse('2025-01-01T00:00:00Z');
    expect(parseRetryAfter('30', now)).to.equal(30);
    expect(parseRetryAfter('Wed, 01 Jan 2025 00:01:00 GMT', now)).to.equal(60);
    expect(parseRetryAfter('Tue, 31 Dec 2024 00:00:00 GMT', now)).to.equal(0);
    expect(parseRetryAfter('soon', now)).to.equal(null);
    expect(parseRetryAfter(undefined, now)).to.equal(null);
  });

  it('cuts a server that never answers at the deadline', async () => {
    const s = track(await startServer(() => undefined));
    const r = await deliverOnce({ url: s.origin, body, headers, allowPrivate: true, timeoutMs: 300 });
    expect(r).to.include({ statusCode: null, outcome: 'retry', error: 'timeout after 300 ms' });
    expect(r.durationMs).to.be.within(280, 1500);
  });

  it('the deadline covers the response body too', async () => {
    const s = track(
      await startServer((_req, res) => {
        res.writeHead(200);
        res.write('partial');
      }),
    );
    const r = await deliverOnce({ url: s.origin, body, headers, allowPrivate: true, timeoutMs: 300 });
    expect(r).to.include({ statusCode: 200, outcome: 'retry', error: 'timeout after 300 ms' });
    expect(r.durationMs).to.be.within(280, 1500);
  });

  it('a 2xx whose body is cut off is a retry, not a delivery', async () => {
    const s = track(
      await startServer((_req, res) => {
        res.writeHead(200, { 'content-length': '100' });
        res.write('partial', () => res.socket?.destroy());
      }),
    );
    const r = await deliverOnce({ url: s.origin, body, headers, allowPrivate: true });
    expect(r).to.include({
      statusCode: 200,
      outcome: 'retry',
      error: 'response aborted before the body was complete',
    });
  });

  it('closes the connection past the 2 KB it keeps rather than reading the rest', async () => {
    let closed = false;
    const s = track(
      await startServer((_req, res) => {
        res.socket?.on('close', () => (closed = true));
        res.writeHead(500, { 'content-type': 'text/plain' });
        res.write('x'.repeat(64 * 1024)); // never ended: only a closed connection settles the attempt
      }),
    );
    const r = await deliverOnce({ url: s.origin, body, headers, allowPrivate: true, timeoutMs: 3000 });
    expect(r).to.include({ statusCode: 500, outcome: 'retry', error: 'HTTP 500' });
    expect(r.durationMs).to.be.below(2000);
    await waitFor(() => closed || null, { timeoutMs: 2000, what: 'the connection closed' });
  });

  it('reports a refused connection', async () => {
    const s = await startServer(() => undefined);
    const { origin } = s;
    await s.close();
    const r = await deliverOnce({ url: origin, body, headers, allowPrivate: true });
    expect(r).to.include({ statusCode: null, outcome: 'retry', error: 'ECONNREFUSED' });
  });

  it('refuses a private literal address without allowPrivate, before connecting', async () => {
    const s = track(await startServer((_req, res) => res.end()));
    const r = await deliverOnce({ url: s.origin, body, headers, allowPrivate: false });
    expect(r).to.include({ statusCode: null, outcome: 'retry', error: 'refused: private address 127.0.0.1' });
    expect(s.connections).to.equal(0);
    const r2 = await deliverOnce({ url: `http://0x7f.1:${s.port}/`, body, headers, allowPrivate: false });
    expect(r2.error).to.equal('refused: private address 127.0.0.1');
    const r3 = await deliverOnce({ url: `http://localhost:${s.port}/`, body, headers, allowPrivate: false });
    expect(r3.error).to.equal('refused: forbidden host name localhost');
    expect(s.connections).to.equal(0);
  });

  it('refuses a host name that resolves to 127.0.0.1 at delivery time', async () => {
    const s = track(await startServer((_req, res) => res.end()));
    const r = await deliverOnce({
      url: `http://hooks.example.test:${s.port}/`,
      body,
      headers,
      allowPrivate: false,
      lookup: resolveTo('127.0.0.1'),
    });
    expect(r).to.include({ outcome: 'retry', error: 'refused: private address 127.0.0.1', statusCode: null });
    expect(s.connections).to.equal(0);
  });

  it('connects to the pinned address with the original Host header, resolving once (no rebinding)', async () => {
    const s = track(await startServer((_req, res) => res.end('pinned')));
    let calls = 0;
    const rebinding = async (): Promise<ResolvedAddress[]> => {
      calls++;
      // First answer is the checked one; any later lookup would point somewhere else entirely.
      return [{ address: calls === 1 ? '127.0.0.1' : '10.255.255.1', family: 4 }];
    };
    const r = await deliverOnce({
      url: `http://hooks.example.test:${s.port}/in`,
      body,
      headers,
      allowPrivate: true,
      lookup: rebinding,
      keepAlive: false,
    });
    expect(r).to.include({ outcome: 'delivered', responseBody: 'pinned' });
    expect(calls).to.equal(1);
    expect(s.received[0].headers.host).to.equal(`hooks.example.test:${s.port}`);
  });

  it('reuses keep-alive connections per origin', async () => {
    const s = track(await startServer((_req, res) => res.end('ok')));
    for (let i = 0; i < 10; i++) {
      const r = await deliverOnce({ url: s.origin, body, headers, allowPrivate: true });
      expect(r.outcome).to.equal('delivered');
    }
    expect(s.received).to.have.length(10);
    // The next request may be dispatched while the previous one's connection is still being handed back to the
    // pool, so a second connection can open; never one per request.
    expect(s.connections).to.be.within(1, 2);
  });

  it(`opens at most ${SOCKETS_PER_ORIGIN} connections to one origin; more requests wait for one`, async () => {
    const s = track(await startServer((_req, res) => setTimeout(() => res.end('ok'), 30)));
    const results = await Promise.all(
      Array.from({ length: SOCKETS_PER_ORIGIN * 3 }, () =>
        deliverOnce({ url: s.origin, body, headers, allowPrivate: true }),
      ),
    );
    expect(results.every((r) => r.outcome === 'delivered')).to.equal(true);
    expect(s.received).to.have.length(SOCKETS_PER_ORIGIN * 3);
    expect(s.connections).to.equal(SOCKETS_PER_ORIGIN);
  });

  it('a request still waiting for a connection when its deadline passes is never sent', async () => {
    const s = track(await startServer((_req, res) => setTimeout(() => res.end('ok'), 400)));
    // Every connection of the origin busy for 400 ms; one more request with a 150 ms deadline waits behind them.
    const busy = Array.from({ length: SOCKETS_PER_ORIGIN }, () =>
      deliverOnce({ url: s.origin, body, headers, allowPrivate: true }),
    );
    const late = await deliverOnce({ url: s.origin, body, headers, allowPrivate: true, timeoutMs: 150 });
    expect(late).to.include({ outcome: 'retry', error: 'timeout after 150 ms', statusCode: null });
    expect((await Promise.all(busy)).every((r) => r.outcome === 'delivered')).to.equal(true);
    // A connection came free after the deadline: the timed-out request must not go out on it.
    await new Promise((r) => setTimeout(r, 300));
    expect(s.received).to.have.length(SOCKETS_PER_ORIGIN);
  });

  it('keeps the pinned lookup on pooled connections for a host name', async () => {
    const s = track(await startServer((_req, res) => res.end('ok')));
    let calls = 0;
    const lookup = async (): Promise<ResolvedAddress[]> => {
      calls++;
      return [{ address: '127.0.0.1', family: 4 }];
    };
    for (let i = 0; i < 6; i++) {
      const r = await deliverOnce({
        url: `http://hooks.example.test:${s.port}/`,
        body,
        headers,
        allowPrivate: true,
        lookup,
      });
      expect(r.outcome).to.equal('delivered');
    }
    expect(calls).to.equal(6);
    expect(s.connections).to.be.within(1, 2);
    expect(s.received.map((x) => x.headers.host)).to.deep.equal(
      Array(6).fill(`hooks.example.test:${s.port}`),
    );
  });

  it('never throws on bad input', async () => {
    const r1 = await deliverOnce({ url: 'not a url', body, headers, allowPrivate: true });
    expect(r1).to.include({ outcome: 'retry', error: 'refused: invalid URL', statusCode: null });
    const s = track(await startServer((_req, res) => res.end()));
    const r2 = await deliverOnce({ url: s.origin, body, headers: { 'X-Bad': 'a\nb' }, allowPrivate: true });
    expect(r2.outcome).to.equal('retry');
    expect(r2.error).to.be.a('string');
  });

  describe('https', () => {
    let dir = '';
    let key: Buffer | undefined;
    let cert: Buffer | undefined;

    before(function () {
      try {
        dir = mkdtempSync(join(tmpdir(), 'lectern-webhooks-'));
        execFileSync(
          'openssl',
          [
            'req',
            '-x509',
            '-newkey',
            'rsa:2048',
            '-nodes',
            '-days',
            '1',
            '-subj',
            '/CN=hooks.example.test',
            '-keyout',
            join(dir, 'key.pem'),
            '-out',
            join(dir, 'cert.pem'),
          ],
          { stdio: 'ignore' },
        );
        key = readFileSync(join(dir, 'key.pem'));
        cert = readFileSync(join(dir, 'cert.pem'));
      } catch {
        this.skip();
      }
    });
    after(() => {
      if (dir) rmSync(dir, { recursive: true, force: true });
    });

    it('sends SNI for the original host name and verifies the certificate', async () => {
      const sni: string[] = [];
      const context = tls.createSecureContext({ key, cert });
      const server = https.createServer({
        key,
        cert,
        SNICallback: (name, cb) => {
          sni.push(name);
          cb(null, context);
        },
      });
      const s = track(await listen(server, (_req, res) => res.end('tls ok')));
      const r = await deliverOnce({
        url: `https://hooks.example.test:${s.port}/`,
        body,
        headers,
        allowPrivate: true,
        lookup: resolveTo('127.0.0.1'),
      });
      expect(sni).to.deep.equal(['hooks.example.test']);
      // Self-signed: the client must refuse it (certificate verification is on) and never send the request.
      expect(r.outcome).to.equal('retry');
      expect(r.error).to.match(/SELF_SIGNED|CERT/);
      expect(s.received).to.have.length(0);
    });
  });
});
