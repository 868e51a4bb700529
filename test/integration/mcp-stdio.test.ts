import { readFile, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import { StdioClientTransport, getDefaultEnvironment } from '@modelcontextprotocol/sdk/client/stdio.js';
import { makeWorkspace } from '../support/context.js';
import { callOperation, mcpJourneys, newClient, type Connect } from '../support/mcp.js';
import { REPO_ROOT, runTs, startCustomApp, type CustomApp } from '../support/spine.js';

const CLI = path.join(REPO_ROOT, 'apps/cli/src/main.ts');
const ZIP = Buffer.concat([Buffer.from('PK\x03\x04'), Buffer.alloc(200 * 1024, 7)]);

describe('mcp: the tool server on stdio (lectern mcp against a running service)', () => {
  let app: CustomApp;
  before(async () => {
    app = await startCustomApp({ RATE_LIMIT_PER_MINUTE: '100000' }, (built) =>
      built.api.route(
        {
          method: 'get',
          path: '/test-binary',
          operationId: 'getTestBinary',
          summary: 'test binary answer',
          description: 'Registered by this test only.',
          tags: ['Courses'],
          responses: { 200: { description: 'a zip', contentType: 'application/zip' } },
        },
        (ctx) => {
          ctx.type = 'application/zip';
          ctx.set('Content-Disposition', 'attachment; filename="../../course.zip"');
          ctx.body = ZIP;
        },
      ),
    );
  });
  after(async () => app?.close());

  /** `lectern mcp` spawned through tsx, as `npx lectern mcp` runs it, configured the way a client config does. */
  const spawnClient = async (env: Record<string, string>, args: string[] = []) => {
    const client = newClient();
    await client.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: ['--import', 'tsx', CLI, 'mcp', ...args],
        cwd: REPO_ROOT,
        env: { ...getDefaultEnvironment(), ...env },
        stderr: 'pipe',
      }),
    );
    return client;
  };

  // LECTERN_URL ending in /api/v1, as the SPEC's {base_url} is written.
  const connect: Connect = (key, opts = {}) =>
    spawnClient(
      {
        LECTERN_URL: app.base,
        LECTERN_API_KEY: key,
        ...(opts.readOnly ? { LECTERN_MCP_READ_ONLY: '1' } : {}),
      },
      opts.toolsets ? ['--toolsets', opts.toolsets] : [],
    );

  describe('journeys', () => mcpJourneys(() => ({ app, connect })));

  it('takes the service root too, and picks toolsets by flag or LECTERN_MCP_TOOLSETS', async () => {
    const ws = await makeWorkspace(app.rt.orm.em.fork(), 'scale');
    const byEnv = await spawnClient({
      LECTERN_URL: `${app.url}/`,
      LECTERN_API_KEY: ws.key,
      LECTERN_MCP_TOOLSETS: 'delivery',
    });
    try {
      expect((await byEnv.listTools()).tools.map((t) => t.name)).to.deep.equal(['course_progress']);
    } finally {
      await byEnv.close();
    }
    const byFlag = await spawnClient({ LECTERN_URL: app.url, LECTERN_API_KEY: ws.key }, [
      '--toolsets=operations',
    ]);
    try {
      expect((await byFlag.listTools()).tools.map((t) => t.name)).to.deep.equal([
        'search_operations',
        'call_operation',
      ]);
      const me = await callOperation(byFlag, 'getWorkspace');
      expect(me.body).to.include({ workspace_id: ws.id });
    } finally {
      await byFlag.close();
    }
  });

  it('a binary answer is a private temporary file named by a file: link, never inline', async () => {
    const ws = await makeWorkspace(app.rt.orm.em.fork(), 'scale');
    const client = await spawnClient({ LECTERN_URL: app.url, LECTERN_API_KEY: ws.key });
    try {
      const r = await callOperation(client, 'getTestBinary');
      expect(r.isError, r.text).to.equal(false);
      expect(r.text.length).to.be.lessThan(2000);
      const data = r.body.data as { url: string; filename: string; bytes: number };
      expect(data).to.include({ filename: '../../course.zip', bytes: ZIP.length });
      const file = fileURLToPath(data.url);
      // The server's name for the file never leaves the link's own folder.
      expect(path.basename(file)).to.equal('course.zip');
      expect(path.dirname(path.dirname(file))).to.equal(os.tmpdir());
      expect(path.basename(path.dirname(file))).to.match(/^lectern-mcp-/);
      expect((await stat(path.dirname(file))).mode & 0o077).to.equal(0);
      expect((await stat(file)).mode & 0o077).to.equal(0);
      expect((await readFile(file)).equals(ZIP)).to.equal(true);
    } finally {
      await client.close();
    }
  });

  it('a wrong key is the API’s 401 as a tool error', async () => {
    const client = await spawnClient({ LECTERN_URL: app.url, LECTERN_API_KEY: 'lk_wrong' });
    try {
      const r = await callOperation(client, 'listCourses');
      expect([r.isError, r.status, r.body.error]).to.deep.equal([true, 401, 'unauthorized']);
    } finally {
      await client.close();
    }
  });

  it('refuses to start without a key, with a bad toolset, or when the service cannot be reached', async () => {
    const base = { ...getDefaultEnvironment(), LECTERN_URL: app.url };
    const noKey = await runTs(CLI, ['mcp'], base);
    expect(noKey.code).to.equal(64);
    expect(noKey.stderr).to.include('LECTERN_API_KEY');
    const badSet = await runTs(CLI, ['mcp', '--toolsets', 'admin'], { ...base, LECTERN_API_KEY: 'lk_x' });
    expect(badSet.code).to.equal(64);
    expect(badSet.stderr).to.include('known toolsets');
    const down = await runTs(CLI, ['mcp'], {
      ...base,
      LECTERN_URL: 'http://127.0.0.1:9',
      LECTERN_API_KEY: 'lk_x',
    });
    expect(down.code).to.equal(69);
    expect(down.stderr).to.include('cannot reach http://127.0.0.1:9');
  });
});
