import { z } from 'zod';
import type { ApiRouter } from '../http/router.js';
import type { EntityManager } from '@lectern/db';
import { CreateEmbedKey, EmbedKey, EmbedKeyCreated } from '@lectern/contracts';
import { createEmbedKey, listEmbedKeys, revokeEmbedKey, type SecretBox } from '@lectern/learner-runs';
import { errorResponses } from './shared.js';

/** Embed keys: the secrets that sign learner identity tokens (docs/player-api.md). Every plan. */
export function embedKeyRoutes(api: ApiRouter, deps: { em: () => EntityManager; secrets: () => SecretBox }) {
  const tags = ['Embed keys'] as const;

  api.route(
    {
      method: 'post',
      path: '/embed-keys',
      operationId: 'createEmbedKey',
      summary: 'Create an embed key (the secret is shown once)',
      description:
        'Your backend signs identity tokens with the secret (docs/player-api.md). The secret is in this answer only; it is stored encrypted.',
      tags,
      body: CreateEmbedKey,
      responses: {
        201: { description: 'Created, with its secret', schema: z.object({ data: EmbedKeyCreated }) },
        ...errorResponses,
      },
    },
    async (ctx) => {
      const data = await createEmbedKey(
        deps.em(),
        deps.secrets(),
        ctx.state.auth.workspace.id,
        ctx.state.body.name,
      );
      ctx.status = 201;
      ctx.body = { data };
    },
  );

  api.route(
    {
      method: 'get',
      path: '/embed-keys',
      operationId: 'listEmbedKeys',
      summary: 'List live embed keys (newest first, without secrets)',
      description: 'Secrets are never listed.',
      tags,
      responses: {
        200: { description: 'Every live key', schema: z.object({ data: z.array(EmbedKey) }) },
        ...errorResponses,
      },
    },
    async (ctx) => {
      ctx.body = { data: await listEmbedKeys(deps.em(), ctx.state.auth.workspace.id) };
    },
  );

  api.route(
    {
      method: 'delete',
      path: '/embed-keys/:id',
      operationId: 'deleteEmbedKey',
      summary: 'Delete an embed key: tokens signed with it are refused from now on',
      description: 'Tokens signed with the key are refused from that moment on, on every server.',
      tags,
      responses: { 204: { description: 'Deleted', schema: null }, ...errorResponses },
    },
    async (ctx) => {
      await revokeEmbedKey(deps.em(), ctx.state.auth.workspace.id, ctx.params.id);
      ctx.status = 204;
    },
  );
}
