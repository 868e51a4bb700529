import { expect } from 'chai';
import type { EndpointDto } from '../support/webhooks.js';
import { makeWorkspace, startTestApp, type TestApp, type TestWorkspace } from '../support/context.js';
import { call } from '../support/http.js';
import { boundQuery } from '@lectern/db';
import type { ResolvedAddress } from '@lectern/outbound';
import { decryptSecret, parseEncryptionKey } from '@lectern/secrets';
import { checkEndpointUrl } from '@lectern/webhooks';

type Endpoint = EndpointDto & { signingSecret?: string };
type Issue = { code: string; path: (string | number)[]; message: string };
type ErrorRes = { error: string; message: string; issues?: Issue[] };

describe('webhooks: endpoints API', () => {
  let app: TestApp;
  let ws: TestWorkspace;
  let other: TestWorkspace;

  before(async () => {
    app = await startTestApp();
    ws = await makeWorkspace(app.rt.orm.em.fork(), 'sandbox', 'Hooks');
    other = await makeWorkspace(app.rt.orm.em.fork(), 'scale', 'Other');
  });
  after(async () => app?.close());

  const create = (body: unknown, key = ws.key) =>
    call<{ data: Endpoint }>(app.base, 'POST', '/webhooks', { key, body });

  it('creates an endpoint and returns the signing secret exactly once', async () => {
    const res = await create({
      name: 'Main',
      url: 'https://hooks.example.com/lectern',
      eventTypes: ['course.completed', 'identity.created'],
    });
    expect(res.status).to.equal(201);
    const ep = res.body.data;
    expect(Object.keys(ep).sort()).to.deep.equal(
      [
        'createdAt',
        'disabledAt',
        'disabledReason',
        'eventTypes',
        'id',
        'isActive',
        'name',
        'signingSecret',
        'updatedAt',
        'url',
      ].sort(),
    );
    expect(ep).to.include({
      name: 'Main',
      url: 'https://hooks.example.com/lectern',
      isActive: true,
      disabledReason: null,
      disabledAt: null,
    });
    expect(ep.eventTypes).to.deep.equal(['course.completed', 'identity.created']);
    expect(ep.signingSecret).to.match(/^whsec_[A-Za-z0-9+/]{43}=$/);
    const secret = ep.signingSecret!;

    const one = await call<{ data: Endpoint }>(app.base, 'GET', `/webhooks/${ep.id}`, { key: ws.key });
    const list = await call<{ data: Endpoint[] }>(app.base, 'GET', '/webhooks', { key: ws.key });
    const patched = await call<{ data: Endpoint }>(app.base, 'PATCH', `/webhooks/${ep.id}`, {
      key: ws.key,
      body: { name: 'Renamed' },
    });
    for (const r of [one, list, patched]) {
      expect(r.status).to.equal(200);
      expect(r.text).not.to.include(secret);
      expect(r.text).not.to.include('signingSecret');
    }
    const { signingSecret: _shownOnce, ...withoutSecret } = ep;
    expect(one.body.data).to.deep.equal({ ...withoutSecret, updatedAt: one.body.data.updatedAt });
    expect(list.body.data.map((e) => e.id)).to.include(ep.id);
    expect(patched.body.data.name).to.equal('Renamed');

    // At rest: only AES-GCM ciphertext, bound to the endpoint id, decryptable with the configured key.
    const [row] = await boundQuery<{ secret_encrypted: string }>(
      app.rt.orm.em.fork(),
      'select secret_encrypted from webhook_endpoints where id = ?',
      [ep.id],
    );
    expect(row.secret_encrypted).to.match(/^v1:/);
    expect(row.secret_encrypted).not.to.include(secret.slice(6));
    const key = parseEncryptionKey(app.rt.cfg.WEBHOOK_SECRET_KEY!);
    expect(decryptSecret(row.secret_encrypted, key, ep.id)).to.equal(secret);
  });

  it('validates name, url and eventTypes with paths', async () => {
    const unknownType = await create({
      name: 'x',
      url: 'https://a.example.com/',
      eventTypes: ['course.completed', 'course.exploded'],
    });
    expect(unknownType.status).to.equal(400);
    const issues = (unknownType.body as unknown as ErrorRes).issues!;
    expect(issues.map((i) => i.path)).to.deep.include(['eventTypes', 1]);

    const none = await create({ name: 'x', url: 'https://a.example.com/', eventTypes: [] });
    expect(none.status).to.equal(400);
    expect((none.body as unknown as ErrorRes).issues!.map((i) => i.path)).to.deep.include(['eventTypes']);

    const missing = await create({ url: 'https://a.example.com/', eventTypes: ['course.viewed'] });
    expect(missing.status).to.equal(400);
    expect((missing.body as unknown as ErrorRes).issues!.map((i) => i.path)).to.deep.include(['name']);

    for (const url of [
      '/relative/path',
      'ftp://files.example.com/x',
      'https://user:pw@a.example.com/',
      'not a url',
      'javascript:alert(1)',
    ]) {
      const res = await create({ name: 'x', url, eventTypes: ['course.viewed'] });
      expect(res.status, url).to.equal(400);
      const body = res.body as unknown as ErrorRes;
      expect(body.error).to.equal('invalid_request');
      expect(body.issues![0].path, url).to.deep.equal(['url']);
    }

    const dup = await create({
      name: 'dups',
      url: 'https://a.example.com/',
      eventTypes: ['course.viewed', 'course.viewed'],
    });
    expect(dup.status).to.equal(201);
    expect(dup.body.data.eventTypes).to.deep.equal(['course.viewed']);

    const before = (await call<{ data: Endpoint[] }>(app.base, 'GET', '/webhooks', { key: ws.key })).body
      .data;
    for (const isActive of ['false', 0]) {
      const res = await create({
        name: 'x',
        url: 'https://a.example.com/',
        eventTypes: ['course.viewed'],
        isActive,
      });
      expect(res.status, JSON.stringify(isActive)).to.equal(400);
      expect((res.body as unknown as ErrorRes).issues!.map((i) => i.path)).to.deep.equal([['isActive']]);
    }
    const after = (await call<{ data: Endpoint[] }>(app.base, 'GET', '/webhooks', { key: ws.key })).body.data;
    expect(after).to.have.length(before.length);
  });

  it('creates an endpoint switched off when asked (isActive: false), and switches it on later', async () => {
    const res = await create({
      name: 'Off',
      url: 'https://hooks.example.com/off',
      eventTypes: ['course.viewed'],
      isActive: false,
    });
    expect(res.status).to.equal(201);
    expect(res.body.data).to.include({ isActive: false, disabledReason: null, disabledAt: null });
    const got = await call<{ data: Endpoint }>(app.base, 'GET', `/webhooks/${res.body.data.id}`, {
      key: ws.key,
    });
    expect(got.body.data.isActive).to.equal(false);
    const on = await call<{ data: Endpoint }>(app.base, 'PATCH', `/webhooks/${res.body.data.id}`, {
      key: ws.key,
      body: { isActive: true },
    });
    expect(on.body.data.isActive).to.equal(true);
    const explicit = await create({
      name: 'On',
      url: 'https://hooks.example.com/on',
      eventTypes: ['course.viewed'],
      isActive: true,
    });
    expect(explicit.body.data.isActive).to.equal(true);
  });

  it('updates url, eventTypes and isActive, validating the same way', async () => {
    const ep = (await create({ name: 'p', url: 'https://a.example.com/', eventTypes: ['course.viewed'] }))
      .body.data;
    const res = await call<{ data: Endpoint }>(app.base, 'PATCH', `/webhooks/${ep.id}`, {
      key: ws.key,
      body: {
        url: 'https://b.example.com/new',
        eventTypes: ['course.published', 'course.unpublished'],
        isActive: false,
      },
    });
    expect(res.status).to.equal(200);
    expect(res.body.data).to.include({ url: 'https://b.example.com/new', isActive: false });
    expect(res.body.data.eventTypes).to.deep.equal(['course.published', 'course.unpublished']);
    expect(new Date(res.body.data.updatedAt).getTime()).to.be.greaterThan(
      new Date(ep.updatedAt).getTime() - 1,
    );

    const bad = await call(app.base, 'PATCH', `/webhooks/${ep.id}`, {
      key: ws.key,
      body: { eventTypes: ['nope'] },
    });
    expect(bad.status).to.equal(400);
    expect((bad.body as unknown as ErrorRes).issues![0].path).to.deep.equal(['eventTypes', 0]);
    const badUrl = await call(app.base, 'PATCH', `/webhooks/${ep.id}`, {
      key: ws.key,
      body: { url: 'mailto:x@y.z' },
    });
    expect(badUrl.status).to.equal(400);
    expect((badUrl.body as unknown as ErrorRes).issues![0].path).to.deep.equal(['url']);
    const badActive = await call(app.base, 'PATCH', `/webhooks/${ep.id}`, {
      key: ws.key,
      body: { isActive: 'yes' },
    });
    expect(badActive.status).to.equal(400);
  });

  it('deletes with 204, then 404', async () => {
    const ep = (await create({ name: 'd', url: 'https://a.example.com/', eventTypes: ['course.viewed'] }))
      .body.data;
    const del = await call(app.base, 'DELETE', `/webhooks/${ep.id}`, { key: ws.key });
    expect(del.status).to.equal(204);
    expect(del.text).to.equal('');
    expect((await call(app.base, 'GET', `/webhooks/${ep.id}`, { key: ws.key })).status).to.equal(404);
    expect((await call(app.base, 'DELETE', `/webhooks/${ep.id}`, { key: ws.key })).status).to.equal(404);
  });

  it("answers 404 for another workspace's endpoint and its deliveries, on every route", async () => {
    const ep = (await create({ name: 'mine', url: 'https://a.example.com/', eventTypes: ['course.viewed'] }))
      .body.data;
    const k = other.key;
    const routes: [string, string, unknown?][] = [
      ['GET', `/webhooks/${ep.id}`],
      ['PATCH', `/webhooks/${ep.id}`, { name: 'stolen' }],
      ['DELETE', `/webhooks/${ep.id}`],
      ['GET', `/webhooks/${ep.id}/deliveries`],
      ['GET', `/webhooks/${ep.id}/deliveries/whd_x`],
      ['POST', `/webhooks/${ep.id}/deliveries/whd_x/resend`],
      ['POST', `/webhooks/${ep.id}/test`, {}],
    ];
    for (const [method, p, body] of routes) {
      const res = await call(app.base, method, p, { key: k, body });
      expect(res.status, `${method} ${p}`).to.equal(404);
      expect((res.body as unknown as ErrorRes).error).to.equal('not_found');
    }
    const list = await call<{ data: Endpoint[] }>(app.base, 'GET', '/webhooks', { key: k });
    expect(list.body.data.map((e) => e.id)).not.to.include(ep.id);
    expect(
      (await call<{ data: Endpoint }>(app.base, 'GET', `/webhooks/${ep.id}`, { key: ws.key })).body.data.name,
    ).to.equal('mine');
  });

  it('refuses writes with a read-only key and needs a key at all', async () => {
    const res = await create(
      { name: 'r', url: 'https://a.example.com/', eventTypes: ['course.viewed'] },
      ws.readKey,
    );
    expect(res.status).to.equal(403);
    expect((await call(app.base, 'GET', '/webhooks', { key: ws.readKey })).status).to.equal(200);
    expect((await call(app.base, 'GET', '/webhooks')).status).to.equal(401);
  });

  it('lists every webhook route with its contract in the OpenAPI document', async () => {
    const doc = await call<{
      paths: Record<string, Record<string, { responses: Record<string, unknown>; requestBody?: unknown }>>;
    }>(app.url, 'GET', '/api/v1/openapi.json');
    const p = doc.body.paths;
    expect(Object.keys(p['/api/v1/webhooks']).sort()).to.deep.equal(['get', 'post']);
    expect(Object.keys(p['/api/v1/webhooks/{id}']).sort()).to.deep.equal(['delete', 'get', 'patch']);
    expect(p['/api/v1/webhooks/{id}/deliveries']).to.have.property('get');
    expect(p['/api/v1/webhooks/{id}/deliveries/{deliveryId}']).to.have.property('get');
    expect(p['/api/v1/webhooks/{id}/deliveries/{deliveryId}/resend'].post.responses).to.have.property('202');
    expect(p['/api/v1/webhooks/{id}/test'].post.responses).to.have.property('202');
    expect(JSON.stringify(p['/api/v1/webhooks'].post.responses['201'])).to.include('signingSecret');
    expect(JSON.stringify(p['/api/v1/webhooks/{id}'].get.responses['200'])).not.to.include('signingSecret');
  });

  describe('SSRF guard at create and update (private networks not allowed)', () => {
    let strict: TestApp;
    let sws: TestWorkspace;
    before(async () => {
      strict = await startTestApp({ ALLOW_PRIVATE_NETWORKS: 'false' });
      sws = await makeWorkspace(strict.rt.orm.em.fork(), 'scale', 'Strict');
    });
    after(async () => strict?.close());

    it('refuses loopback, private, link-local and metadata hosts in every spelling, with path ["url"]', async () => {
      const refused = [
        'http://127.0.0.1:8080/hook',
        'http://127.1/',
        'http://2130706433/',
        'http://0x7f.1/',
        'http://017700000001/',
        'http://[::1]/',
        'http://[::ffff:7f00:1]/',
        'http://[::ffff:a9fe:a9fe]/latest/meta-data',
        'http://[::]/',
        'http://0.0.0.0/',
        'http://10.1.2.3/',
        'http://192.168.0.10/',
        'http://172.16.5.4/',
        'http://169.254.169.254/latest/meta-data/',
        'http://metadata.google.internal/computeMetadata/v1/',
        'http://localhost:3000/',
        'http://app.localhost/',
        'http://intranet/',
      ];
      for (const url of refused) {
        const res = await call(strict.base, 'POST', '/webhooks', {
          key: sws.key,
          body: { name: 'x', url, eventTypes: ['course.viewed'] },
        });
        expect(res.status, url).to.equal(400);
        const body = res.body as unknown as ErrorRes;
        expect(body.error, url).to.equal('invalid_request');
        expect(body.issues![0].path, url).to.deep.equal(['url']);
        expect(body.issues![0].code, url).to.equal('forbidden_address');
      }
      const ok = await call<{ data: Endpoint }>(strict.base, 'POST', '/webhooks', {
        key: sws.key,
        body: { name: 'public', url: 'https://93.184.216.34/hook', eventTypes: ['course.viewed'] },
      });
      expect(ok.status).to.equal(201);
      const patch = await call(strict.base, 'PATCH', `/webhooks/${ok.body.data.id}`, {
        key: sws.key,
        body: { url: 'http://[::ffff:127.0.0.1]/' },
      });
      expect(patch.status).to.equal(400);
      expect((patch.body as unknown as ErrorRes).issues![0].path).to.deep.equal(['url']);
      const still = await call<{ data: Endpoint }>(strict.base, 'GET', `/webhooks/${ok.body.data.id}`, {
        key: sws.key,
      });
      expect(still.body.data.url).to.equal('https://93.184.216.34/hook');
    });

    it('refuses a host name that resolves to a private address (any of its addresses)', async () => {
      const resolver =
        (answers: Record<string, string[]>) =>
        async (host: string): Promise<ResolvedAddress[]> =>
          (answers[host] ?? []).map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
      const lookup = resolver({
        'rebind.example.com': ['93.184.216.34', '127.0.0.1'],
        'meta.example.com': ['169.254.169.254'],
        'v6.example.com': ['fd00:ec2::254'],
        'fine.example.com': ['93.184.216.34'],
      });
      const policy = {
        key: () => parseEncryptionKey(strict.rt.cfg.WEBHOOK_SECRET_KEY!),
        allowPrivate: false,
        lookup,
      };
      for (const host of ['rebind.example.com', 'meta.example.com', 'v6.example.com']) {
        const err = await checkEndpointUrl(`https://${host}/hook`, policy).then(
          () => null,
          (e: unknown) => e as { code: string; issues: Issue[] },
        );
        expect(err, host).to.not.equal(null);
        expect(err!.code).to.equal('invalid_request');
        expect(err!.issues[0].path).to.deep.equal(['url']);
      }
      await checkEndpointUrl('https://fine.example.com/hook', policy);
      // Unresolvable right now is not an SSRF risk: accepted, and every delivery checks again.
      await checkEndpointUrl('https://nxdomain.example.com/hook', {
        ...policy,
        lookup: async () => Promise.reject(Object.assign(new Error('x'), { code: 'ENOTFOUND' })),
      });
    });
  });
});
