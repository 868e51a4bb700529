import Koa from 'koa';
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { ApiRouter } from './http/router.js';
import { errorMiddleware } from './http/errors.js';
import { authMiddleware } from './http/auth.js';
import { buildOpenApi, DOCS_HTML } from './http/openapi.js';
import cors from '@koa/cors';
import { registerApiRoutes, type RouteDeps } from './routes/index.js';
import { PLAYER_PREFIX, PLAYER_TAG, playerRoutes } from './routes/player.routes.js';
import { lazyPlayerKeys } from './player-keys.js';
import { verifyRoutes } from './routes/verify.routes.js';
import { sql } from '@lectern/db';
import { AppError } from '@lectern/errors';
import { bearerMatches } from '@lectern/metrics';
import { checkReadiness } from '@lectern/runtime';

export const API_PREFIX = '/api/v1';
const VERSION = '0.1.0';

export interface BuiltApp {
  app: Koa;
  api: ApiRouter;
  pub: ApiRouter;
  /** /player/v1: the Player API (run tokens, no API key). */
  player: ApiRouter;
  /** /embed: the embed page. */
  embed: ApiRouter;
  /** Every router, in mounting order: what the OpenAPI document describes. */
  routers: ApiRouter[];
  openapi: () => ReturnType<typeof buildOpenApi>;
}

/** Builds the Koa app without listening, so tests can drive a real port or callback(). */
export function buildApp(deps: RouteDeps): BuiltApp {
  const { rt } = deps;
  const app = new Koa({ proxy: rt.cfg.TRUST_PROXY });
  const log = rt.log;
  const metrics = rt.metrics;
  const pub = new ApiRouter('');
  const api = new ApiRouter(API_PREFIX);
  const player = new ApiRouter(PLAYER_PREFIX);
  const embed = new ApiRouter('/embed');
  const routers = [pub, api, embed, player];
  metrics?.watchOutbox(
    async () => {
      const [row] = await sql<{ n: string }>(
        rt.orm.em.fork(),
        'select count(*) as n from outbox_events where published_at is null',
      );
      return Number(row?.n ?? 0);
    },
    { onError: (err) => log.warn({ err }, 'metrics: outbox count failed') },
  );

  // Metrics label a request with its route template ('/api/v1/identities/:id'), never the raw path, so label
  // values stay bounded: @koa/router's matched route when a route ran, else the route that would have served it
  // (a 401/429 from router-level middleware), else 'unmatched'.
  const isTemplate = (r: unknown): r is string =>
    typeof r === 'string' && routers.some((x) => x.templates.has(r));
  const routeOf = (ctx: Koa.Context): string => {
    const matched = (ctx as { _matchedRoute?: string | RegExp })._matchedRoute;
    if (isTemplate(matched)) return matched;
    if (matched === undefined && ctx.status === 404) return 'unmatched';
    for (const x of routers) {
      const t = x.templateOf(ctx.path, ctx.method);
      if (t) return t;
    }
    return 'unmatched';
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
  // The Player API answers any origin (embeds on customers' sites, SCORM packages in any LMS): it takes no
  // cookies, only a bearer run token, so a wildcard origin exposes nothing. Errors carry the headers too.
  const playerCors = cors({
    origin: '*',
    allowMethods: ['GET', 'POST', 'OPTIONS'],
    allowHeaders: ['Authorization', 'Content-Type'],
    exposeHeaders: ['Retry-After', 'X-Request-Id', 'Content-Disposition'],
    maxAge: 600,
  });
  app.use((ctx, next) => (ctx.path.startsWith(`${PLAYER_PREFIX}/`) ? playerCors(ctx, next) : next()));
  app.use(errorMiddleware(log));

  const openapi = () =>
    buildOpenApi(routers, {
      serverUrl: rt.cfg.PUBLIC_URL,
      version: VERSION,
      tags: [
        {
          name: PLAYER_TAG,
          description:
            'The player surface: the embed page and /player/v1, what a browser player, a headless player or a ' +
            'tracked SCORM package speaks. No API key: learners are identified by a token the customer signs ' +
            'with an embed key; each run gets a short-lived run token. See docs/player-api.md.',
        },
      ],
    });
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
      const { ok, checks } = await checkReadiness(rt, ['postgres', 'nats', 'objectStore']);
      ctx.status = ok ? 200 : 503;
      ctx.body = ok
        ? { data: { status: 'ready', checks } }
        : { error: 'service_unavailable', message: 'A dependency is unreachable', checks };
    },
  );
  pub.route(
    {
      method: 'get',
      path: '/metrics',
      summary: 'Prometheus metrics of this process',
      description:
        'Prometheus text exposition format. When METRICS_TOKEN is configured, requires ' +
        '`Authorization: Bearer <METRICS_TOKEN>`; otherwise open (keep it off the public Ingress).',
      tags: ['Health'],
      auth: 'public',
      responses: {
        200: { description: 'Metrics (text/plain; version=0.0.4)', schema: null, contentType: 'text/plain' },
        401: {
          description: 'METRICS_TOKEN is set and the request does not carry it',
          schema: z.object({ error: z.literal('unauthorized'), message: z.string() }),
        },
      },
    },
    async (ctx) => {
      const token = rt.cfg.METRICS_TOKEN;
      if (token && !bearerMatches(ctx.get('authorization'), token)) {
        ctx.set('WWW-Authenticate', 'Bearer');
        throw new AppError('unauthorized', 'Send Authorization: Bearer <METRICS_TOKEN>');
      }
      if (!metrics) throw new AppError('not_found', 'Metrics are not collected in this process');
      const { contentType, body } = await metrics.render();
      ctx.set('Cache-Control', 'no-store');
      ctx.type = contentType;
      ctx.body = body;
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

  verifyRoutes(pub, deps);

  api.router.use(authMiddleware({ orm: rt.orm, rateLimitPerMinute: rt.cfg.RATE_LIMIT_PER_MINUTE }));
  const playerKeys = lazyPlayerKeys(rt.cfg);
  registerApiRoutes(api, deps, { keys: playerKeys });
  playerRoutes(player, embed, {
    em: () => rt.orm.em.fork(),
    relay: deps.relay,
    keys: playerKeys,
    limits: {
      opensPerMinutePerAddress: rt.cfg.PLAYER_OPENS_PER_MINUTE_PER_ADDRESS,
      requestsPerMinutePerRun: rt.cfg.PLAYER_REQUESTS_PER_MINUTE_PER_RUN,
    },
    publicUrl: rt.cfg.PUBLIC_URL,
    certificates: { rt, onEvent: () => deps.relay.kick() },
  });

  for (const r of routers) app.use(r.routes());
  // OPTIONS answers with Allow; a known path with another method is a JSON 405 (errors.ts).
  for (const r of routers) app.use(r.allowedMethods());
  return { app, api, pub, player, embed, routers, openapi };
}
