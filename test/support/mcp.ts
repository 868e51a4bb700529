import { expect } from 'chai';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { api } from './authoring.js';
import { startScormImportWorker } from '@lectern/scorm';
import { makeWorkspace, startTestWorkers, type TestWorkers, type TestWorkspace } from './context.js';
import { createEmbedKey, playerApi, quizFinishEvents, quizScreens, signIdentity } from './player.js';
import type { CustomApp } from './spine.js';
import { pngOf } from './media.js';
import { exportedPackageOf } from './scorm-import.js';

interface OpenApiDoc {
  paths: Record<string, Record<string, { operationId: string }>>;
}

export interface ToolAnswer {
  status: number;
  body: { data?: unknown; error?: string; message?: string; issues?: unknown[]; [k: string]: unknown };
}

export const newClient = () => new Client({ name: 'lectern-test', version: '1.0.0' });

/** A tool's result; `isError` and the structured `{status, body}` of call_operation. */
export async function callTool(
  client: Client,
  name: string,
  args: Record<string, unknown>,
): Promise<{ isError: boolean; structured: Record<string, unknown>; text: string }> {
  const res = (await client.callTool({ name, arguments: args })) as CallToolResult;
  const text = res.content.map((c) => (c.type === 'text' ? c.text : '')).join('\n');
  return {
    isError: res.isError === true,
    structured: (res.structuredContent ?? {}) as Record<string, unknown>,
    text,
  };
}

export async function callOperation(
  client: Client,
  operationId: string,
  input: { params?: Record<string, string>; query?: Record<string, unknown>; body?: unknown } = {},
): Promise<ToolAnswer & { isError: boolean; text: string }> {
  const r = await callTool(client, 'call_operation', { operationId, ...input });
  return { ...(r.structured as unknown as ToolAnswer), isError: r.isError, text: r.text };
}

/** How a transport's test connects a client with a key (and optional toolsets / read-only flag). */
export type Connect = (key: string, opts?: { toolsets?: string; readOnly?: boolean }) => Promise<Client>;

/**
 * The journeys both transports must pass: the same tools, the same answers, the same refusals, because both run
 * each operation as its REST call.
 */
