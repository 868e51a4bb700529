/**
 * @lectern/client against a real API: typed methods by operationId, LecternError with the stable codes, paged
 * lists as async iterators, the service root with or without /api/v1; and the committed generated files match a
 * fresh render of the document the service serves (a route added without `npm run client:generate` fails here).
 */
import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { LecternClient, LecternError, OPERATIONS } from '@lectern/client';
import { renderClientFiles } from '../../scripts/client/generate.js';
import { makeWorkspace, startTestApp, type TestApp, type TestWorkspace } from '../support/context.js';

const root = path.resolve(import.meta.dirname, '../../libs/client');

describe('client: @lectern/client against the service', function () {
  this.timeout(120_000);
  let app: TestApp;
  let ws: TestWorkspace;
  let client: LecternClient;

  before(async () => {
    app = await startTestApp();
    ws = await makeWorkspace(app.rt.orm.em.fork(), 'scale', 'Client');
    client = new LecternClient({ baseUrl: app.url, apiKey: ws.key });
  });
  after(async () => app?.close());

  it('the generated types and operation table are those of the served document (regenerate when stale)', async () => {
    const doc = (await (await fetch(`${app.base}/openapi.json`)).json()) as {
      paths: Record<string, Record<string, { operationId: string }>>;
    };
    const files = await renderClientFiles(doc);
    for (const [file, text] of Object.entries(files)) {
      const committed = readFileSync(path.join(root, file), 'utf8');
      expect(committed === text, `libs/client/${file} is stale: run npm run client:generate`).to.equal(true);
    }
    const served = Object.values(
      doc.paths as Record<string, Record<string, { operationId: string }>>,
    ).flatMap((ops) => Object.values(ops).map((op) => op.operationId));
    expect(Object.keys(OPERATIONS).sort()).to.deep.equal([...served].sort());
  });

  it('a method per operationId: create, read, update, typed answers', async () => {
    const created = await client.createCourse({
      body: {
        title: 'Client course',
        screens: [{ id: 's1', title: 'One', blocks: [{ id: 'b1', type: 'text', text: 'Hello' }] }],
      } as never,
    });
    expect(created.data.status).to.equal('draft');
    const got = await client.getCourse({ params: { id: created.data.id } });
    expect(got.data.title).to.equal('Client course');
    const me = await client.getWorkspace();
    expect(me).to.be.an('object');
  });

  it('errors are LecternError with the stable code, status, message and issues; nothing is changed', async () => {
    const before = (await client.listCourses()).data.length;
    try {
      await client.createCourse({ body: { title: '' } as never });
      expect.fail('a bad body must throw');
    } catch (err) {
      expect(err).to.be.instanceOf(LecternError);
      const e = err as LecternError;
      expect([e.status, e.code, e.operationId]).to.deep.equal([400, 'invalid_request', 'createCourse']);
      expect(e.issues).to.be.an('array').that.is.not.empty;
    }
    expect((await client.listCourses()).data.length).to.equal(before);
    const missing = await client.getCourse({ params: { id: 'crs_nope' } }).catch((e: LecternError) => e);
    expect((missing as LecternError).code).to.equal('not_found');
    const readOnly = new LecternClient({ baseUrl: `${app.base}/`, apiKey: ws.readKey });
    const refused = await readOnly
      .createCourse({ body: { title: 'x', screens: [] } as never })
      .catch((e) => e);
    expect((refused as LecternError).code).to.equal('insufficient_scope');
    // A path parameter never leaves its segment.
    const escaped = await client.callOperation('getCourse', { params: { id: '../me' } as never });
    expect(escaped.status).to.equal(404);
  });

  it('paged lists iterate every item across pages', async () => {
    for (let i = 0; i < 5; i++)
      await client.upsertIdentity({ body: { externalId: `client-${i}`, name: `Learner ${i}` } as never });
    const seen: string[] = [];
    for await (const identity of client.paginate('listIdentities', {
      query: { limit: 2, search: 'client-' } as never,
    }))
      seen.push((identity as { externalId: string }).externalId);
    expect(seen.sort()).to.deep.equal(['client-0', 'client-1', 'client-2', 'client-3', 'client-4']);
  });

  it('callOperation answers whatever the status, with bytes for a file', async () => {
    const answer = await client.callOperation('getApiReferenceAsset', {
      params: { name: 'init.js' } as never,
    });
    expect(answer.status).to.equal(200);
    expect(String(answer.body)).to.satisfy((b: string) => b.length > 0);
    const bad = await new LecternClient({ baseUrl: app.url, apiKey: 'lk_wrong' }).callOperation(
      'listCourses',
    );
    expect(bad.status).to.equal(401);
    expect((bad.body as { error: string }).error).to.equal('unauthorized');
  });
});
