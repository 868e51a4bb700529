import type { ApiRouter } from '../http/router.js';
import type { RouteDeps } from '../deps.js';
import { Me } from '@lectern/contracts';
import { generationsUsed } from '@lectern/generation';
import { generationAllowance } from '@lectern/plans';
import { parseStorageLimits, storageLimit, storageUse } from '@lectern/media';
import { errorResponses } from './shared.js';

export function meRoutes(api: ApiRouter, deps: Pick<RouteDeps, 'orm' | 'cfg'>) {
  const storageLimits = parseStorageLimits(deps.cfg.MEDIA_STORAGE_LIMITS);
  api.route(
    {
      method: 'get',
      path: '/me',
      operationId: 'getWorkspace',
      summary: 'Workspace info for the calling key (not wrapped in data)',
      description:
        "The workspace id, name and plan of the key in the Authorization header, the key's own scope (read or write), the AI generations used this month (UTC) against the plan allowance (null: unlimited), and its media storage used against the plan's line; a quick way to check a key. The body is not wrapped in data.",
      tags: ['Workspace'],
      responses: { 200: { description: 'Workspace info', schema: Me }, ...errorResponses },
    },
    async (ctx) => {
      const ws = ctx.state.auth.workspace;
      const use = await storageUse(deps.orm.em.fork(), ws.id);
      ctx.body = {
        workspace_id: ws.id,
        workspace_name: ws.name,
        plan: ws.plan,
        key_scope: ctx.state.auth.scope,
        generations_used: await generationsUsed(deps.orm.em.fork(), ws.id),
        generations_allowance: generationAllowance(ws.plan),
        storageBytes: use.usedBytes,
        storageLimitBytes: storageLimit(ws.plan, storageLimits),
      };
    },
  );
}
