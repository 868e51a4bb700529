import { expect } from 'chai';
import { Writable } from 'node:stream';
import { z } from 'zod';
import { makeWorkspace, startTestApp, type TestApp, type TestWorkspace } from '../support/context.js';
import { call } from '../support/http.js';
import { outboxOf, startCustomApp, type CustomApp } from '../support/spine.js';
import { api, expectIssue, expectStatus, type CourseDto } from '../support/authoring.js';
import { createLogger } from '@lectern/log';
import { boundQuery } from '@lectern/db';

type Json = Record<string, unknown>;

describe('hardening: contract details a client trips on (issue 8)', function () {
  this.timeout(30_000);
  let app: TestApp;
  let ws: TestWorkspace;
  let req: ReturnType<typeof api>;
  before(async () => {
    app = await startTestApp({ RATE_LIMIT_PER_MINUTE: '0' });
    ws = await makeWorkspace(app.rt.orm.em.fork(), 'scale', 'Contract');
    req = api(app.base, ws.key);
  });
  after(async () => app?.close());
  const em = () => app.rt.orm.em.fork();
  const course = async (body: Json = {}) => {
    const res = await req<CourseDto>('POST', '/courses', { title: 'A course', ...body });
    expectStatus(res, 201);
    return res.body.data;
  };

  it('11. deleting a published course emits course.unpublished with its embedUrl; a draft emits nothing', async () => {
    const published = await course();
    expectStatus(await req('PATCH', `/courses/${published.id}`, { status: 'published' }), 200);
    const draft = await course();
    expectStatus(await req('DELETE', `/courses/${published.id}`), 204);
    expectStatus(await req('DELETE', `/courses/${draft.id}`), 204);
    const events = (await outboxOf(em(), ws.id)).map((e) => ({
      type: e.type,
      id: (e.data.course as { id: string }).id,
      embedUrl: e.data.embedUrl,
    }));
    expect(events.filter((e) => e.id === published.id)).to.deep.equal([
      { type: 'course.published', id: published.id, embedUrl: `http://lectern.test/embed/${published.id}` },
      { type: 'course.unpublished', id: published.id, embedUrl: `http://lectern.test/embed/${published.id}` },
    ]);
    expect(events.filter((e) => e.id === draft.id)).to.deep.equal([]);
  });

  describe('13. read-only fields are ignored on write, everywhere', () => {
    it('a fetched theme sent back as a PATCH (and as a POST) is accepted; read-only fields keep their values', async () => {
      const created = await req<Json>('POST', '/themes', { name: 'T', tokens: { concept: 'calm' } });
      expectStatus(created, 201);
      const fetched = (await req<Json>('GET', `/themes/${created.body.data.id as string}`)).body.data;
      const patched = await req<Json>('PATCH', `/themes/${fetched.id as string}`, {
        ...fetched,
        id: 'thm_forged',
        workspaceId: 'ws_forged',
        createdAt: '2000-01-01T00:00:00.000Z',
        name: 'T2',
      });
      expectStatus(patched, 200);
      expect(patched.body.data).to.include({ id: fetched.id, workspaceId: ws.id, name: 'T2' });
      expect(patched.body.data.createdAt).to.equal(fetched.createdAt);
      const copy = await req<Json>('POST', '/themes', { ...fetched, name: 'Copy' });
      expectStatus(copy, 201);
      expect(copy.body.data.id).to.not.equal(fetched.id);
    });

    it('a fetched certificate template sent back as a PATCH is accepted; a misspelled key is still refused', async () => {
      const created = await req<Json>('POST', '/certificates', { name: 'C' });
      expectStatus(created, 201);
      const fetched = created.body.data;
      const patched = await req<Json>('PATCH', `/certificates/${fetched.id as string}`, {
        ...fetched,
        name: 'C2',
      });
      expectStatus(patched, 200);
      expect(patched.body.data).to.include({ id: fetched.id, name: 'C2' });
      const typo = await req<Json>('PATCH', `/certificates/${fetched.id as string}`, { nmae: 'x' });
      expectIssue(typo, [], 'unrecognized_keys');
    });
  });

  describe('14. a known optional block field sent as null is treated as absent', () => {
    it('top-level and item fields: accepted and not stored; unknown fields keep their null', async () => {
      const c = await course({
        screens: [
          {
            id: 's1',
            title: 'S',
            blocks: [
              { id: 'h', type: 'heading', text: 'Hi', level: null },
              {
                id: 'q',
                type: 'quiz_single_choice',
                question: 'Q?',
                explanation: null,
                options: [
                  { id: 'a', text: 'A', correct: null },
                  { id: 'b', text: 'B', correct: true },
                ],
                custom: null,
              },
            ],
          },
        ],
      });
      const [h, q] = c.screens[0].blocks as Json[];
      expect(h).to.deep.equal({ id: 'h', type: 'heading', text: 'Hi' });
      expect(q).to.not.have.property('explanation');
      expect((q.options as Json[])[0]).to.deep.equal({ id: 'a', text: 'A' });
      expect(q).to.have.property('custom', null);
      const again = await req<CourseDto>('GET', `/courses/${c.id}`);
      expect(again.body.data.screens[0].blocks[0]).to.deep.equal({ id: 'h', type: 'heading', text: 'Hi' });
    });

    it('a wrong non-null type is still a 400', async () => {
      const res = await req('POST', '/courses', {
        title: 'x',
        screens: [{ id: 's1', title: 'S', blocks: [{ id: 'h', type: 'heading', level: 'big' }] }],
      });
      expectIssue(res, ['screens', 0, 'blocks', 0, 'level']);
    });
  });

  describe('15. certificate template logoUrl and corners', () => {
    it('a signed CDN URL without an extension is accepted; a non-URL is refused', async () => {
      const url = 'https://cdn.example.com/assets/8f2c1a?sig=abc&exp=1700000000';
      const ok = await req<Json>('POST', '/certificates', { name: 'L', tokens: { logoUrl: url } });
      expectStatus(ok, 201);
      expect((ok.body.data.tokens as Json).logoUrl).to.equal(url);
      const bad = await req('POST', '/certificates', { name: 'L', tokens: { logoUrl: 'ftp://x/logo.png' } });
      expectIssue(bad, ['tokens', 'logoUrl']);
    });

    it('one corner set onto the other default is accepted; two set corners that clash are refused', async () => {
      const seal = await req('POST', '/certificates', { name: 'S', tokens: { sealCorner: 'bottomEnd' } });
      expectStatus(seal, 201);
      const qr = await req('POST', '/certificates', { name: 'Q', tokens: { qrCorner: 'bottomStart' } });
      expectStatus(qr, 201);
      const both = await req('POST', '/certificates', {
        name: 'B',
        tokens: { qrCorner: 'topStart', sealCorner: 'topStart' },
      });
      expectIssue(both, ['tokens', 'sealCorner']);
    });
  });

  describe('16. externalId is stored exactly as sent', () => {
    it('"  a " comes back as "  a ", distinct from "a"; empty and whitespace-only are refused', async () => {
      const spaced = await req<Json>('POST', '/identities', { externalId: '  a ' });
      expectStatus(spaced, 201);
      expect(spaced.body.data.externalId).to.equal('  a ');
      const plain = await req<Json>('POST', '/identities', { externalId: 'a' });
      expectStatus(plain, 201);
      expect(plain.body.data.id).to.not.equal(spaced.body.data.id);
      for (const externalId of ['', '   ', '\t']) {
        expectIssue(await req('POST', '/identities', { externalId }), ['externalId']);
      }
    });
  });

  describe('17. translatable paths never collide', () => {
    it('screen "s1.b:m1" and block "m1" on screen "s1" get distinct paths, translated separately', async () => {
      const c = await course({
        screens: [
          { id: 's1.b:m1', title: 'Tricky', blocks: [{ id: 'x', type: 'text', text: 'one' }] },
          { id: 's1', title: 'Plain', blocks: [{ id: 'm1', type: 'text', text: 'two' }] },
        ],
      });
      const t = await req<{ fields: { path: string; sourceText: string }[] }>(
        'GET',
        `/courses/${c.id}/translatable`,
      );
      expectStatus(t, 200);
      const paths = t.body.data.fields.map((f) => f.path);
      expect(new Set(paths).size).to.equal(paths.length);
      expect(paths).to.include('s:s1\\.b\\:m1.title');
      expect(paths).to.include('s:s1.b:m1.text');
      const tr = await req<Json>('POST', `/courses/${c.id}/translations`, { locale: 'fr' });
      expectStatus(tr, 201);
      const patched = await req<{ content: Json }>(
        'PATCH',
        `/courses/${c.id}/translations/${tr.body.data.id as string}`,
        { content: { 's:s1\\.b\\:m1.title': 'Délicat', 's:s1.b:m1.text': 'deux' } },
      );
      expectStatus(patched, 200);
      expect(patched.body.data.content).to.deep.equal({
        's:s1\\.b\\:m1.title': 'Délicat',
        's:s1.b:m1.text': 'deux',
      });
    });
  });

  describe('18. GET /collections/:id returns the Course objects in display order', () => {
    it('full courses without screens, in position order', async () => {
      const a = await course({ title: 'First' });
      const b = await course({ title: 'Second', screens: [{ id: 's', title: 'S', blocks: [] }] });
      const col = await req<Json>('POST', '/collections', { name: 'Col' });
      expectStatus(col, 201);
      const id = col.body.data.id as string;
      for (const c of [a, b])
        expectStatus(await req('POST', `/collections/${id}/courses`, { courseId: c.id }), 201);
      expectStatus(await req('PATCH', `/collections/${id}/courses/${b.id}`, { direction: -1 }), 200);
      const got = await req<{ courses: Json[] }>('GET', `/collections/${id}`);
      expectStatus(got, 200);
      const { screens: _s, ...bSummary } = b;
      const { screens: _t, ...aSummary } = a;
      expect(got.body.data.courses).to.deep.equal([bSummary, aSummary]);
      for (const c of got.body.data.courses) expect(c).to.not.have.property('screens');
    });
  });
});

