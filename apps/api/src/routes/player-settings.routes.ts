import { z } from 'zod';
import type { ApiRouter } from '../http/router.js';
import type { EntityManager } from '@lectern/db';
import { PlayerSettings, UpdatePlayerSettings } from '@lectern/contracts';
import { getPlayerSettings, updatePlayerSettings } from '@lectern/learner-runs';
import { errorResponses } from './shared.js';

/** Who may spend the workspace's views: allowed origins and anonymous runs (docs/player-api.md). Every plan. */
export function playerSettingsRoutes(api: ApiRouter, deps: { em: () => EntityManager }) {
  const tags = ['Workspace'] as const;

  api.route(
    {
      method: 'get',
      path: '/settings/player',
      operationId: 'getPlayerSettings',
      summary: 'Who may open runs: allowed origins and anonymous runs',
      description:
        'allowedOrigins null (the default) lets any site embed courses and open runs; anonymousRuns true (the ' +
        'default) serves learners without a signed identity.',
      tags,
      responses: {
        200: { description: 'The settings', schema: z.object({ data: PlayerSettings }) },
        ...errorResponses,
      },
    },
    async (ctx) => {
      ctx.body = { data: await getPlayerSettings(deps.em(), ctx.state.auth.workspace.id) };
    },
  );

  api.route(
    {
      method: 'patch',
      path: '/settings/player',
      operationId: 'updatePlayerSettings',
      summary: 'Restrict who may open runs (origins, anonymous runs)',
      description:
        'Fields left out keep their value. allowedOrigins replaces the whole list (up to 100 origins, ' +
        '`https://*.example.com` for every subdomain; null: any origin): the embed page may be framed only by ' +
        'them (Content-Security-Policy frame-ancestors) and run opens must come from them (Origin header; a SCORM ' +
        "package's LMS origin belongs on the list), else 403 origin_not_allowed and no view is counted. " +
        'anonymousRuns false answers anonymous opens with 401, counting nothing. Applies to the next open.',
      tags,
      body: UpdatePlayerSettings,
      responses: {
        200: { description: 'The settings now', schema: z.object({ data: PlayerSettings }) },
        ...errorResponses,
      },
    },
    async (ctx) => {
      ctx.body = {
        data: await updatePlayerSettings(deps.em(), ctx.state.auth.workspace.id, ctx.state.body),
      };
    },
  );
}