export function mcpJourneys(setup: () => { app: CustomApp; connect: Connect }) {
  const clients: Client[] = [];
  const connect: Connect = async (key, opts) => {
    const c = await setup().connect(key, opts);
    clients.push(c);
    return c;
  };
  const em = () => setup().app.rt.orm.em.fork();
  afterEach(async () => {
    for (const c of clients.splice(0)) await c.close();
  });

  let scale: TestWorkspace;
  // A SCORM import is run by the scorm worker: one here, for the file journey.
  let workers: TestWorkers;
  before(async () => {
    scale = await makeWorkspace(em(), 'scale');
    workers = await startTestWorkers('mcp-scorm-import', (rt) => startScormImportWorker(rt));
  });
  after(async () => workers?.stop());

  it('lists under 15 tools in under 20 KB by default, each curated one with an outputSchema and hints', async () => {
    const client = await connect(scale.key);
    const { tools } = await client.listTools();
    const size = Buffer.byteLength(JSON.stringify({ tools }));
    expect(tools.length).to.be.lessThan(15);
    expect(size, `tools/list is ${size} bytes`).to.be.lessThan(20 * 1024);
    const names = tools.map((t) => t.name);
    expect(names).to.include.members([
      'search_operations',
      'call_operation',
      'draft_course_from_outline',
      'publish_course',
      'course_progress',
    ]);
    for (const t of tools) {
      expect(t.outputSchema, `${t.name} outputSchema`).to.be.an('object');
      expect(t.annotations?.readOnlyHint, `${t.name} readOnlyHint`).to.be.a('boolean');
    }
    expect(tools.find((t) => t.name === 'publish_course')?.annotations?.idempotentHint).to.equal(true);
  });

  it('every operation of the OpenAPI document under /api/v1 is reachable through call_operation', async () => {
    const doc = (await (await fetch(`${setup().app.url}/api/v1/openapi.json`)).json()) as OpenApiDoc;
    const ids = Object.entries(doc.paths)
      .filter(([p]) => p.startsWith('/api/v1/'))
      .flatMap(([, ops]) => Object.values(ops).map((o) => o.operationId));
    expect(ids).to.include.members(['createCourse', 'listCompletions', 'exportCourseToScorm']);
    // The read-only key keeps every write from changing anything: a write is answered insufficient_scope, which
    // proves it reached the operation's own gate.
    const client = await connect(scale.readKey, { readOnly: true });
    const unreachable: string[] = [];
    for (const operationId of ids) {
      const r = await callOperation(client, operationId, {
        params: { id: 'x', courseId: 'x', translationId: 'x', deliveryId: 'x', serial: 'x' },
      });
      if (r.text.includes('unknown operation') || typeof r.status !== 'number') unreachable.push(operationId);
    }
    expect(unreachable).to.deep.equal([]);
  });

  it('search_operations finds createCourse with its method, path and input schema', async () => {
    const client = await connect(scale.key);
    const r = await callTool(client, 'search_operations', { query: 'create a course' });
    expect(r.isError).to.equal(false);
    const ops = r.structured.operations as {
      operationId: string;
      method: string;
      path: string;
      inputSchema: { properties: Record<string, unknown> };
    }[];
    const create = ops.find((o) => o.operationId === 'createCourse');
    expect(create, JSON.stringify(ops.map((o) => o.operationId))).to.not.equal(undefined);
    expect(create!.method).to.equal('POST');
    expect(create!.path).to.equal('/api/v1/courses');
    expect(create!.inputSchema.properties).to.have.property('body');
    const exact = await callTool(client, 'search_operations', { query: 'listCompletions' });
    const only = exact.structured.operations as {
      operationId: string;
      inputSchema: { properties?: object };
    }[];
    expect(only.map((o) => o.operationId)).to.deep.equal(['listCompletions']);
    expect(only[0].inputSchema.properties).to.have.property('query');
    // Both course schemas match "update course"; the answer carries one of them, not two.
    const broad = await client.callTool({ name: 'search_operations', arguments: { query: 'update course' } });
    expect(JSON.stringify(broad).length).to.be.lessThan(48 * 1024);
  });

  it('create → publish → a learner finishes → the completion is listed', async () => {
    const client = await connect(scale.key);
    const created = await callOperation(client, 'createCourse', {
      body: { title: 'Fire safety', screens: quizScreens() },
    });
    expect(created.isError, created.text).to.equal(false);
    expect(created.status).to.be.oneOf([200, 201]);
    const course = created.body.data as { id: string; status: string };
    expect(course.status).to.equal('draft');

    const published = await callTool(client, 'publish_course', { courseId: course.id });
    expect(published.isError, published.text).to.equal(false);
    expect(published.structured).to.deep.equal({ courseId: course.id, status: 'published' });

    const { url, base } = setup().app;
    const ek = await createEmbedKey(base, scale.key);
    const player = playerApi(url);
    const opened = await player<{ completion: { id: string }; runToken: string }>('POST', '/runs', {
      body: { courseId: course.id, identity: await signIdentity(ek, {}, { sub: 'ada' }) },
    });
    expect(opened.status, opened.text).to.equal(201);
    const sent = await player('POST', `/runs/${opened.body.data.completion.id}/events`, {
      token: opened.body.data.runToken,
      body: { batchId: 'b1', events: quizFinishEvents() },
    });
    expect(sent.status, sent.text).to.equal(200);

    const listed = await callOperation(client, 'listCompletions', { query: { courseId: course.id } });
    expect(listed.isError, listed.text).to.equal(false);
    const rows = listed.body.data as { identityExternalId: string; status: string; score: number }[];
    expect(rows.map((c) => [c.identityExternalId, c.status, c.score])).to.deep.equal([
      ['ada', 'completed', 100],
    ]);

    const progress = await callTool(client, 'course_progress', { courseId: course.id });
    expect(progress.isError, progress.text).to.equal(false);
    expect(progress.structured).to.include({
      courseId: course.id,
      total: 1,
      completed: 1,
      inProgress: 0,
      averageScore: 100,
    });
  });

  it('draft_course_from_outline creates a draft through createCourse (the same validation)', async () => {
    const client = await connect(scale.key);
    const r = await callTool(client, 'draft_course_from_outline', {
      title: 'Onboarding',
      sections: [
        { title: 'Welcome', points: ['Who we are'] },
        { title: 'Check', question: { text: 'Ready?', options: ['Yes', 'No'], correctIndex: 0 } },
      ],
    });
    expect(r.isError, r.text).to.equal(false);
    expect(r.structured).to.include({ title: 'Onboarding', status: 'draft', screens: 2 });
    const got = await callOperation(client, 'getCourse', { params: { id: String(r.structured.courseId) } });
    const screens = (got.body.data as { screens: { blocks: { type: string }[] }[] }).screens;
    expect(screens[1].blocks.map((b) => b.type)).to.deep.equal(['heading', 'quiz_single_choice']);
  });

  it('a refused call is a tool error with the REST code, message and issues; bad input changes nothing', async () => {
    const client = await connect(scale.key);
    const bad = await callOperation(client, 'createCourse', { body: { title: '' } });
    expect(bad.isError).to.equal(true);
    expect(bad.status).to.equal(400);
    expect(bad.body.error).to.equal('invalid_request');
    expect(bad.body.issues).to.be.an('array').that.is.not.empty;
    const unknown = await callOperation(client, 'dropAllTables', {});
    expect(unknown.isError).to.equal(true);
    expect(unknown.text).to.include('unknown operation');
    const courses = await api(setup().app.base, scale.key)<unknown[]>('GET', '/courses');
    expect((courses.body.data as { title: string }[]).map((c) => c.title)).to.not.include('');
  });

  it('sends files: an image to uploadMedia as a form part, a SCORM zip as base64; malformed base64 is a 400', async () => {
    const client = await connect(scale.key);
    const found = await callTool(client, 'search_operations', { query: 'upload media' });
    const upload = (found.structured.operations as { operationId: string; inputSchema: string }[]).find(
      (o) => o.operationId === 'uploadMedia',
    );
    expect(JSON.stringify(upload?.inputSchema)).to.include('base64');
    const png = await pngOf(8, 6);
    const uploaded = await callOperation(client, 'uploadMedia', {
      body: { file: { base64: png.toString('base64'), filename: 'dot.png' }, kind: 'image' },
    });
    expect(uploaded.isError, uploaded.text).to.equal(false);
    expect(uploaded.status).to.equal(201);
    const media = (uploaded.body as { data: { url: string; bytes: number; kind: string } }).data;
    expect(media).to.include({ bytes: png.length, kind: 'image' });
    expect(media.url).to.match(/^media:\/\/med_/);
    // The bytes decide, as over REST: a text file sent as an image is refused by the operation itself.
    const notImage = await callOperation(client, 'uploadMedia', {
      body: { file: { base64: Buffer.from('hello').toString('base64') }, kind: 'image' },
    });
    expect([notImage.isError, notImage.status, (notImage.body as { error: string }).error]).to.deep.equal([
      true,
      400,
      'invalid_request',
    ]);
    const zip = exportedPackageOf(
      {
        title: 'From a tool',
        screens: [{ id: 's1', title: 'One', blocks: [{ id: 'b1', type: 'text', text: 'Hi' }] }],
      },
      [],
    );
    const imported = await callOperation(client, 'importCourseFromScorm', {
      body: { base64: zip.toString('base64') },
    });
    expect(imported.isError, imported.text).to.equal(false);
    expect(imported.status).to.equal(201);
    expect((imported.body as { data: { title: string } }).data.title).to.equal('From a tool');
    const bad = await callOperation(client, 'importCourseFromScorm', { body: { base64: 'not base64!' } });
    expect([bad.isError, bad.status, (bad.body as { error: string }).error]).to.deep.equal([
      true,
      400,
      'invalid_request',
    ]);
    expect(JSON.stringify((bad.body as { issues: unknown }).issues)).to.include('"base64"');
  });

  it('a read-only key sees only read tools (no flag: the key says so) and is refused a write with insufficient_scope', async () => {
    // No read-only flag: /mcp reads the key's scope, stdio asks the service (GET /me `key_scope`).
    const client = await connect(scale.readKey);
    const { tools } = await client.listTools();
    for (const t of tools) expect(t.annotations?.readOnlyHint, t.name).to.equal(true);
    expect(tools.map((t) => t.name)).to.not.include('publish_course');
    const found = await callTool(client, 'search_operations', { query: 'create course' });
    const methods = (found.structured.operations as { method: string }[]).map((o) => o.method);
    expect(methods).to.not.be.empty;
    expect([...new Set(methods)]).to.deep.equal(['GET']);
    const refused = await callOperation(client, 'createCourse', { body: { title: 'Nope' } });
    expect(refused.isError).to.equal(true);
    expect([refused.status, refused.body.error]).to.deep.equal([403, 'insufficient_scope']);
    const read = await callOperation(client, 'listCourses');
    expect(read.isError, read.text).to.equal(false);
  });

  it('a Build key is refused a Scale operation with plan_required', async () => {
    const build = await makeWorkspace(em(), 'build');
    const client = await connect(build.key);
    const r = await callOperation(client, 'listThemes');
    expect(r.isError).to.equal(true);
    expect([r.status, r.body.error]).to.deep.equal([403, 'plan_required']);
    expect(r.body.message).to.match(/Scale/);
  });

  it("another workspace's course is not_found, through call_operation, a workflow tool and a resource", async () => {
    const other = await makeWorkspace(em(), 'scale');
    const theirs = await api(setup().app.base, other.key)<{ id: string }>('POST', '/courses', {
      title: 'Theirs',
    });
    const id = theirs.body.data.id;
    const client = await connect(scale.key);
    const r = await callOperation(client, 'getCourse', { params: { id } });
    expect([r.isError, r.status, r.body.error]).to.deep.equal([true, 404, 'not_found']);
    const pub = await callTool(client, 'publish_course', { courseId: id });
    expect(pub.isError).to.equal(true);
    expect((pub.structured.body as { error: string }).error).to.equal('not_found');
    let readError = '';
    await client
      .readResource({ uri: `lectern://courses/${id}` })
      .catch((e: Error) => (readError = e.message));
    expect(readError).to.include('not_found');
    const still = await api(setup().app.base, other.key)<{ status: string }>('GET', `/courses/${id}`);
    expect(still.body.data.status).to.equal('draft');
  });

  it('a path parameter cannot leave its segment', async () => {
    const client = await connect(scale.key);
    for (const id of ['..', '../courses', '%2e%2e', 'x?limit=1', 'a/b']) {
      const r = await callOperation(client, 'getCourse', { params: { id } });
      expect([r.status, r.body.error], id).to.deep.equal([404, 'not_found']);
    }
  });

  it('reads a course as a resource and offers the prompts', async () => {
    const client = await connect(scale.key);
    const created = await api(setup().app.base, scale.key)<{ id: string }>('POST', '/courses', {
      title: 'Readable',
    });
    const id = created.body.data.id;
    const res = await client.readResource({ uri: `lectern://courses/${id}` });
    const first = res.contents[0] as { text: string };
    expect(JSON.parse(first.text)).to.include({ id, title: 'Readable' });
    const fields = await client.readResource({ uri: `lectern://courses/${id}/translatable` });
    expect(JSON.parse((fields.contents[0] as { text: string }).text)).to.have.property('fields');
    const { prompts } = await client.listPrompts();
    expect(prompts.map((p) => p.name)).to.include.members(['translate_course', 'course_report']);
  });
}
