import type { ApiRouter } from '../http/router.js';
import { Me } from '@lectern/contracts';
import type { EntityManager } from '@lectern/db';
import { generationsUsed } from '@lectern/generation';
import { generationAllowance } from '@lectern/plans';
import { errorResponses } from './shared.js';

export function meRoutes(api: ApiRouter, deps: { em: () => EntityManager }) {
  api.route(
    {
      method: 'get',
      path: '/me',
      operationId: 'getWorkspace',
      summary: 'Workspace info for the calling key (not wrapped in data)',
      description:
        'The workspace id, name and plan of the key in the Authorization header, and the AI generations used this month (UTC) against the plan allowance (null: unlimited); a quick way to check a key. The body is not wrapped in data.',
      tags: ['Workspace'],
      responses: { 200: { description: 'Workspace info', schema: Me }, ...errorResponses },
    },
    async (ctx) => {
      const ws = ctx.state.auth.workspace;
      ctx.body = {
        workspace_id: ws.id,
        workspace_name: ws.name,
        plan: ws.plan,
        generations_used: await generationsUsed(deps.em(), ws.id),
        generations_allowance: generationAllowance(ws.plan),
      };
    },
  );
}
