import { z } from 'zod';
import type { ApiRouter } from '../http/router.js';
import type { EntityManager } from '@lectern/db';
import { Usage } from '@lectern/contracts';
import { getUsage } from '@lectern/learner-runs';
import { errorResponses } from './shared.js';

/** The metered views of this month, per day, so a customer sees abuse the day it happens. */
export function usageRoutes(api: ApiRouter, deps: { em: () => EntityManager }) {
  api.route(
    {
      method: 'get',
      path: '/usage',
      operationId: 'getUsage',
      summary: "This month's course views, in total and per day (UTC)",
      description:
        'views is what billing and the Sandbox allowance read; days lists every day of the month so far with ' +
        'its views (a day without views shows 0). Each run open counts one view, new or resumed.',
      tags: ['Workspace'],
      responses: { 200: { description: 'Usage', schema: z.object({ data: Usage }) }, ...errorResponses },
    },
    async (ctx) => {
      const ws = ctx.state.auth.workspace;
      ctx.body = { data: await getUsage(deps.em(), ws) };
    },
  );
}
