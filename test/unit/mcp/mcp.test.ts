import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import {
  buildRequest,
  catalogueFromOpenApi,
  decodeBody,
  parseToolsets,
  searchOperations,
  serviceRoot,
  stdioSettings,
  tempFileStore,
  type OpenApiDocument,
} from '@lectern/mcp';

const DOC: OpenApiDocument = {
  paths: {
    '/api/v1/courses': {
      get: { operationId: 'listCourses', summary: 'List courses', tags: ['Courses'] },
      post: {
        operationId: 'createCourse',
        summary: 'Create a draft course',
        tags: ['Courses'],
        requestBody: {
          content: { 'application/json': { schema: { $ref: '#/components/schemas/NewCourse' } } },
        },
      },
    },
    '/api/v1/courses/{id}': {
      get: {
        operationId: 'getCourse',
        summary: 'One course',
        tags: ['Courses'],
        parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }],
      },
    },
    '/api/v1/completions': {
      get: {
        operationId: 'listCompletions',
        summary: "Learners' runs",
        tags: ['Completions'],
        parameters: [
          { name: 'courseId', in: 'query', schema: { type: 'string' } },
          { name: 'limit', in: 'query', schema: { type: 'integer' } },
          { name: 'offset', in: 'query', schema: { type: 'integer' } },
        ],
      },
    },
    '/api/v1/courses/import/csv': {
      post: {
        operationId: 'importCourseFromCsv',
        summary: 'Import a CSV',
        tags: ['Courses'],
        requestBody: { content: { 'text/csv': { schema: { type: 'string' } } } },
      },
    },
    '/player/v1/runs': { post: { operationId: 'openRun', summary: 'Open a run', tags: ['Player API'] } },
    '/healthz': { get: { operationId: 'getLiveness', summary: 'Liveness' } },
  },
  components: {
    schemas: {
      NewCourse: {
        type: 'object',
        properties: { title: { type: 'string' }, screens: { $ref: '#/components/schemas/Screen' } },
      },
      Screen: { type: 'array' },
      Unused: { type: 'object' },
    },
  },
};

