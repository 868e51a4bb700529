import { expect } from 'chai';
import { buildApp, type BuiltApp } from '@lectern/api';
import { NO_RELAY } from '@lectern/events';
import { call } from '../support/http.js';
import { startCustomApp, type CustomApp } from '../support/spine.js';

interface Operation {
  operationId: string;
  summary: string;
  security: unknown[];
  parameters?: { name: string; in: string; required: boolean }[];
  requestBody?: {
    content: Record<string, { schema: { properties?: Record<string, unknown>; required?: string[] } }>;
  };
  responses: Record<string, { description: string }>;
}
interface OpenApiDoc {
  openapi: string;
  info: { title: string; version: string };
  paths: Record<string, Record<string, Operation>>;
}

interface Layer {
  path: string | RegExp;
  methods: string[];
}

const toOpenApiPath = (p: string) => p.replace(/:([A-Za-z0-9_]+)/g, '{$1}');

/** Every route the routers would actually serve, as "METHOD /path" (HEAD comes free with GET). */
function servedRoutes(built: BuiltApp): string[] {
  const out: string[] = [];
  for (const r of built.routers) {
    for (const layer of r.router.stack as unknown as Layer[]) {
      if (!layer.methods.length) continue; // router.use() middleware
      for (const m of layer.methods)
        if (m !== 'HEAD' && m !== 'OPTIONS') out.push(`${m} ${toOpenApiPath(String(layer.path))}`);
    }
  }
  return out;
}

function documentedRoutes(doc: OpenApiDoc): string[] {
  return Object.entries(doc.paths).flatMap(([p, ops]) =>
    Object.keys(ops).map((m) => `${m.toUpperCase()} ${p}`),
  );
}

/** Follows a local `#/a/b` JSON pointer from the document root. */
function resolve(doc: unknown, ref: string): unknown {
  if (!ref.startsWith('#/')) return undefined;
  return ref
    .slice(2)
    .split('/')
    .map((t) => t.replace(/~1/g, '/').replace(/~0/g, '~'))
    .reduce<unknown>(
      (node, key) => (node && typeof node === 'object' ? (node as Record<string, unknown>)[key] : undefined),
      doc,
    );
}

function refsIn(node: unknown, out: string[] = []): string[] {
  if (Array.isArray(node)) node.forEach((n) => refsIn(n, out));
  else if (node && typeof node === 'object') {
    for (const [k, v] of Object.entries(node)) {
      if (k === '$ref' && typeof v === 'string') out.push(v);
      else refsIn(v, out);
    }
  }
  return out;
}

const undocumented = (built: BuiltApp, doc: OpenApiDoc) =>
  servedRoutes(built).filter((r) => !documentedRoutes(doc).includes(r));

