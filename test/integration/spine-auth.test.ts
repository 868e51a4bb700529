import { expect } from 'chai';
import { z } from 'zod';
import { makeWorkspace, startTestApp, type TestApp } from '../support/context.js';
import { call, clientFor, type Res } from '../support/http.js';
import { rawHttp, startCustomApp, type CustomApp } from '../support/spine.js';
import { createHash } from 'node:crypto';
import { revokeKey } from '@lectern/admin';
import { boundQuery } from '@lectern/db';

function expectUnauthorized(res: Res) {
  expect(res.status, res.text).to.equal(401);
  expect(res.body.error).to.equal('unauthorized');
  expect(res.body.message).to.be.a('string').and.not.equal('');
}

describe('spine: authentication (SPEC "Authentication")', () => {
  let app: TestApp;
  before(async () => {
    app = await startTestApp();
  });
  after(async () => app?.close());
  const em = () => app.rt.orm.em.fork();

  it('a valid write key authenticates (control)', async () => {
    const ws = await makeWorkspace(em(), 'build', 'Auth control');
    const res = await call(app.base, 'GET', '/me', { key: ws.key });
    expect(res.status).to.equal(200);
    expect(res.body.workspace_id).to.equal(ws.id);
  });

  it('keys are stored hashed, never in plain text', async () => {
    const ws = await makeWorkspace(em());
    const [row] = await boundQuery<Record<string, unknown>>(em(), 'select * from api_keys where id = ?', [
      ws.keyId,
    ]);
    expect(row.hash).to.equal(createHash('sha256').update(ws.key).digest('hex'));
    const stored = JSON.stringify(row);
    expect(stored).to.not.include(ws.key);
    expect(stored).to.not.include(ws.key.slice(3));
  });

  it('no Authorization header → 401 unauthorized', async () => {
    expectUnauthorized(await call(app.base, 'GET', '/me'));
    expectUnauthorized(await call(app.base, 'GET', '/identities'));
    expectUnauthorized(await call(app.base, 'POST', '/identities', { body: { externalId: 'x' } }));
  });

  it('a well-formed key that does not exist → 401', async () => {
    expectUnauthorized(await call(app.base, 'GET', '/me', { key: `lk_${'A'.repeat(40)}` }));
  });

  it('a key whose lookup prefix exists but whose secret differs → 401 (hash compared, not just the prefix)', async () => {
    const ws = await makeWorkspace(em());
    const last = ws.key.at(-1) === 'a' ? 'b' : 'a';
    const forged = ws.key.slice(0, -1) + last;
    expectUnauthorized(await call(app.base, 'GET', '/me', { key: forged }));
    // Same lookup, longer secret.
    expectUnauthorized(await call(app.base, 'GET', '/me', { key: `${ws.key}x` }));
  });

  it("a revoked key → 401, and the workspace's other keys keep working", async () => {
    const ws = await makeWorkspace(em());
    expect((await call(app.base, 'GET', '/me', { key: ws.key })).status).to.equal(200);
    await revokeKey(em(), ws.keyId);
    expectUnauthorized(await call(app.base, 'GET', '/me', { key: ws.key }));
    expectUnauthorized(
      await call(app.base, 'POST', '/identities', { key: ws.key, body: { externalId: 'x' } }),
    );
    expect((await call(app.base, 'GET', '/me', { key: ws.readKey })).status).to.equal(200);
  });

  describe('malformed Authorization headers → 401', () => {
    let key: string;
    beforeEach(async () => {
      key = (await makeWorkspace(em())).key;
    });
    const cases: [string, (k: string) => string][] = [
      ['the bare key, no scheme', (k) => k],
      ['Basic credentials', (k) => `Basic ${Buffer.from(`user:${k}`).toString('base64')}`],
      ['Basic with the key itself', (k) => `Basic ${k}`],
      ['"Token" scheme', (k) => `Token ${k}`],
      ['two spaces after Bearer', (k) => `Bearer  ${k}`],
      ['a tab instead of the space', (k) => `Bearer\t${k}`],
      ['no space at all', (k) => `Bearer${k}`],
      ['Bearer and nothing else', () => 'Bearer'],
      ['Bearer and a space', () => 'Bearer '],
      ['two keys', (k) => `Bearer ${k} ${k}`],
      ['a tab inside the key', (k) => `Bearer ${k.slice(0, 20)}\t${k.slice(20)}`],
      ['a key with a trailing tab and junk', (k) => `Bearer ${k}\tjunk`],
      ['a newline escaped as the two characters \\n', (k) => `Bearer ${k}\\n`],
      ['a newline percent-encoded (%0A)', (k) => `Bearer ${k}%0A`],
      ['a CR percent-encoded (%0D%0A)', (k) => `Bearer ${k}%0D%0A`],
      ['the key quoted', (k) => `Bearer "${k}"`],
      ['a key without the lk_ prefix', (k) => `Bearer ${k.slice(3)}`],
      ['a key that is too short', () => 'Bearer lk_abc123'],
      ['a key with a non-alphanumeric character', (k) => `Bearer ${k.slice(0, -1)}-`],
      ['a key with non-ASCII characters', (k) => `Bearer ${k.slice(0, -1)}é`],
    ];
    for (const [name, header] of cases) {
      it(name, async () => {
        let res: Res;
        try {
          res = await call(app.base, 'GET', '/me', { headers: { authorization: header(key) } });
        } catch {
          // fetch refuses some byte sequences; send those raw.
          const r = await rawHttp(
            app.url,
            `GET /api/v1/me HTTP/1.1\r\nHost: x\r\nConnection: close\r\nAuthorization: ${header(key)}\r\n\r\n`,
          );
          expect(r.status).to.equal(401);
          return;
        }
        expectUnauthorized(res);
      });
    }

    it('a raw stray newline inside the header value never authenticates', async () => {
      // fetch cannot send these bytes; Node's HTTP parser refuses them before Koa runs, and the
      // server's clientError handler still answers the spec's JSON 401.
      for (const value of [
        `Bearer ${key}\nX-Other: y`,
        `Bearer ${key}\r\n x`,
        `Bearer ${key.slice(0, 10)}\n${key.slice(10)}`,
      ]) {
        const r = await rawHttp(
          app.url,
          `GET /api/v1/me HTTP/1.1\r\nHost: x\r\nConnection: close\r\nAuthorization: ${value}\r\n\r\n`,
        );
        expect(r.status, r.text).to.equal(401);
        expect(r.text).to.include('"error":"unauthorized"');
      }
    });

    it('trailing whitespace is not part of an HTTP field value, so it is the same (valid) header', async () => {
      // RFC 9110 §5.5: OWS around a field value is stripped by the HTTP layer itself.
      for (const value of [`Bearer ${key}\t`, `Bearer ${key} `]) {
        const r = await rawHttp(
          app.url,
          `GET /api/v1/me HTTP/1.1\r\nHost: x\r\nConnection: close\r\nAuthorization: ${value}\r\n\r\n`,
        );
        expect(r.status, r.text).to.equal(200);
      }
    });
  });

  describe('scope', () => {
    let custom: CustomApp;
    before(async () => {
      // The spine has no PATCH route yet; a test route proves the rule for every write verb.
      custom = await startCustomApp({}, ({ api }) => {
        const verbs = { patch: 'update', put: 'upsert', post: 'create', delete: 'delete' } as const;
        for (const method of ['patch', 'put', 'post', 'delete'] as const) {
          api.route(
            {
              method,
              path: '/__test/scope',
              operationId: `${verbs[method]}TestScope`,
              summary: 'test',
              description: 'Registered by this test only.',
              tags: ['Health'],
              responses: { 200: { description: 'ok', schema: z.unknown() } },
            },
            (ctx) => {
              ctx.body = { data: { method: ctx.method } };
            },
          );
        }
      });
    });
    after(async () => custom?.close());

    it('a read-only key may GET (and HEAD)', async () => {
      const ws = await makeWorkspace(em());
      expect((await call(app.base, 'GET', '/me', { key: ws.readKey })).status).to.equal(200);
      expect((await call(app.base, 'GET', '/identities', { key: ws.readKey })).status).to.equal(200);
      expect((await call(app.base, 'HEAD', '/identities', { key: ws.readKey })).status).to.equal(200);
    });

    it('a read-only key → 403 insufficient_scope on POST, PATCH, PUT and DELETE', async () => {
      const ws = await makeWorkspace(em());
      const attempts: [string, string, unknown][] = [
        ['POST', '/identities', { externalId: 'ro-1' }],
        ['POST', '/identities/bulk', { identities: [{ externalId: 'ro-2' }] }],
        ['DELETE', '/identities/bulk', { externalIds: ['ro-1'] }],
        ['DELETE', '/identities/idn_whatever', undefined],
      ];
      for (const [method, path, body] of attempts) {
        const res = await call(app.base, method, path, { key: ws.readKey, body });
        expect(res.status, `${method} ${path}: ${res.text}`).to.equal(403);
        expect(res.body.error).to.equal('insufficient_scope');
        expect(res.body.message).to.be.a('string');
      }
      for (const method of ['PATCH', 'PUT', 'POST', 'DELETE']) {
        const res = await call(custom.base, method, '/__test/scope', { key: ws.readKey, body: {} });
        expect(res.status, `${method}: ${res.text}`).to.equal(403);
        expect(res.body.error).to.equal('insufficient_scope');
        const ok = await call(custom.base, method, '/__test/scope', { key: ws.key, body: {} });
        expect(ok.status, `${method} with a write key`).to.equal(200);
      }
      // Nothing was written by the refused requests.
      const list = await clientFor(app, ws.key).listIdentities();
      expect(list.data).to.have.length(0);
    });
  });

  describe("another workspace's objects", () => {
    it('GET and DELETE by id → 404 not_found, never 403, and nothing is deleted', async () => {
      const a = await makeWorkspace(em(), 'scale', 'Owner');
      const b = await makeWorkspace(em(), 'scale', 'Stranger');
      const created = await call<{ data: { id: string } }>(app.base, 'POST', '/identities', {
        key: a.key,
        body: { externalId: 'mine', name: 'Owned' },
      });
      expect(created.status).to.equal(201);
      const id = created.body.data.id;

      for (const key of [b.key, b.readKey]) {
        const get = await call(app.base, 'GET', `/identities/${id}`, { key });
        expect(get.status).to.equal(404);
        expect(get.body.error).to.equal('not_found');
      }
      const del = await call(app.base, 'DELETE', `/identities/${id}`, { key: b.key });
      expect(del.status).to.equal(404);
      expect(del.body.error).to.equal('not_found');
      // An unknown id answers exactly the same, so existence does not leak.
      const unknown = await call(app.base, 'GET', '/identities/idn_doesnotexist', { key: b.key });
      expect(unknown.status).to.equal(404);
      expect(unknown.body.error).to.equal(del.body.error);

      // Bulk delete by the other workspace's id or externalId removes nothing.
      const bulk = await call<{ data: { deleted: number } }>(app.base, 'DELETE', '/identities/bulk', {
        key: b.key,
        body: { ids: [id], externalIds: ['mine'] },
      });
      expect(bulk.status).to.equal(200);
      expect(bulk.body.data.deleted).to.equal(0);
      // Searching does not see it either.
      const search = await clientFor(app, b.key).listIdentities({ query: { search: 'mine' } });
      expect(search.data).to.have.length(0);

      const still = await call(app.base, 'GET', `/identities/${id}`, { key: a.key });
      expect(still.status).to.equal(200);
    });
  });
});
