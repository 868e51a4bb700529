/**
 * The operations the tool server offers, read from the service's own OpenAPI document (GET /api/v1/openapi.json or
 * the API's `openapi()`), so a route added to the API is reachable through `call_operation` with no change here.
 */

export type JsonSchema = Record<string, unknown>;

export interface OpenApiOperation {
  operationId?: string;
  summary?: string;
  description?: string;
  tags?: string[];
  parameters?: { name: string; in: string; required?: boolean; schema?: JsonSchema }[];
  requestBody?: { content?: Record<string, { schema?: JsonSchema }> };
  responses?: Record<string, { content?: Record<string, unknown> }>;
}

export interface OpenApiDocument {
  paths: Record<string, Record<string, OpenApiOperation>>;
  components?: { schemas?: Record<string, JsonSchema> };
}

export interface Operation {
  operationId: string;
  method: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';
  /** OpenAPI form, prefix included: `/api/v1/courses/{id}`. */
  path: string;
  summary: string;
  description: string;
  tag: string;
  pathParams: string[];
  queryParams: string[];
  /** JSON body, or the raw body's content type (`text/csv`, `application/zip`); undefined without a body. */
  body?: { contentType: string; json: boolean };
  /** `{params, query, body}` as one JSON Schema, referenced components inlined under `$defs`. */
  inputSchema: JsonSchema;
  /** A paged list (SPEC "Paging rules"): takes `limit` and `offset`. */
  paged: boolean;
}

export interface Catalogue {
  operations: Operation[];
  byId: Map<string, Operation>;
}

import { binaryBodySchema } from './binary-body.js';

const METHODS = new Set(['get', 'post', 'patch', 'put', 'delete']);
const REF = /"#\/components\/schemas\/([^"]+)"/g;

/** The components a schema refers to, transitively, with their refs pointed at `#/$defs/…`. */
function withDefs(schema: JsonSchema, components: Record<string, JsonSchema>): JsonSchema {
  const defs: Record<string, JsonSchema> = {};
  const pending = [JSON.stringify(schema)];
  while (pending.length) {
    for (const [, name] of pending.pop()!.matchAll(REF)) {
      if (defs[name] || !components[name]) continue;
      defs[name] = components[name];
      pending.push(JSON.stringify(components[name]));
    }
  }
  const relink = (v: unknown): JsonSchema =>
    JSON.parse(JSON.stringify(v).replace(REF, (_, n: string) => `"#/$defs/${n}"`)) as JsonSchema;
  const out = relink(schema);
  if (Object.keys(defs).length) out.$defs = relink(defs);
  return out;
}

/** Every operation under `prefix` (the keyed API, `/api/v1`) of the document. */
export function catalogueFromOpenApi(doc: OpenApiDocument, prefix = '/api/v1'): Catalogue {
  const components = doc.components?.schemas ?? {};
  const operations: Operation[] = [];
  for (const [path, ops] of Object.entries(doc.paths)) {
    if (!path.startsWith(`${prefix}/`)) continue;
    for (const [method, op] of Object.entries(ops)) {
      if (!METHODS.has(method) || !op.operationId) continue;
      const params = op.parameters ?? [];
      const pathParams = params.filter((p) => p.in === 'path').map((p) => p.name);
      const query = params.filter((p) => p.in === 'query');
      const properties: Record<string, JsonSchema> = {};
      const required: string[] = [];
      if (pathParams.length) {
        properties.params = {
          type: 'object',
          properties: Object.fromEntries(pathParams.map((n) => [n, { type: 'string' }])),
          required: pathParams,
          additionalProperties: false,
        };
        required.push('params');
      }
      if (query.length) {
        const requiredQuery = query.filter((p) => p.required).map((p) => p.name);
        properties.query = {
          type: 'object',
          properties: Object.fromEntries(query.map((p) => [p.name, p.schema ?? {}])),
          ...(requiredQuery.length ? { required: requiredQuery } : {}),
        };
        if (requiredQuery.length) required.push('query');
      }
      let body: Operation['body'];
      const content = op.requestBody?.content ?? {};
      const [contentType] = Object.keys(content);
      if (contentType) {
        const json = contentType === 'application/json';
        body = { contentType, json };
        properties.body = json
          ? (content[contentType].schema ?? {})
          : binaryBodySchema(contentType, content[contentType].schema);
        required.push('body');
      }
      const inputSchema = withDefs(
        { type: 'object', properties, ...(required.length ? { required } : {}) },
        components,
      );
      const queryParams = query.map((p) => p.name);
      operations.push({
        operationId: op.operationId,
        method: method.toUpperCase() as Operation['method'],
        path,
        summary: op.summary ?? '',
        description: op.description ?? '',
        tag: op.tags?.[0] ?? '',
        pathParams,
        queryParams,
        body,
        inputSchema,
        paged: queryParams.includes('limit') && queryParams.includes('offset'),
      });
    }
  }
  return { operations, byId: new Map(operations.map((o) => [o.operationId, o])) };
}

const words = (s: string): string[] =>
  s
    .replace(/([a-z])([A-Z])/g, '$1 $2')
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((w) => w.length > 1);

/** A loose stem, so "courses" finds "course" and "publishing" finds "publish". */
const stem = (w: string) => w.replace(/(ing|ies|es|s)$/, '');

/**
 * Operations ranked by how well they match `query`: an exact operationId alone; otherwise by the words found in
 * the operationId, summary, tag and path (weighted in that order), then in the description.
 */
export function searchOperations(catalogue: Catalogue, query: string, limit = 5): Operation[] {
  const q = query.trim();
  const exact = catalogue.operations.find((o) => o.operationId.toLowerCase() === q.toLowerCase());
  // An exact operationId is a lookup, not a search: that operation alone.
  if (exact) return [exact];
  const terms = [...new Set(words(q).map(stem))];
  const scored = catalogue.operations.map((op) => {
    const fields: [string, number][] = [
      [op.operationId, 4],
      [op.summary, 3],
      [op.tag, 2],
      [op.path, 2],
      [op.description, 1],
    ];
    let score = 0;
    for (const t of terms) {
      for (const [text, weight] of fields) {
        if (words(text).some((w) => stem(w) === t)) score += weight;
      }
    }
    return { op, score };
  });
  return scored
    .filter((s) => s.score > 0)
    .sort((a, b) => b.score - a.score || a.op.operationId.localeCompare(b.op.operationId))
    .slice(0, limit)
    .map((s) => s.op);
}
