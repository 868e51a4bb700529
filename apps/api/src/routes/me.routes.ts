import type { ApiRouter } from '../http/router.js';
import { Me } from '@lectern/contracts';
import { errorResponses } from './shared.js';

export function meRoutes(api: ApiRouter) {
  api.route(
    {
      method: 'get',
      path: '/me',
      operationId: 'getWorkspace',
      summary: 'Workspace info for the calling key (not wrapped in data)',
      description:
        'The workspace id, name and plan of the key in the Authorization header; a quick way to check a key. The body is not wrapped in data.',
      tags: ['Workspace'],
      responses: { 200: { description: 'Workspace info', schema: Me }, ...errorResponses },
    },
    (ctx) => {
      const ws = ctx.state.auth.workspace;
      ctx.body = { workspace_id: ws.id, workspace_name: ws.name, plan: ws.plan };
    },
  );
}
