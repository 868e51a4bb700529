import { mediaSigner } from '@lectern/media';
import Koa from 'koa';
import { randomUUID } from 'node:crypto';
import { ApiRouter } from './http/router.js';
import { errorMiddleware } from './http/errors.js';
import { uriLimit } from './http/uri-limit.js';
import { baselineHeaders, originOf } from './http/page-security.js';
import { authMiddleware } from './http/auth.js';
import { buildOpenApi } from './http/openapi.js';
import { registerApiRoutes } from './routes/index.js';
import { healthRoutes } from './routes/health.routes.js';
import { metricsRoutes } from './routes/metrics.routes.js';
import { docsRoutes } from './routes/docs.routes.js';
import type { RouteDeps } from './deps.js';
import cors from '@koa/cors';
import { PLAYER_PREFIX, playerRoutes } from './routes/player.routes.js';
import { lazyPlayerKeys } from './player-keys.js';
import { verifyRoutes } from './routes/verify.routes.js';
import { credentialRoutes } from './routes/credential.routes.js';
import { lazyPlayerAssets, playerAssetRoutes, playerAssetUrls } from './routes/player-assets.routes.js';
import { previewRoutes } from './routes/preview.routes.js';
import { mcpRoutes } from './routes/mcp.routes.js';

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
  const player = new ApiRouter(PLAYER_PREFIX, { json: 'strict' });
  const embed = new ApiRouter('/embed');
  const routers = [pub, api, embed, player];

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
    exposeHeaders: [
      'Retry-After',
      'X-Request-Id',
      'Content-Disposition',
      'Certificate-Serial',
      'Certificate-Verify-Url',
    ],
    maxAge: 600,
  });
  app.use((ctx, next) => (ctx.path.startsWith(`${PLAYER_PREFIX}/`) ? playerCors(ctx, next) : next()));
  app.use(baselineHeaders());
  app.use(errorMiddleware(log));
  app.use(uriLimit());

  const openapi = () => buildOpenApi(routers, { serverUrl: cfg.PUBLIC_URL, version: VERSION });
  healthRoutes(pub, deps);
  metricsRoutes(pub, deps);
  docsRoutes(pub, { prefix: API_PREFIX, document: openapi, publicOrigin: originOf(cfg.PUBLIC_URL) });
  verifyRoutes(pub, deps);
  credentialRoutes(pub, deps);
  const assets = lazyPlayerAssets(log, cfg.PLAYER_ASSETS_DIR);
  playerAssetRoutes(pub, assets);

  api.router.use(authMiddleware({ orm: deps.orm, rateLimitPerMinute: cfg.RATE_LIMIT_PER_MINUTE }));
  const playerKeys = lazyPlayerKeys(cfg);
  // One resolver of `media://` references for every learner view the API serves (Player API and preview).
  const mediaUrl = (workspaceId: string) =>
    mediaSigner(
      { em: deps.orm.em.fork(), storage: deps.storage, ttlSeconds: cfg.MEDIA_URL_TTL_SECONDS },
      workspaceId,
    );
  // The address browsers load signed media from, allowed by the pages' policy (an http store is not `https:`).
  const mediaOrigin = originOf(deps.storage.publicEndpoint);
  registerApiRoutes(api, deps, { keys: playerKeys });
  playerRoutes(player, embed, {
    em: () => deps.orm.em.fork(),
    relay: deps.relay,
    keys: playerKeys,
    limits: {
      opensPerMinutePerAddress: cfg.PLAYER_OPENS_PER_MINUTE_PER_ADDRESS,
      requestsPerMinutePerRun: cfg.PLAYER_REQUESTS_PER_MINUTE_PER_RUN,
      anonymousOpens: {
        perAddress: cfg.PLAYER_ANONYMOUS_OPENS_PER_MINUTE_PER_ADDRESS,
        perAnonymousId: cfg.PLAYER_ANONYMOUS_OPENS_PER_MINUTE_PER_ID,
      },
    },
    publicUrl: cfg.PUBLIC_URL,
    mediaUrl,
    mediaOrigin,
    certificates: { ...deps, onEvent: () => deps.relay.kick() },
    assets: playerAssetUrls(assets),
  });
  previewRoutes(api, pub, {
    em: () => deps.orm.em.fork(),
    keys: playerKeys,
    publicUrl: cfg.PUBLIC_URL,
    assets,
    mediaUrl,
    mediaOrigin,
  });

  let listener: ReturnType<Koa['callback']> | undefined;
  mcpRoutes(pub, { ...deps, dispatch: () => (listener ??= app.callback()), openapi });

  for (const r of routers) app.use(r.routes());
  // OPTIONS answers with Allow; a known path with another method is a JSON 405 (errors.ts).
  for (const r of routers) app.use(r.allowedMethods());
  return { app, api, pub, player, embed, routers, openapi };
}
