import { z } from 'zod';
import { boundQuery } from '@lectern/db';
import { AppError } from '@lectern/errors';
import { bearerMatches } from '@lectern/metrics';
import type { ApiRouter } from '../http/router.js';
import type { RouteDeps } from '../deps.js';

/**
 * GET /metrics: this process's Prometheus metrics, behind `Bearer METRICS_TOKEN` when one is configured. The API
 * also reports the outbox backlog, counted on each scrape.
 */
export function metricsRoutes(pub: ApiRouter, deps: Pick<RouteDeps, 'cfg' | 'orm' | 'log' | 'metrics'>) {
  const { metrics, log } = deps;
  metrics?.watchOutbox(
    async () => {
      const [row] = await boundQuery<{ n: string }>(
        deps.orm.em.fork(),
        'select count(*) as n from outbox_events where published_at is null',
      );
      return Number(row?.n ?? 0);
    },
    { onError: (err) => log.warn({ err }, 'metrics: outbox count failed') },
  );

  pub.route(
    {
      method: 'get',
      path: '/metrics',
      operationId: 'getMetrics',
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
      const token = deps.cfg.METRICS_TOKEN;
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
}
