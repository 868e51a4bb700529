import http from 'node:http';
import { expect } from 'chai';
import { z } from 'zod';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { setBilling } from '@lectern/admin';
import { api } from '../support/authoring.js';
import { makeWorkspace, type TestWorkspace } from '../support/context.js';
import { callOperation, callTool, mcpJourneys, newClient, type Connect } from '../support/mcp.js';
import type { BuiltApp } from '@lectern/api';
import { startCustomApp, type CustomApp } from '../support/spine.js';

/** A fake of the generation routes another change adds (createGenerationJob, getGenerationJob). */
const PDF = Buffer.concat([
  Buffer.from('%PDF-1.4\n'),
  Buffer.alloc(64 * 1024, 0x20),
  Buffer.from('\n%%EOF\n'),
]);

describe('mcp: the tool server over Streamable HTTP (/mcp)', () => {
  let app: CustomApp;
  let polls = 0;
  /** The service's own generation routes, once they exist; until then this test registers a fake of them. */
  let realGeneration = false;
  before(async () => {
    app = await startCustomApp({ RATE_LIMIT_PER_MINUTE: '100000' }, (built) => {
      realGeneration = built.api.specs.some((s) => s.operationId === 'createGenerationJob');
      if (!realGeneration) fakeGeneration(built);
      built.api.route(
        {
          method: 'get',
          path: '/test-binary',
          operationId: 'getTestBinary',
          summary: 'test binary answer',
          description: 'Registered by this test only.',
          tags: ['Courses'],
          responses: { 200: { description: 'a PDF', contentType: 'application/pdf' } },
        },
        (ctx) => {
          ctx.type = 'application/pdf';
          ctx.set('Content-Disposition', 'attachment; filename="certificate.pdf"');
          ctx.body = PDF;
        },
      );
    });
  });
  after(async () => app?.close());

  function fakeGeneration(built: BuiltApp) {
    built.api.route(
      {
        method: 'post',
        path: '/generate',
        operationId: 'createGenerationJob',
        summary: 'test generation',
        description: 'Registered by this test only.',
        tags: ['Courses'],
        body: z.object({ prompt: z.string().min(1) }),
        responses: { 202: { description: 'queued', schema: z.unknown() } },
      },
      (ctx) => {
        ctx.status = 202;
        ctx.body = { data: { id: 'gen_1', status: 'queued' } };
      },
    );
    built.api.route(
      {
        method: 'get',
        path: '/generate/:id',
        operationId: 'getGenerationJob',
        summary: 'test generation job',
        description: 'Registered by this test only.',
        tags: ['Courses'],
        responses: { 200: { description: 'job', schema: z.unknown() } },
      },
      (ctx) => {
        polls++;
        ctx.body = {
          data: { id: ctx.params.id, status: 'completed', courseId: 'crs_generated', error: null },
        };
      },
    );
  }

  const connect: Connect = async (key, opts = {}) => {
    const url = new URL(`${app.url}/mcp${opts.toolsets ? `?toolsets=${opts.toolsets}` : ''}`);
    const client = newClient();
    await client.connect(
      new StreamableHTTPClientTransport(url, {
        requestInit: { headers: { Authorization: `Bearer ${key}` } },
      }),
    );
    return client;
  };

  describe('journeys', () => mcpJourneys(() => ({ app, connect })));

  const em = () => app.rt.orm.em.fork();
  let ws: TestWorkspace;
  const clients: Client[] = [];
  const open = async (key: string, toolsets?: string) => {
    const c = await connect(key, { toolsets });
    clients.push(c);
    return c;
  };
  before(async () => {
    ws = await makeWorkspace(em(), 'scale');
  });
  afterEach(async () => {
    for (const c of clients.splice(0)) await c.close();
  });

  /** A raw JSON-RPC POST through node:http, which (unlike fetch) sends any Host header, as a rebound page would. */
  const post = (
    headers: Record<string, string>,
    body: unknown = { jsonrpc: '2.0', id: 1, method: 'tools/list' },
    query = '',
  ): Promise<{ status: number; json(): Promise<unknown> }> =>
    new Promise((resolve, reject) => {
      const req = http.request(`${app.url}/mcp${query}`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          ...headers,
        },
      });
      req.on('response', (res) => {
        let text = '';
        res.on('data', (c: Buffer) => (text += c.toString()));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, json: async () => JSON.parse(text) as unknown }),
        );
      });
      req.on('error', reject);
      req.end(JSON.stringify(body));
    });

  it('401 without a key, or with a wrong one, in the API error shape', async () => {
    const tries: Record<string, string>[] = [
      {},
      { authorization: 'Bearer lk_nope' },
      { authorization: 'Basic abc' },
    ];
    for (const headers of tries) {
      const res = await post(headers);
      expect(res.status).to.equal(401);
      const body = (await res.json()) as { error: string; message: string };
      expect(body.error).to.equal('unauthorized');
      expect(body.message).to.be.a('string');
    }
  });

  it("a workspace past its grace period gets the API's 402 on /mcp, and its tools come back once paid", async () => {
    const owing = await makeWorkspace(em(), 'scale');
    const client = await open(owing.key);
    await setBilling(em(), owing.id, { pastDue: true, graceUntil: new Date(Date.now() - 1000) });
    const blocked = await post({ authorization: `Bearer ${owing.key}` });
    expect(blocked.status).to.equal(402);
    expect(((await blocked.json()) as { error: string }).error).to.equal('plan_required');
    let refused = '';
    await callOperation(client, 'listCourses').catch((e: Error) => (refused = e.message));
    expect(refused).to.include('plan_required');
    await setBilling(em(), owing.id, { pastDue: false });
    expect((await callOperation(client, 'listCourses')).status).to.equal(200);
  });

  it('refuses a foreign Host or Origin (DNS rebinding) before looking at the key', async () => {
    const auth = { authorization: `Bearer ${ws.key}` };
    const host = await post({ ...auth, host: 'evil.example' });
    expect(host.status).to.equal(403);
    expect(((await host.json()) as { error: string }).error).to.equal('forbidden');
    const origin = await post({ ...auth, origin: 'http://evil.example' });
    expect(origin.status).to.equal(403);
    expect(((await origin.json()) as { error: string }).error).to.equal('origin_not_allowed');
    for (const bad of ['null', 'http://lectern.test.evil.example', 'http://localhost.evil.example']) {
      const res = await post({ ...auth, origin: bad });
      expect(res.status, bad).to.equal(403);
    }
    const noKey = await post({ host: 'evil.example' });
    expect(noKey.status).to.equal(403);
    // The public host (PUBLIC_URL http://lectern.test) and loopback are served; so are loopback and public origins.
    const served: Record<string, string>[] = [
      { host: 'LECTERN.test' },
      { origin: 'http://lectern.test' },
      { origin: 'http://localhost:6274' },
    ];
    for (const headers of served) {
      expect((await post({ ...auth, ...headers })).status, JSON.stringify(headers)).to.equal(200);
    }
  });

  it('GET /mcp is 405 (stateless: no stream to resume) and a malformed body is a 400 that changes nothing', async () => {
    const get = await fetch(`${app.url}/mcp`, { headers: { authorization: `Bearer ${ws.key}` } });
    expect(get.status).to.equal(405);
    const bad = await fetch(`${app.url}/mcp`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${ws.key}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: '{"jsonrpc":',
    });
    expect(bad.status).to.equal(400);
    expect(((await bad.json()) as { error: string }).error).to.equal('invalid_request');
  });

  it('a body over 4 MiB is a 413 and tool arguments outside their schema are a tool error', async () => {
    const huge = {
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: 'x', arguments: { pad: 'a'.repeat(5 * 1024 * 1024) } },
    };
    const big = await post({ authorization: `Bearer ${ws.key}` }, huge);
    expect(big.status).to.equal(413);
    expect(((await big.json()) as { error: string }).error).to.equal('payload_too_large');
    const client = await open(ws.key);
    const r = await callTool(client, 'call_operation', { operationId: 'x'.repeat(500) });
    expect(r.isError).to.equal(true);
    expect(r.text).to.match(/validation/i);
  });

  it('toolsets are chosen by URL or header; an unknown one is a 400 naming the known ones', async () => {
    const delivery = await open(ws.key, 'delivery');
    expect((await delivery.listTools()).tools.map((t) => t.name)).to.deep.equal(['course_progress']);
    const both = await open(ws.key, 'operations,authoring');
    expect((await both.listTools()).tools.map((t) => t.name)).to.not.include('course_progress');
    const byHeader = await post({ authorization: `Bearer ${ws.key}`, 'x-mcp-toolsets': 'delivery' });
    const listed = (await byHeader.json()) as { result: { tools: { name: string }[] } };
    expect(listed.result.tools.map((t) => t.name)).to.deep.equal(['course_progress']);
    const bad = await post({ authorization: `Bearer ${ws.key}` }, undefined, '?toolsets=admin');
    expect(bad.status).to.equal(400);
    const body = (await bad.json()) as { error: string; message: string; issues: { path: string[] }[] };
    expect(body.error).to.equal('invalid_request');
    expect(body.message).to.include('operations, authoring, delivery');
    expect(body.issues[0].path).to.deep.equal(['query', 'toolsets']);
  });

  it('a binary answer is a short-lived link to the bytes, never inline', async () => {
    const client = await open(ws.key);
    const r = await callOperation(client, 'getTestBinary');
    expect(r.isError, r.text).to.equal(false);
    const data = r.body.data as {
      url: string;
      expiresAt: string;
      contentType: string;
      bytes: number;
      filename: string;
    };
    expect(data).to.include({
      contentType: 'application/pdf',
      bytes: PDF.length,
      filename: 'certificate.pdf',
    });
    expect(r.text.length).to.be.lessThan(2000);
    expect(Date.parse(data.expiresAt) - Date.now()).to.be.within(1, 11 * 60 * 1000);
    const got = await fetch(data.url);
    expect(got.status).to.equal(200);
    expect(Buffer.from(await got.arrayBuffer()).equals(PDF)).to.equal(true);
  });

  it('a JSON answer too large to show inline (the OpenAPI document) is a link too', async () => {
    const client = await open(ws.key);
    const r = await callOperation(client, 'getOpenApiDocument');
    expect(r.isError, r.text).to.equal(false);
    expect(r.text.length).to.be.lessThan(2000);
    const data = r.body.data as { url: string; contentType: string; filename: string };
    expect(data).to.include({ contentType: 'application/json', filename: 'getOpenApiDocument.json' });
    const doc = (await (await fetch(data.url)).json()) as { openapi: string };
    expect(doc.openapi).to.equal('3.1.0');
  });

  it('a paged list defaults to 20 rows and says how to get the rest', async () => {
    const busy = await makeWorkspace(em(), 'scale');
    const identities = Array.from({ length: 25 }, (_, i) => ({ externalId: `l-${i}` }));
    expect((await api(app.base, busy.key)('POST', '/identities/bulk', { identities })).status).to.equal(201);
    const client = await open(busy.key);
    const first = await callOperation(client, 'listIdentities');
    expect((first.body.data as unknown[]).length).to.equal(20);
    expect(first.text).to.include('query.offset=20');
    const rest = await callOperation(client, 'listIdentities', { query: { offset: 20 } });
    expect((rest.body.data as unknown[]).length).to.equal(5);
  });

  it('an unpaged list is cut to what fits, with a note saying how to read the rest', async () => {
    const many = await makeWorkspace(em(), 'scale');
    const req = api(app.base, many.key);
    for (let i = 0; i < 30; i++)
      expect((await req('POST', '/courses', { title: `Course ${i}` })).status).to.equal(201);
    const client = await open(many.key);
    const r = await callOperation(client, 'listCourses');
    expect(r.isError, r.text).to.equal(false);
    expect((r.body.data as unknown[]).length).to.equal(25);
    expect(r.body.truncated).to.deep.include({ shown: 25, total: 30 });
    expect(r.text).to.include('Read one item by its id');
  });

  it('generate_course_and_wait starts a job and polls it to its end', async () => {
    const client = await open(ws.key);
    const r = await callTool(client, 'generate_course_and_wait', {
      prompt: 'Fire safety for new staff',
      waitSeconds: 5,
    });
    if (realGeneration) {
      // The real routes: a job, or the API's own refusal (no provider configured here) as a tool error.
      if (r.isError) expect((r.structured.body as { error: string }).error).to.be.a('string');
      else expect(r.structured.jobId).to.be.a('string');
      return;
    }
    expect(r.isError, r.text).to.equal(false);
    expect(r.structured).to.deep.equal({
      jobId: 'gen_1',
      status: 'completed',
      courseId: 'crs_generated',
      error: null,
    });
    expect(polls).to.be.greaterThan(0);
  });

  it("/mcp messages and the operations they run draw on the key's one rate budget, as REST calls do", async () => {
    const tight = await startCustomApp({ RATE_LIMIT_PER_MINUTE: '4' });
    try {
      const w = await makeWorkspace(tight.rt.orm.em.fork(), 'scale');
      const key = w.key;
      const client = newClient();
      clients.push(client);
      await client.connect(
        new StreamableHTTPClientTransport(new URL(`${tight.url}/mcp`), {
          requestInit: { headers: { Authorization: `Bearer ${key}` } },
        }),
      );
      // initialize + notifications/initialized: 2 of 4. The tool call is 1 more and its operation the 4th.
      const r = await callOperation(client, 'getWorkspace');
      expect(r.body).to.include({ workspace_id: w.id });
      const rest = await api(tight.base, key)('GET', '/me');
      expect([rest.status, rest.body.error]).to.deep.equal([429, 'rate_limited']);
      let refused = '';
      await callOperation(client, 'getWorkspace').catch((e: Error) => (refused = e.message));
      expect(refused).to.include('rate_limited');
    } finally {
      for (const c of clients.splice(0)) await c.close();
      await tight.close();
    }
  });
});
