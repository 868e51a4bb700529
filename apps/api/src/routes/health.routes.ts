import { z } from 'zod';
import { checkReadiness } from '@lectern/runtime';
import type { ApiRouter } from '../http/router.js';
import type { RouteDeps } from '../deps.js';

/** Unkeyed probes: /healthz (the process is alive) and /readyz (PostgreSQL, NATS and the object store answer). */
export function healthRoutes(pub: ApiRouter, deps: Pick<RouteDeps, 'orm' | 'bus' | 'storage'>) {
  pub.route(
    {
      method: 'get',
      path: '/healthz',
      operationId: 'getLiveness',
      summary: 'Liveness',
      description:
        'Answers 200 while the process serves requests; it checks no dependency, so an orchestrator restarts the process only when it is stuck.',
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
      operationId: 'getReadiness',
      summary: 'Readiness: PostgreSQL, NATS and the object store reachable',
      description:
        'Checks PostgreSQL, NATS and the object store; 503 with the state of each check while any is unreachable, so a load balancer sends no traffic here.',
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
      const { ok, checks } = await checkReadiness({ orm: deps.orm, bus: deps.bus, storage: deps.storage });
      ctx.status = ok ? 200 : 503;
      ctx.body = ok
        ? { data: { status: 'ready', checks } }
        : { error: 'service_unavailable', message: 'A dependency is unreachable', checks };
    },
  );
}