describe('spine: the OpenAPI document', () => {
  let app: CustomApp;
  let doc: OpenApiDoc;
  before(async () => {
    app = await startCustomApp();
    const res = await call<OpenApiDoc>(app.base, 'GET', '/openapi.json');
    expect(res.status).to.equal(200);
    doc = res.body;
  });
  after(async () => app?.close());

  it('is OpenAPI 3.1.0, served without a key', () => {
    expect(doc.openapi).to.equal('3.1.0');
    expect(doc.info.title).to.be.a('string');
    expect(doc.paths).to.be.an('object');
  });

  it('documents every route the routers serve, and nothing they do not', () => {
    const served = servedRoutes(app.built);
    expect(served.length).to.be.greaterThan(8);
    for (const r of [
      'GET /healthz',
      'GET /readyz',
      'GET /api/v1/me',
      'GET /api/v1/identities',
      'POST /api/v1/identities',
      'POST /api/v1/identities/bulk',
      'DELETE /api/v1/identities/bulk',
      'GET /api/v1/identities/{id}',
      'DELETE /api/v1/identities/{id}',
    ]) {
      expect(served, r).to.include(r);
    }
    expect(undocumented(app.built, doc), 'served but not documented').to.deep.equal([]);
    expect(
      documentedRoutes(doc).filter((r) => !served.includes(r)),
      'documented but not served',
    ).to.deep.equal([]);
  });

  it("the check catches a route registered behind the contract's back", () => {
    const built = buildApp({ ...app.rt, relay: NO_RELAY });
    built.api.router.get('/__sneaky/:id', (ctx) => {
      ctx.body = { data: null };
    });
    built.pub.router.post('/__hidden', (ctx) => {
      ctx.body = { data: null };
    });
    expect(undocumented(built, built.openapi() as unknown as OpenApiDoc)).to.deep.equal([
      'POST /__hidden',
      'GET /api/v1/__sneaky/{id}',
    ]);
  });

  it('operations are complete: unique ids, bearer security on keyed routes, error responses', () => {
    const ids = new Set<string>();
    for (const [p, ops] of Object.entries(doc.paths)) {
      for (const [m, op] of Object.entries(ops)) {
        const where = `${m.toUpperCase()} ${p}`;
        expect(op.operationId, where).to.be.a('string');
        expect(ids.has(op.operationId), `duplicate operationId ${op.operationId}`).to.equal(false);
        ids.add(op.operationId);
        expect(op.summary, where).to.be.a('string').and.not.equal('');
        expect(Object.keys(op.responses).length, where).to.be.greaterThan(0);
        if (p.startsWith('/api/v1/') && !/openapi\.json|\/docs(\/assets\/\{name\})?$/.test(p)) {
          expect(op.security, where).to.deep.equal([{ bearer: [] }]);
          for (const status of ['401', '402', '403', '429', '500'])
            expect(op.responses, `${where} documents ${status}`).to.have.property(status);
        }
        for (const param of (p.match(/\{(\w+)\}/g) ?? []).map((x) => x.slice(1, -1))) {
          expect(
            op.parameters?.some((q) => q.in === 'path' && q.name === param && q.required),
            `${where} path parameter ${param}`,
          ).to.equal(true);
        }
      }
    }
  });

  it('request bodies and query parameters come from the route contracts', () => {
    const upsert = doc.paths['/api/v1/identities'].post;
    let schema = upsert.requestBody!.content['application/json'].schema as {
      $ref?: string;
      properties?: Record<string, unknown>;
      required?: string[];
    };
    if (schema.$ref) schema = resolve(doc, schema.$ref) as typeof schema;
    expect(schema.properties).to.have.keys('externalId', 'name', 'email');
    expect(schema.required).to.deep.equal(['externalId']);
    expect(upsert.responses).to.include.keys('200', '201', '400');
    const list = doc.paths['/api/v1/identities'].get;
    expect(list.parameters!.filter((q) => q.in === 'query').map((q) => q.name)).to.include.members([
      'search',
      'limit',
      'offset',
    ]);
    expect(doc.paths['/api/v1/identities/bulk'].delete.requestBody).to.be.an('object');
  });

  it('every $ref points at something inside the document', () => {
    const refs = refsIn(doc);
    expect(refs.length, 'named schemas are referenced').to.be.greaterThan(0);
    const dangling = [...new Set(refs)].filter((r) => resolve(doc, r) === undefined);
    expect(dangling).to.deep.equal([]);
  });

  it('/api/v1/docs serves a readable HTML page that loads the document', async () => {
    const res = await call(app.base, 'GET', '/docs');
    expect(res.status).to.equal(200);
    expect(res.headers.get('content-type')).to.match(/^text\/html/);
    expect(res.text).to.match(/<!doctype html>/i);
    expect(res.text).to.include('openapi.json');
    // No inline script; the page's scripts are the service's own.
    expect(res.text).not.to.match(/<script>(?!<)/);
    expect(res.headers.get('content-security-policy')).to.include("script-src 'self'");
    expect(res.headers.get('content-security-policy')).to.include("connect-src 'self'");
  });

  it('the reference scripts are served by the service, compressed, with validators', async () => {
    const zipped = await fetch(`${app.base}/docs/assets/scalar.js`, {
      headers: { 'accept-encoding': 'gzip' },
    });
    expect(zipped.status).to.equal(200);
    expect(zipped.headers.get('content-type')).to.match(/^application\/javascript/);
    const etag = zipped.headers.get('etag')!;
    expect(etag).to.match(/^"/);
    const again = await fetch(`${app.base}/docs/assets/scalar.js`, { headers: { 'if-none-match': etag } });
    expect(again.status).to.equal(304);
    const init = await call(app.base, 'GET', '/docs/assets/init.js');
    expect(init.status).to.equal(200);
    expect(init.text).to.include('createApiReference');
    for (const name of ['..%2Fpackage.json', 'standalone.js', 'webpack-stats.json']) {
      const res = await call(app.base, 'GET', `/docs/assets/${name}`);
      expect(res.status, name).to.equal(404);
    }
  });
});
