import Koa from 'koa';
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { ApiRouter } from './http/router.js';
import { errorMiddleware } from './http/errors.js';
import { authMiddleware } from './http/auth.js';
import { buildOpenApi, DOCS_HTML } from './http/openapi.js';
import { registerApiRoutes, type RouteDeps } from './routes/index.js';
import { ping } from '../../../libs/db/src/index.js';

export const API_PREFIX = '/api/v1';
const VERSION = '0.1.0';

export interface BuiltApp {
  app: Koa;
  api: ApiRouter;
  pub: ApiRouter;
  openapi: () => ReturnType<typeof buildOpenApi>;
}

/** Builds the Koa app without listening, so tests can drive a real port or callback(). */
export function buildApp(deps: RouteDeps): BuiltApp {
  const { rt } = deps;
  const app = new Koa({ proxy: rt.cfg.TRUST_PROXY });
  const log = rt.log;

  app.use(async (ctx, next) => {
    const incoming = ctx.get('x-request-id');
    const requestId = /^[A-Za-z0-9._-]{8,100}$/.test(incoming) ? incoming : randomUUID();
    ctx.state.requestId = requestId;
    ctx.set('X-Request-Id', requestId);
    const started = performance.now();
    try {
      await next();
    } finally {
      // Never the Authorization header: only method, path, status and timing.
      log.info(
        {
          requestId,
          method: ctx.method,
          path: ctx.path,
          status: ctx.status,
          ms: Math.round(performance.now() - started),
        },
        'request',
      );
    }
  });
  app.use(errorMiddleware(log));

  const pub = new ApiRouter('');
  const api = new ApiRouter(API_PREFIX);
  const openapi = () => buildOpenApi([pub, api], { serverUrl: rt.cfg.PUBLIC_URL, version: VERSION });
  let cachedDoc: ReturnType<typeof buildOpenApi> | undefined;

  pub.route(
    {
      method: 'get',
      path: '/healthz',
      summary: 'Liveness',
      tags: ['Health'],
      auth: 'public',
      responses: {
        200: { description: 'Alive', schema: z.object({ data: z.object({ status: z.literal('ok') }) }) },
      },
    },
    (ctx) => {
      ctx.body = { data: { status: 'ok' } };
    },
  );
  pub.route(
    {
      method: 'get',
      path: '/readyz',
      summary: 'Readiness: PostgreSQL, NATS and the object store reachable',
      tags: ['Health'],
      auth: 'public',
      responses: {
        200: {
          description: 'Ready',
          schema: z.object({
            data: z.object({ status: z.string(), checks: z.record(z.string(), z.string()) }),
          }),
        },
        503: {
          description: 'Not ready',
          schema: z.object({
            error: z.string(),
            message: z.string(),
            checks: z.record(z.string(), z.string()),
          }),
        },
      },
    },
    async (ctx) => {
      const withTimeout = <T>(p: Promise<T>) =>
        Promise.race([
          p,
          new Promise<never>((_, rej) => setTimeout(() => rej(new Error('timed out after 2 s')), 2000)),
        ]);
      const checks: Record<string, string> = {};
      const run = async (name: string, fn: () => Promise<unknown>) => {
        try {
          await withTimeout(fn());
          checks[name] = 'ok';
        } catch (err) {
          checks[name] = (err as Error).message || 'failed';
        }
      };
      await Promise.all([
        run('postgres', () => ping(rt.orm)),
        run('nats', () => rt.bus.nc.flush()),
        run('objectStore', () => rt.storage.ping()),
      ]);
      const ok = Object.values(checks).every((v) => v === 'ok');
      ctx.status = ok ? 200 : 503;
      ctx.body = ok
        ? { data: { status: 'ready', checks } }
        : { error: 'service_unavailable', message: 'A dependency is unreachable', checks };
    },
  );
  pub.route(
    {
      method: 'get',
      path: `${API_PREFIX}/openapi.json`,
      summary: 'This OpenAPI 3.1 document',
      tags: ['Docs'],
      auth: 'public',
      responses: { 200: { description: 'OpenAPI document', schema: z.record(z.string(), z.unknown()) } },
    },
    (ctx) => {
      cachedDoc ??= openapi();
      ctx.body = cachedDoc;
    },
  );
  pub.route(
    {
      method: 'get',
      path: `${API_PREFIX}/docs`,
      summary: 'Readable API reference',
      tags: ['Docs'],
      auth: 'public',
      responses: { 200: { description: 'HTML page', contentType: 'text/html' } },
    },
    (ctx) => {
      ctx.type = 'html';
      ctx.body = DOCS_HTML;
    },
  );

  api.router.use(authMiddleware({ orm: rt.orm, rateLimitPerMinute: rt.cfg.RATE_LIMIT_PER_MINUTE }));
  registerApiRoutes(api, deps);

  app.use(pub.routes());
  app.use(api.routes());
  // OPTIONS answers with Allow; a known path with another method is a JSON 405 (errors.ts).
  app.use(pub.allowedMethods());
  app.use(api.allowedMethods());
  return { app, api, pub, openapi };
}
