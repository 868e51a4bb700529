import { z } from 'zod';
import type { ApiRouter } from '../http/router.js';
import type { RouteDeps } from '../deps.js';
import { CreateTheme, Theme, UpdateTheme } from '@lectern/contracts';
import { createTheme, deleteTheme, getTheme, listThemes, updateTheme, themeDto } from '@lectern/authoring';
import { planGate } from '../http/plan-gate.js';
import { errorResponses } from './shared.js';

export function themeRoutes(api: ApiRouter, deps: Pick<RouteDeps, 'orm'>) {
  const tags = ['Themes'] as const;
  const em = () => deps.orm.em.fork();
  const gate = planGate('themes');
  const one = z.object({ data: Theme });
  const scale = 'Scale plan or higher (403 plan_required otherwise, before the body is looked at).';

  api.route(
    {
      method: 'get',
      path: '/themes',
      operationId: 'listThemes',
      summary: 'List themes (newest first)',
      description: scale,
      tags,
      responses: {
        200: { description: 'Every theme of the workspace', schema: z.object({ data: z.array(Theme) }) },
        ...errorResponses,
      },
    },
    gate,
    async (ctx) => {
      ctx.body = { data: (await listThemes(em(), ctx.state.auth.workspace.id)).map(themeDto) };
    },
  );

  api.route(
    {
      method: 'post',
      path: '/themes',
      operationId: 'createTheme',
      summary: 'Create a theme',
      description: `${scale} Tokens are validated (docs/design-tokens.md); unknown token keys are a 400.`,
      tags,
      body: CreateTheme,
      responses: { 201: { description: 'The created theme', schema: one }, ...errorResponses },
    },
    gate,
    async (ctx) => {
      const theme = await createTheme(em(), ctx.state.auth.workspace.id, ctx.state.body);
      ctx.status = 201;
      ctx.set('Location', `${api.prefix}/themes/${encodeURIComponent(theme.id)}`);
      ctx.body = { data: themeDto(theme) };
    },
  );

  api.route(
    {
      method: 'get',
      path: '/themes/:id',
      operationId: 'getTheme',
      summary: 'Get one theme',
      description: scale,
      tags,
      responses: { 200: { description: 'The theme', schema: one }, ...errorResponses },
    },
    gate,
    async (ctx) => {
      ctx.body = { data: themeDto(await getTheme(em(), ctx.state.auth.workspace.id, ctx.params.id)) };
    },
  );

  api.route(
    {
      method: 'patch',
      path: '/themes/:id',
      operationId: 'updateTheme',
      summary: 'Update a theme (any subset of name, tokens, customFonts; tokens replace the stored tokens)',
      description: scale,
      tags,
      body: UpdateTheme,
      responses: { 200: { description: 'The updated theme', schema: one }, ...errorResponses },
    },
    gate,
    async (ctx) => {
      ctx.body = {
        data: themeDto(await updateTheme(em(), ctx.state.auth.workspace.id, ctx.params.id, ctx.state.body)),
      };
    },
  );

  api.route(
    {
      method: 'delete',
      path: '/themes/:id',
      operationId: 'deleteTheme',
      summary: 'Delete a theme (courses using it fall back to no theme)',
      description: scale,
      tags,
      responses: { 204: { description: 'Deleted', schema: null }, ...errorResponses },
    },
    gate,
    async (ctx) => {
      await deleteTheme(em(), ctx.state.auth.workspace.id, ctx.params.id);
      ctx.status = 204;
    },
  );
}
