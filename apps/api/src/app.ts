import Koa from 'koa';
import { randomUUID } from 'node:crypto';
import { ApiRouter } from './http/router.js';
import { errorMiddleware } from './http/errors.js';
import { authMiddleware } from './http/auth.js';
import { buildOpenApi } from './http/openapi.js';
import { registerApiRoutes } from './routes/index.js';
import { healthRoutes } from './routes/health.routes.js';
import { metricsRoutes } from './routes/metrics.routes.js';
import { docsRoutes } from './routes/docs.routes.js';
import type { RouteDeps } from './deps.js';

export const API_PREFIX = '/api/v1';
const VERSION = '0.1.0';

export interface BuiltApp {
  app: Koa;
  api: ApiRouter;
  pub: ApiRouter;
  openapi: () => ReturnType<typeof buildOpenApi>;
}

/**
 * Builds the Koa app without listening, so tests can drive a real port or callback(). Only assembly here:
 * request id, metrics and log per request, errors, then the unkeyed routers (probes, metrics, docs) and the
 * keyed /api/v1 routes behind the key check.
 */
export function buildApp(deps: RouteDeps): BuiltApp {
  const { cfg, log, metrics } = deps;
  const app = new Koa({ proxy: cfg.TRUST_PROXY });
  const pub = new ApiRouter('');
  const api = new ApiRouter(API_PREFIX);

  // Metrics label a request with its route template ('/api/v1/identities/:id'), never the raw path, so label
  // values stay bounded: @koa/router's matched route when a route ran, else the route that would have served it
  // (a 401/429 from router-level middleware), else 'unmatched'.
  const isTemplate = (r: unknown): r is string =>
    typeof r === 'string' && (pub.templates.has(r) || api.templates.has(r));
  const routeOf = (ctx: Koa.Context): string => {
    const matched = (ctx as { _matchedRoute?: string | RegExp })._matchedRoute;
    if (isTemplate(matched)) return matched;
    if (matched === undefined && ctx.status === 404) return 'unmatched';
    return pub.templateOf(ctx.path, ctx.method) ?? api.templateOf(ctx.path, ctx.method) ?? 'unmatched';
  };

  app.use(async (ctx, next) => {
    const incoming = ctx.get('x-request-id');
    const requestId = /^[A-Za-z0-9._-]{8,100}$/.test(incoming) ? incoming : randomUUID();
    ctx.state.requestId = requestId;
    ctx.set('X-Request-Id', requestId);
    const started = performance.now();
    try {
      await next();
    } finally {
      const seconds = (performance.now() - started) / 1000;
      if (metrics) {
        metrics.observeRequest(ctx.method, routeOf(ctx), ctx.status, seconds);
        if (ctx.status === 429) metrics.rateLimited.inc();
      }
      // Never the Authorization header: only method, path, status and timing.
      log.info(
        {
          requestId,
          method: ctx.method,
          path: ctx.path,
          status: ctx.status,
          ms: Math.round(seconds * 1000),
        },
        'request',
      );
    }
  });
  app.use(errorMiddleware(log));

  const openapi = () => buildOpenApi([pub, api], { serverUrl: cfg.PUBLIC_URL, version: VERSION });
  healthRoutes(pub, deps);
  metricsRoutes(pub, deps);
  docsRoutes(pub, { prefix: API_PREFIX, document: openapi });

  api.router.use(authMiddleware({ orm: deps.orm, rateLimitPerMinute: cfg.RATE_LIMIT_PER_MINUTE }));
  registerApiRoutes(api, deps);

  app.use(pub.routes());
  app.use(api.routes());
  // OPTIONS answers with Allow; a known path with another method is a JSON 405 (errors.ts).
  app.use(pub.allowedMethods());
  app.use(api.allowedMethods());
  return { app, api, pub, openapi };
}
