import { z } from 'zod';
import type { ApiRouter } from './router.js';
import { API_TAGS } from './tags.js';

/**
 * zod puts schemas with a meta id under a local `$defs` and points at them with `#/$defs/…`;
 * inside an OpenAPI document `#` is the document root, so those refs would dangle. Named
 * schemas move to `components.schemas` (an input variant that differs gets an `_input` name).
 */
function toSchema(
  schema: z.ZodType,
  io: 'input' | 'output',
  components: Record<string, unknown>,
): Record<string, unknown> {
  const json = z.toJSONSchema(schema, {
    target: 'draft-2020-12',
    io,
    unrepresentable: 'any',
    reused: 'inline',
  }) as Record<string, unknown>;
  const defs = (json.$defs ?? {}) as Record<string, unknown>;
  delete json.$defs;
  delete json.$schema;
  const names = new Map<string, string>();
  for (const [name, def] of Object.entries(defs)) {
    const taken = components[name] !== undefined && JSON.stringify(components[name]) !== JSON.stringify(def);
    names.set(name, taken ? `${name}_${io}` : name);
  }
  const relink = <T>(v: T): T =>
    JSON.parse(
      JSON.stringify(v).replace(
        /"#\/\$defs\/([^"]+)"/g,
        (_, n: string) => `"#/components/schemas/${names.get(n) ?? n}"`,
      ),
    ) as T;
  for (const [name, def] of Object.entries(defs)) components[names.get(name)!] = relink(def);
  return relink(json);
}

const openApiPath = (p: string) => p.replace(/:([A-Za-z0-9_]+)/g, '{$1}');

/** OpenAPI 3.1 built from the route contracts; a route cannot exist without one. */
export function buildOpenApi(routers: ApiRouter[], opts: { serverUrl: string; version: string }) {
  const paths: Record<string, Record<string, unknown>> = {};
  const schemas: Record<string, unknown> = {};
  const operationIds = new Map<string, string>();
  for (const r of routers) {
    for (const spec of r.specs) {
      const full = openApiPath(r.prefix + spec.path);
      const where = `${spec.method.toUpperCase()} ${full}`;
      const taken = operationIds.get(spec.operationId);
      // A client generated from the document would get two methods of one name: refuse the document instead.
      if (taken) throw new Error(`operationId ${spec.operationId} is used by both ${taken} and ${where}`);
      operationIds.set(spec.operationId, where);
      const params = [...(r.prefix + spec.path).matchAll(/:([A-Za-z0-9_]+)/g)].map((m) => ({
        name: m[1],
        in: 'path',
        required: true,
        schema: { type: 'string' },
      }));
      if (spec.query) {
        const q = toSchema(spec.query, 'input', schemas) as {
          properties?: Record<string, Record<string, unknown>>;
          required?: string[];
        };
        for (const [name, schema] of Object.entries(q.properties ?? {})) {
          params.push({ name, in: 'query', required: q.required?.includes(name) ?? false, schema } as never);
        }
      }
      const op: Record<string, unknown> = {
        operationId: spec.operationId,
        summary: spec.summary,
        description: spec.description,
        tags: [...spec.tags],
        ...(params.length ? { parameters: params } : {}),
        security:
          spec.auth === 'public' ? [] : spec.auth === 'runToken' ? [{ runToken: [] }] : [{ bearer: [] }],
        responses: Object.fromEntries(
          Object.entries(spec.responses).map(([status, res]) => [
            status,
            {
              description: res.description,
              ...(res.schema
                ? {
                    content: {
                      [res.contentType ?? 'application/json']: {
                        schema: toSchema(res.schema, 'output', schemas),
                      },
                    },
                  }
                : {}),
              ...(res.contentType && !res.schema
                ? { content: { [res.contentType]: { schema: { type: 'string', format: 'binary' } } } }
                : {}),
              ...(res.alternatives
                ? {
                    content: {
                      ...(res.contentType
                        ? {
                            [res.contentType]: res.schema
                              ? { schema: toSchema(res.schema, 'output', schemas) }
                              : { schema: { type: 'string', format: 'binary' } },
                          }
                        : {}),
                      ...Object.fromEntries(
                        Object.entries(res.alternatives).map(([type, schema]) => [
                          type,
                          { schema: toSchema(schema, 'output', schemas) },
                        ]),
                      ),
                    },
                  }
                : {}),
            },
          ]),
        ),
      };
      if (spec.body) {
        op.requestBody = {
          required: true,
          content: { 'application/json': { schema: toSchema(spec.body, 'input', schemas) } },
        };
      } else if (spec.rawBody) {
        op.requestBody = {
          required: true,
          description: spec.rawBody.description,
          content: { [spec.rawBody.contentType]: { schema: { type: 'string', format: 'binary' } } },
        };
      }
      paths[full] ??= {};
      paths[full][spec.method] = op;
    }
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Lectern API',
      version: opts.version,
      description:
        'Course authoring and delivery. Every JSON response has `data` (except GET /me); errors carry `error`, `message` and, for 400, `issues`.',
    },
    servers: [{ url: opts.serverUrl }],
    tags: Object.entries(API_TAGS).map(([name, description]) => ({ name, description })),
    components: {
      schemas,
      securitySchemes: {
        bearer: { type: 'http', scheme: 'bearer', description: 'API key: lk_…' },
        runToken: {
          type: 'http',
          scheme: 'bearer',
          bearerFormat: 'JWT',
          description: 'Run token from POST /player/v1/runs (docs/player-api.md)',
        },
      },
    },
    paths,
  };
}