describe('hardening: database errors are logged without SQL values (issue 8, item 8)', () => {
  let logApp: CustomApp;
  let ws: TestWorkspace;
  const logged: string[] = [];
  before(async () => {
    const sink = new Writable({
      write(chunk: Buffer, _enc, cb) {
        logged.push(chunk.toString());
        cb();
      },
    });
    logApp = await startCustomApp(
      {},
      ({ api: router }) => {
        router.route(
          {
            method: 'get',
            path: '/__test/db-error',
            operationId: 'getTestDbError',
            summary: 'fails in PostgreSQL with a bound value',
            description: 'Registered by this test only.',
            tags: ['Health'],
            responses: { 200: { description: 'never', schema: z.unknown() } },
          },
          async () => {
            await boundQuery(logApp.rt.orm.em.fork(), 'select ?::int as n', [
              "Ada O'Lovelace searched for secrets",
            ]);
          },
        );
      },
      { log: createLogger({ level: 'info', destination: sink }) },
    );
    ws = await makeWorkspace(logApp.rt.orm.em.fork());
  });
  after(async () => logApp?.close());

  it('500 for the caller; the log line keeps the statement, SQLSTATE and request id, not the value', async () => {
    const res = await call(logApp.base, 'GET', '/__test/db-error', {
      key: ws.key,
      headers: { 'x-request-id': 'req-db-error-1' },
    });
    expect(res.status).to.equal(500);
    const line = logged.find((l) => l.includes('request failed'));
    expect(line, logged.join('\n')).to.not.equal(undefined);
    expect(line).to.contain('req-db-error-1');
    expect(line).to.contain('22P02');
    expect(line).to.contain('select');
    expect(line, line).to.not.contain('Lovelace');
    expect(logged.join('\n')).to.not.contain('Lovelace');
  });
});
