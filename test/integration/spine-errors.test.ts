import { expect } from 'chai';
import zlib from 'node:zlib';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { z } from 'zod';
import { makeWorkspace, type TestWorkspace } from '../support/context.js';
import { call, clientFor, type Res } from '../support/http.js';
import { startCustomApp, type CustomApp } from '../support/spine.js';

const MiB = 1024 * 1024;

interface ErrBody {
  error: string;
  message: string;
  issues?: { code: string; path: (string | number)[]; message: string }[];
}

function expectError(res: Res<ErrBody>, status: number, error: string) {
  expect(res.status, res.text).to.equal(status);
  expect(res.headers.get('content-type')).to.match(/^application\/json/);
  expect(res.body.error).to.equal(error);
  expect(res.body.message).to.be.a('string').and.not.equal('');
}

describe('spine: the envelope and errors (SPEC "Errors")', () => {
  let app: CustomApp;
  let ws: TestWorkspace;
  before(async () => {
    app = await startCustomApp({}, ({ api, pub }) => {
      const ok = { 200: { description: 'ok', schema: z.unknown() } };
      api.route(
        {
          method: 'get',
          path: '/__test/crash',
          operationId: 'getTestCrash',
          summary: 'throws',
          description: 'Registered by this test only.',
          tags: ['Health'],
          responses: ok,
        },
        () => {
          throw new Error('boom: secret detail /srv/lectern/app.ts:42');
        },
      );
      api.route(
        {
          method: 'get',
          path: '/__test/crash-async',
          operationId: 'getTestCrashAsync',
          summary: 'rejects',
          description: 'Registered by this test only.',
          tags: ['Health'],
          responses: ok,
        },
        async () => {
          await Promise.resolve();
          (null as unknown as { x: number }).x = 1;
        },
      );
      pub.route(
        {
          method: 'get',
          path: '/__test/public-crash',
          operationId: 'getTestPublicCrash',
          summary: 'throws',
          description: 'Registered by this test only.',
          tags: ['Health'],
          auth: 'public',
          responses: ok,
        },
        () => {
          throw Object.assign(new Error('pg password=hunter2'), { status: 500, expose: true });
        },
      );
      api.route(
        {
          method: 'post',
          path: '/__test/small',
          operationId: 'createTestSmall',
          summary: 'a 1 KiB body limit',
          description: 'Registered by this test only.',
          tags: ['Health'],
          body: z.object({ text: z.string() }),
          bodyLimit: 1024,
          responses: ok,
        },
        (ctx) => {
          ctx.body = { data: { length: ctx.state.body.text.length } };
        },
      );
    });
  });
  after(async () => app?.close());
  beforeEach(async () => {
    ws = await makeWorkspace(app.rt.orm.em.fork(), 'scale', 'Errors');
  });

  describe('X-Request-Id', () => {
    it('is on every response, success and error alike', async () => {
      const ok = await call(app.base, 'GET', '/me', { key: ws.key });
      const unauth = await call(app.base, 'GET', '/me');
      const missing = await call(app.url, 'GET', '/no/such/route');
      for (const res of [ok, unauth, missing])
        expect(res.headers.get('x-request-id')).to.match(/^[A-Za-z0-9._-]{8,}$/);
      expect(ok.headers.get('x-request-id')).to.not.equal(unauth.headers.get('x-request-id'));
    });

    it('echoes a well-formed incoming id and replaces a hostile one', async () => {
      const mine = await call(app.base, 'GET', '/me', {
        key: ws.key,
        headers: { 'x-request-id': 'trace-abc.123_XYZ' },
      });
      expect(mine.headers.get('x-request-id')).to.equal('trace-abc.123_XYZ');
      const hostile = await call(app.base, 'GET', '/me', {
        key: ws.key,
        headers: { 'x-request-id': 'a b<script>' },
      });
      expect(hostile.headers.get('x-request-id')).to.not.include('<');
    });
  });

  describe('500 internal_error', () => {
    for (const path of ['/__test/crash', '/__test/crash-async']) {
      it(`a crash (${path}) → 500 with no stack or detail, the request id in the message`, async () => {
        const res = await call<ErrBody>(app.base, 'GET', path, {
          key: ws.key,
          headers: { 'x-request-id': 'crash-test-0001' },
        });
        expectError(res, 500, 'internal_error');
        expect(Object.keys(res.body).sort()).to.deep.equal(['error', 'message']);
        expect(res.headers.get('x-request-id')).to.equal('crash-test-0001');
        expect(res.body.message).to.include('crash-test-0001');
        expect(res.text).to.not.match(/boom|secret|\.ts:\d|\bat\s+\S+\s+\(|stack|TypeError|Cannot set/);
      });
    }

    it('an error that asks to be exposed is still hidden', async () => {
      const res = await call<ErrBody>(app.url, 'GET', '/__test/public-crash');
      expectError(res, 500, 'internal_error');
      expect(res.text).to.not.include('hunter2');
      expect(res.body.message).to.include(res.headers.get('x-request-id')!);
    });

    it('the process keeps serving after a crash', async () => {
      await call(app.base, 'GET', '/__test/crash', { key: ws.key });
      expect((await call(app.base, 'GET', '/me', { key: ws.key })).status).to.equal(200);
    });
  });

  describe('404 for unknown routes', () => {
    for (const [base, path] of [
      ['url', '/nope'],
      ['base', '/nope'],
      ['base', '/identities/a/b/c'],
      ['url', '/api/v2/me'],
    ] as const) {
      it(`GET ${base === 'base' ? '/api/v1' : ''}${path} → 404 JSON not_found`, async () => {
        const res = await call<ErrBody>(base === 'base' ? app.base : app.url, 'GET', path, { key: ws.key });
        expectError(res, 404, 'not_found');
      });
    }

    it('an unknown method on a known path → 405 JSON method_not_allowed with Allow', async () => {
      const res = await call<ErrBody>(app.base, 'PUT', '/me', { key: ws.key, body: {} });
      expectError(res, 405, 'method_not_allowed');
      expect(res.headers.get('allow')).to.include('GET');
    });

    it('OPTIONS on a known path answers with Allow, also for a read-only key', async () => {
      const res = await call(app.base, 'OPTIONS', '/identities', { key: ws.readKey });
      expect(res.status).to.equal(200);
      expect(res.headers.get('allow')).to.include('GET').and.include('POST');
    });
  });

  describe('400 invalid_request', () => {
    it('malformed JSON → 400 with issues', async () => {
      for (const raw of [
        '{"externalId": "x"',
        '{externalId: "x"}',
        "{'externalId':'x'}",
        '{"externalId":"x"}}',
        'nul',
      ]) {
        const res = await call<ErrBody>(app.base, 'POST', '/identities', {
          key: ws.key,
          raw,
          headers: { 'content-type': 'application/json' },
        });
        expectError(res, 400, 'invalid_request');
        expect(res.body.issues, raw).to.be.an('array').with.length.greaterThan(0);
        for (const i of res.body.issues!) expect(i).to.have.all.keys('code', 'path', 'message');
      }
    });

    it('a JSON value that is not an object (strict JSON) → 400', async () => {
      for (const raw of ['"just a string"', '42', '[1,2]']) {
        const res = await call<ErrBody>(app.base, 'POST', '/identities', {
          key: ws.key,
          raw,
          headers: { 'content-type': 'application/json' },
        });
        expectError(res, 400, 'invalid_request');
        expect(res.body.issues).to.be.an('array').that.is.not.empty;
      }
    });

    it('a schema failure → issues[{code, path, message}] whose path names the field', async () => {
      const res = await call<ErrBody>(app.base, 'POST', '/identities', {
        key: ws.key,
        body: { externalId: 5, email: 'not-an-email' },
      });
      expectError(res, 400, 'invalid_request');
      const paths = res.body.issues!.map((i) => i.path.join('.'));
      expect(paths).to.include.members(['externalId', 'email']);
      for (const i of res.body.issues!) {
        expect(i.code).to.be.a('string').and.not.equal('');
        expect(i.message).to.be.a('string').and.not.equal('');
      }
    });

    it('a missing required field is reported at its path', async () => {
      const res = await call<ErrBody>(app.base, 'POST', '/identities', {
        key: ws.key,
        body: { name: 'No id' },
      });
      expectError(res, 400, 'invalid_request');
      expect(res.body.issues!.map((i) => i.path)).to.deep.include(['externalId']);
    });

    it('a bad field deep in a bulk body is located by index', async () => {
      const res = await call<ErrBody>(app.base, 'POST', '/identities/bulk', {
        key: ws.key,
        body: { identities: [{ externalId: 'a' }, { externalId: 'b' }, { externalId: 'c', email: 'nope' }] },
      });
      expectError(res, 400, 'invalid_request');
      expect(res.body.issues!.map((i) => i.path)).to.deep.include(['identities', 2, 'email']);
    });

    it('an empty JSON body on a route that needs fields → 400 (not 500)', async () => {
      const res = await call<ErrBody>(app.base, 'POST', '/identities', {
        key: ws.key,
        raw: '',
        headers: { 'content-type': 'application/json' },
      });
      expectError(res, 400, 'invalid_request');
    });

    it('a bad query parameter → 400 with a path under "query"', async () => {
      const res = await call<ErrBody>(app.base, 'GET', '/identities?search=a&search=b', { key: ws.key });
      expectError(res, 400, 'invalid_request');
      expect(res.body.issues![0].path.slice(0, 2)).to.deep.equal(['query', 'search']);
    });

    it('a corrupt gzip body → 400, not 500', async () => {
      const res = await call<ErrBody>(app.base, 'POST', '/identities', {
        key: ws.key,
        raw: Buffer.from('definitely not gzip'),
        headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' },
      });
      expectError(res, 400, 'invalid_request');
    });
  });

  describe('413 body limits (applied to inflated bytes)', () => {
    const bigJson = (bytes: number) => JSON.stringify({ externalId: 'big', name: 'a'.repeat(bytes) });

    it('a JSON body over 1 MiB → 413 JSON', async () => {
      const res = await call<ErrBody>(app.base, 'POST', '/identities', {
        key: ws.key,
        raw: bigJson(MiB + 10),
        headers: { 'content-type': 'application/json' },
      });
      expectError(res, 413, 'payload_too_large');
    });

    it('a body just under the limit is parsed (and then validated)', async () => {
      const res = await call<ErrBody>(app.base, 'POST', '/identities', {
        key: ws.key,
        raw: bigJson(MiB - 100),
        headers: { 'content-type': 'application/json' },
      });
      expectError(res, 400, 'invalid_request');
      expect(res.body.issues!.map((i) => i.path.join('.'))).to.include('name');
    });

    it('a gzip body that is small on the wire but inflates past the limit → 413', async () => {
      const gz = zlib.gzipSync(bigJson(3 * MiB));
      expect(gz.length).to.be.lessThan(64 * 1024);
      const res = await call<ErrBody>(app.base, 'POST', '/identities', {
        key: ws.key,
        raw: gz,
        headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' },
      });
      expectError(res, 413, 'payload_too_large');
    });

    it('a deflate body that inflates past the limit → 413', async () => {
      const res = await call<ErrBody>(app.base, 'POST', '/identities', {
        key: ws.key,
        raw: zlib.deflateSync(bigJson(2 * MiB)),
        headers: { 'content-type': 'application/json', 'content-encoding': 'deflate' },
      });
      expectError(res, 413, 'payload_too_large');
    });

    it('a small gzip body is accepted', async () => {
      const res = await call<{ data: { externalId: string } }>(app.base, 'POST', '/identities', {
        key: ws.key,
        raw: zlib.gzipSync(JSON.stringify({ externalId: 'gzipped' })),
        headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' },
      });
      expect(res.status).to.equal(201);
      expect(res.body.data.externalId).to.equal('gzipped');
    });

    it("a route's own limit applies, inflated or not", async () => {
      const fits = await call(app.base, 'POST', '/__test/small', {
        key: ws.key,
        body: { text: 'x'.repeat(900) },
      });
      expect(fits.status).to.equal(200);
      const over = await call<ErrBody>(app.base, 'POST', '/__test/small', {
        key: ws.key,
        body: { text: 'x'.repeat(2000) },
      });
      expectError(over, 413, 'payload_too_large');
      const gz = await call<ErrBody>(app.base, 'POST', '/__test/small', {
        key: ws.key,
        raw: zlib.gzipSync(JSON.stringify({ text: 'x'.repeat(2000) })),
        headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' },
      });
      expectError(gz, 413, 'payload_too_large');
    });
  });

  describe('415 on non-JSON bodies', () => {
    // text/plain and no type at all are read as JSON when they parse (hardening-input.test.ts); a form body that
    // is not JSON is still a 415.
    for (const type of [
      'application/x-www-form-urlencoded',
      'multipart/form-data; boundary=x',
      'application/xml',
    ]) {
      it(`Content-Type ${type} → 415`, async () => {
        const res = await call<ErrBody>(app.base, 'POST', '/identities', {
          key: ws.key,
          raw: 'externalId=x',
          headers: { 'content-type': type },
        });
        expectError(res, 415, 'unsupported_media_type');
      });
    }

    it('an unsupported Content-Encoding → 415', async () => {
      const res = await call<ErrBody>(app.base, 'POST', '/identities', {
        key: ws.key,
        raw: '{"externalId":"x"}',
        headers: { 'content-type': 'application/json', 'content-encoding': 'compress' },
      });
      expectError(res, 415, 'unsupported_media_type');
    });

    it('application/json with a charset parameter is accepted', async () => {
      const res = await call(app.base, 'POST', '/identities', {
        key: ws.key,
        raw: '{"externalId":"charset"}',
        headers: { 'content-type': 'application/json; charset=utf-8' },
      });
      expect(res.status).to.equal(201);
    });
  });

  it('a success is wrapped in data; /me is the documented exception', async () => {
    const created = await call<{ data: unknown }>(app.base, 'POST', '/identities', {
      key: ws.key,
      body: { externalId: 'env' },
    });
    expect(Object.keys(created.body)).to.deep.equal(['data']);
    const me = await call(app.base, 'GET', '/me', { key: ws.key });
    expect(me.body).to.not.have.property('data');
  });

  it('a DELETE success is 204 with an empty body', async () => {
    const created = await clientFor(app, ws.key).upsertIdentity({ body: { externalId: 'to-delete' } });
    const res = await call(app.base, 'DELETE', `/identities/${created.data.id}`, { key: ws.key });
    expect(res.status).to.equal(204);
    expect(res.text).to.equal('');
  });

  describe('request logs', () => {
    let logged: string[];
    let logApp: CustomApp;
    before(async () => {
      logged = [];
      const sink = new Writable({
        write(chunk: Buffer, _enc, cb) {
          logged.push(chunk.toString());
          cb();
        },
      });
      logApp = await startCustomApp(
        {},
        ({ api }) => {
          api.route(
            {
              method: 'get',
              path: '/__test/crash',
              operationId: 'getTestCrash',
              summary: 'throws',
              description: 'Registered by this test only.',
              tags: ['Health'],
              responses: { 200: { description: 'ok', schema: z.unknown() } },
            },
            () => {
              throw new Error('boom');
            },
          );
        },
        { log: pino({ level: 'info' }, sink) },
      );
    });
    after(async () => logApp?.close());

    it('one line per request with its request id, and never the Authorization header or the key', async () => {
      const w = await makeWorkspace(logApp.rt.orm.em.fork());
      const wrong = `lk_${'Q'.repeat(40)}`;
      const responses = [
        await call(logApp.base, 'GET', '/me', { key: w.key }),
        await call(logApp.base, 'POST', '/identities', { key: w.key, body: { externalId: 'logged' } }),
        await call(logApp.base, 'GET', '/me', { key: wrong }),
        await call(logApp.base, 'GET', '/__test/crash', { key: w.key }),
        await call(logApp.base, 'GET', '/me', {
          headers: { authorization: `Basic ${Buffer.from(`u:${w.key}`).toString('base64')}` },
        }),
      ];
      expect(responses.map((r) => r.status)).to.deep.equal([200, 201, 401, 500, 401]);
      const all = logged.join('');
      for (const r of responses) {
        const id = r.headers.get('x-request-id')!;
        const lines = logged
          .filter((l) => l.includes(id))
          .map((l) => JSON.parse(l) as { msg: string; status?: number });
        expect(
          lines.find((l) => l.msg === 'request'),
          `a request line for ${id}`,
        ).to.include({ status: r.status });
      }
      const crash = logged
        .map((l) => JSON.parse(l) as { msg: string; err?: { message: string } })
        .find((l) => l.msg === 'request failed');
      expect(crash?.err?.message, 'the crash detail goes to the log instead of the response').to.equal(
        'boom',
      );
      for (const secret of [
        w.key,
        w.key.slice(3),
        wrong,
        w.readKey,
        'Bearer',
        Buffer.from(`u:${w.key}`).toString('base64'),
      ]) {
        expect(all, 'the log must not contain the key').to.not.include(secret);
      }
      expect(all.toLowerCase()).to.not.include('authorization');
    });
  });
});
