/**
 * The client's transport rules against a loopback HTTP server scripted per test (the answers a proxy or an
 * overloaded service gives): 429 after Retry-After, one retry of 503/internal_error with the same
 * Idempotency-Key, no retry of other errors; and webhook signatures as the service signs them.
 */
import { expect } from 'chai';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { LecternClient, LecternError, retryAfterMs } from '@lectern/client';
import { verifyWebhook } from '@lectern/client/webhooks';
import { generateSigningSecret, signatureHeaders } from '@lectern/webhooks';

interface Seen {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
}

async function scripted(answers: { status: number; headers?: Record<string, string>; body: unknown }[]) {
  const seen: Seen[] = [];
  const server = http.createServer((req, res) => {
    seen.push({ method: req.method!, url: req.url!, headers: req.headers });
    const a = answers[Math.min(seen.length - 1, answers.length - 1)];
    res.writeHead(a.status, { 'content-type': 'application/json', ...(a.headers ?? {}) });
    res.end(JSON.stringify(a.body));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { url, seen, close: () => new Promise<void>((r) => server.close(() => r())) };
}

describe('client: transport rules', () => {
  it('retries a 429 after its Retry-After, then succeeds', async () => {
    const s = await scripted([
      { status: 429, headers: { 'retry-after': '0' }, body: { error: 'rate_limited', message: 'slow down' } },
      { status: 200, body: { data: [] } },
    ]);
    try {
      const client = new LecternClient({ baseUrl: `${s.url}/api/v1`, apiKey: 'lk_x' });
      expect(await client.listCourses()).to.deep.equal({ data: [] });
      expect(s.seen).to.have.length(2);
      expect(s.seen[0].headers.authorization).to.equal('Bearer lk_x');
      expect(s.seen[0].url).to.equal('/api/v1/courses');
    } finally {
      await s.close();
    }
  });

  it('gives up on 429 after maxRateLimitRetries, or at once when Retry-After is longer than allowed', async () => {
    const s = await scripted([
      { status: 429, headers: { 'retry-after': '0' }, body: { error: 'rate_limited', message: 'no' } },
    ]);
    try {
      const client = new LecternClient({ baseUrl: s.url, apiKey: 'k', maxRateLimitRetries: 2 });
      const err = await client.listCourses().catch((e) => e);
      expect((err as LecternError).code).to.equal('rate_limited');
      expect(s.seen).to.have.length(3);
    } finally {
      await s.close();
    }
    const long = await scripted([
      { status: 429, headers: { 'retry-after': '3600' }, body: { error: 'rate_limited', message: 'no' } },
    ]);
    try {
      const err = await new LecternClient({ baseUrl: long.url }).listCourses().catch((e) => e);
      expect((err as LecternError).status).to.equal(429);
      expect(long.seen).to.have.length(1);
    } finally {
      await long.close();
    }
  });

  it('retries a 503 or internal_error once with the same Idempotency-Key; other errors are not retried', async () => {
    const s = await scripted([
      { status: 503, headers: { 'retry-after': '0' }, body: { error: 'service_unavailable', message: 'db' } },
      { status: 201, body: { data: { id: 'crs_1' } } },
    ]);
    try {
      const out = await new LecternClient({ baseUrl: s.url }).createCourse({ body: { title: 't' } as never });
      expect(out).to.deep.equal({ data: { id: 'crs_1' } });
      expect(s.seen).to.have.length(2);
      const keys = s.seen.map((x) => x.headers['idempotency-key']);
      expect(keys[0]).to.be.a('string').and.equal(keys[1]);
    } finally {
      await s.close();
    }
    const twice = await scripted([{ status: 500, body: { error: 'internal_error', message: 'boom' } }]);
    try {
      const err = await new LecternClient({ baseUrl: twice.url })
        .createCourse({ body: {} as never, idempotencyKey: 'mine' })
        .catch((e) => e);
      expect((err as LecternError).code).to.equal('internal_error');
      expect(twice.seen.map((x) => x.headers['idempotency-key'])).to.deep.equal(['mine', 'mine']);
    } finally {
      await twice.close();
    }
    const notFound = await scripted([{ status: 404, body: { error: 'not_found', message: 'no' } }]);
    try {
      await new LecternClient({ baseUrl: notFound.url })
        .getCourse({ params: { id: 'x' } })
        .catch(() => undefined);
      expect(notFound.seen).to.have.length(1);
    } finally {
      await notFound.close();
    }
  });

  it('reads Retry-After as seconds or an HTTP date', () => {
    expect(retryAfterMs('2')).to.equal(2000);
    expect(retryAfterMs(new Date(10_000).toUTCString(), 4_000)).to.equal(6000);
    expect(retryAfterMs('soon')).to.equal(undefined);
    expect(retryAfterMs(null)).to.equal(undefined);
  });
});

describe('client: webhook signatures', () => {
  const secret = generateSigningSecret();
  const body = JSON.stringify({ id: 'evt_1', type: 'course.completed', data: { a: 1 } });
  const now = Date.now();
  const headers = signatureHeaders({
    secret,
    eventId: 'evt_1',
    eventType: 'course.completed',
    body,
    timestamp: Math.floor(now / 1000),
  });

  it('accepts what the service signs, by either scheme', () => {
    expect(verifyWebhook(secret, body, headers, { now })).to.equal(true);
    const { ['x-service-signature']: _, ...standardOnly } = Object.fromEntries(
      Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v]),
    );
    expect(verifyWebhook(secret, Buffer.from(body), standardOnly, { now })).to.equal(true);
    expect(verifyWebhook(secret, body, new Headers(headers), { now })).to.equal(true);
  });

  it('refuses another body, another secret, and a replay outside the tolerance', () => {
    expect(verifyWebhook(secret, body.replace('1}', '2}'), headers, { now })).to.equal(false);
    expect(verifyWebhook(generateSigningSecret(), body, headers, { now })).to.equal(false);
    const lower = Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v]));
    delete (lower as Record<string, string>)['x-service-signature'];
    expect(verifyWebhook(secret, body, lower, { now: now + 301_000 })).to.equal(false);
    expect(verifyWebhook(secret, body, {}, { now })).to.equal(false);
  });
});
