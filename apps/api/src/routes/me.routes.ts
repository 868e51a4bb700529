import type { ApiRouter } from '../http/router.js';
import { Me } from '@lectern/contracts';
import type { RouteDeps } from '../deps.js';
import { generationsUsed } from '@lectern/generation';
import { generationAllowance, PLANS } from '@lectern/plans';
import { errorResponses } from './shared.js';
import { storageUsed } from './media.routes.js';

export function meRoutes(api: ApiRouter, deps: Pick<RouteDeps, 'orm' | 'cfg'>) {
  api.route(
    {
      method: 'get',
      path: '/me',
      operationId: 'getWorkspace',
      summary: 'Workspace info for the calling key (not wrapped in data)',
      description:
        'The workspace id, name and plan of the key in the Authorization header, and the AI generations used this month (UTC) against the plan allowance (null: unlimited); a quick way to check a key. ' +
        '`storageBytes`: the media it keeps, against `storageLimitBytes` of its plan. The body is not wrapped in data.',
      tags: ['Workspace'],
      responses: { 200: { description: 'Workspace info', schema: Me }, ...errorResponses },
    },
    async (ctx) => {
      const ws = ctx.state.auth.workspace;
      ctx.body = {
        workspace_id: ws.id,
        workspace_name: ws.name,
        plan: ws.plan,
        generations_used: await generationsUsed(deps.orm.em.fork(), ws.id),
        generations_allowance: generationAllowance(ws.plan),
        storageBytes: await storageUsed(deps.orm.em.fork(), ws.id),
        storageLimitBytes: deps.cfg.MEDIA_STORAGE_LIMIT_BYTES ?? PLANS[ws.plan].storageBytes,
      };
    },
  );
}