describe('mcp: the operation catalogue, requests and settings', () => {
  const cat = catalogueFromOpenApi(DOC);

  it('takes the /api/v1 operations only, with their parameters, body and paging', () => {
    expect(cat.operations.map((o) => o.operationId).sort()).to.deep.equal([
      'createCourse',
      'getCourse',
      'importCourseFromCsv',
      'listCompletions',
      'listCourses',
    ]);
    expect(cat.byId.get('getCourse')).to.include({
      method: 'GET',
      path: '/api/v1/courses/{id}',
      paged: false,
    });
    expect(cat.byId.get('listCompletions')!.paged).to.equal(true);
    expect(cat.byId.get('importCourseFromCsv')!.body).to.deep.equal({ contentType: 'text/csv', json: false });
  });

  it('inlines the components an input schema refers to, transitively, under $defs', () => {
    const schema = cat.byId.get('createCourse')!.inputSchema as {
      properties: { body: unknown };
      required: string[];
      $defs: Record<string, unknown>;
    };
    expect(schema.properties.body).to.deep.equal({ $ref: '#/$defs/NewCourse' });
    expect(schema.required).to.deep.equal(['body']);
    expect(Object.keys(schema.$defs).sort()).to.deep.equal(['NewCourse', 'Screen']);
    expect(JSON.stringify(schema)).to.not.include('#/components/');
  });

  it('search: an exact operationId alone, else ranked words with a loose stem', () => {
    expect(searchOperations(cat, 'getcourse').map((o) => o.operationId)).to.deep.equal(['getCourse']);
    expect(searchOperations(cat, 'create courses')[0].operationId).to.equal('createCourse');
    expect(searchOperations(cat, 'completion').map((o) => o.operationId)).to.deep.equal(['listCompletions']);
    expect(searchOperations(cat, 'zzz')).to.deep.equal([]);
  });

  it('encodes a path parameter whole, dots included, so it names one segment', () => {
    const get = cat.byId.get('getCourse')!;
    expect(buildRequest(get, { params: { id: '../../healthz' } }).url).to.equal(
      '/api/v1/courses/%2E%2E%2F%2E%2E%2Fhealthz',
    );
    expect(buildRequest(get, { params: { id: 'a?b#c' } }).url).to.equal('/api/v1/courses/a%3Fb%23c');
    expect(buildRequest(get, {}).url).to.equal('/api/v1/courses/');
  });

  it('builds the query string and the body with its content type', () => {
    const list = cat.byId.get('listCompletions')!;
    expect(
      buildRequest(list, { query: { courseId: 'c&d', limit: 5, skip: undefined, tags: ['a', 'b'] } }).url,
    ).to.equal('/api/v1/completions?courseId=c%26d&limit=5&tags=a&tags=b');
    const create = buildRequest(cat.byId.get('createCourse')!, { body: { title: 'T' } });
    expect([create.headers['content-type'], create.payload]).to.deep.equal([
      'application/json',
      '{"title":"T"}',
    ]);
    const csv = buildRequest(cat.byId.get('importCourseFromCsv')!, { body: 'screen,block\n' });
    expect([csv.headers['content-type'], csv.payload]).to.deep.equal(['text/csv', 'screen,block\n']);
  });

  it('decodes JSON, text and bytes by content type', () => {
    const bytes = new Uint8Array([0x50, 0x4b, 3, 4]);
    expect(decodeBody('application/json; charset=utf-8', Buffer.from('{"a":1}'))).to.deep.equal({ a: 1 });
    expect(decodeBody('text/html', Buffer.from('<p>'))).to.equal('<p>');
    expect(decodeBody('application/zip', bytes)).to.equal(bytes);
    expect(decodeBody('application/json', new Uint8Array())).to.equal(null);
  });

  it('LECTERN_URL works with or without /api/v1 and a trailing slash', () => {
    for (const url of ['http://h:8080', 'http://h:8080/', 'http://h:8080/api/v1', 'http://h:8080/api/v1/'])
      expect(serviceRoot(url), url).to.equal('http://h:8080');
    expect(serviceRoot('https://h/lectern/api/v1')).to.equal('https://h/lectern');
  });

  it('toolsets: all by default, a chosen few, an unknown one refused', () => {
    expect(parseToolsets(undefined)).to.deep.equal(['operations', 'authoring', 'delivery']);
    expect(parseToolsets(' delivery , authoring,delivery')).to.deep.equal(['delivery', 'authoring']);
    expect(() => parseToolsets('delivery,admin')).to.throw('Unknown toolset admin');
  });

  it('stdio settings: the key is required, flags win over the environment', () => {
    expect(() => stdioSettings({}, [])).to.throw('LECTERN_API_KEY');
    const s = stdioSettings({ LECTERN_API_KEY: 'lk_x', LECTERN_MCP_TOOLSETS: 'delivery' }, [
      '--toolsets=authoring',
      '--read-only',
    ]);
    expect(s).to.deep.equal({
      url: 'http://localhost:8080',
      apiKey: 'lk_x',
      toolsets: ['authoring'],
      readOnly: true,
    });
    expect(() => stdioSettings({ LECTERN_API_KEY: 'lk_x' }, ['--key', 'y'])).to.throw(
      'unknown argument --key',
    );
    expect(() => stdioSettings({ LECTERN_API_KEY: 'lk_x', LECTERN_URL: 'not a url' }, [])).to.throw(
      'not a URL',
    );
  });

  it('a binary answer stored for stdio never lands outside its own folder, whatever the server names it', async () => {
    const root = await mkdtemp(path.join(os.tmpdir(), 'mcp-unit-'));
    const store = tempFileStore(root);
    for (const filename of ['..', '.', '../../etc/passwd', 'a b?.zip']) {
      const { url } = await store.save(new Uint8Array([1, 2, 3]), {
        contentType: 'application/zip',
        filename,
      });
      const file = fileURLToPath(url);
      expect(path.dirname(path.dirname(file)), filename).to.equal(root);
      expect([...(await readFile(file))]).to.deep.equal([1, 2, 3]);
    }
    await rm(root, { recursive: true, force: true });
  });
});
