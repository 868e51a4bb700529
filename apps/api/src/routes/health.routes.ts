import { z } from 'zod';
import { checkReadiness, readinessBody } from '@lectern/runtime';
import type { ApiRouter } from '../http/router.js';
import type { RouteDeps } from '../deps.js';

/** How each worker kind hosted in this process stands (`lectern start`); absent when it hosts none. */
const Kinds = z
  .record(z.string(), z.object({ ready: z.boolean(), problem: z.string().optional() }))
  .optional();

/**
 * Unkeyed probes: /healthz (the process is alive) and /readyz (PostgreSQL, NATS and the object store answer, and
 * every worker kind hosted here started).
 */
export function healthRoutes(pub: ApiRouter, deps: Pick<RouteDeps, 'orm' | 'bus' | 'storage' | 'kinds'>) {
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
      summary: 'Readiness: PostgreSQL, NATS and the object store reachable, hosted worker kinds started',
      tags: ['Health'],
      auth: 'public',
      responses: {
        200: {
          description: 'Ready',
          schema: z.object({
            data: z.object({ status: z.string(), checks: z.record(z.string(), z.string()), kinds: Kinds }),
          }),
        },
        503: {
          description: 'Not ready',
          schema: z.object({
            error: z.string(),
            message: z.string(),
            status: z.string(),
            checks: z.record(z.string(), z.string()),
            kinds: Kinds,
          }),
        },
      },
    },
    async (ctx) => {
      const { status, body } = readinessBody(
        await checkReadiness({ orm: deps.orm, bus: deps.bus, storage: deps.storage, kinds: deps.kinds }),
      );
      ctx.status = status;
      ctx.body = body;
    },
  );
}
