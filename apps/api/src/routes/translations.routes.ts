import { z } from 'zod';
import type { ApiRouter } from '../http/router.js';
import type { RouteDeps } from '../deps.js';
import { CreateTranslation, Translatable, Translation, UpdateTranslation } from '@lectern/contracts';
import {
  createTranslation,
  deleteTranslation,
  getTranslation,
  listTranslations,
  translatableOf,
  updateTranslation,
} from '@lectern/authoring';
import { planGate } from '../http/plan-gate.js';
import { errorResponses } from './shared.js';

export function translationRoutes(api: ApiRouter, deps: Pick<RouteDeps, 'orm'>) {
  const tags = ['Translations'] as const;
  const em = () => deps.orm.em.fork();
  const gate = planGate('translations');
  const one = z.object({ data: Translation });
  const scale = 'Scale plan or higher (403 plan_required otherwise, before the body is looked at).';

  api.route(
    {
      method: 'get',
      path: '/courses/:id/translatable',
      operationId: 'getTranslatableTexts',
      summary: 'The source language and every translatable text of a course',
      description: `${scale} Paths: title, s:<screenId>.title, s:<screenId>.b:<blockId>.<field> (docs/blocks.md "Translation paths").`,
      tags,
      responses: {
        200: { description: 'sourceLocale and fields', schema: z.object({ data: Translatable }) },
        ...errorResponses,
      },
    },
    gate,
    async (ctx) => {
      ctx.body = { data: await translatableOf(em(), ctx.state.auth.workspace.id, ctx.params.id) };
    },
  );

  api.route(
    {
      method: 'get',
      path: '/courses/:id/translations',
      operationId: 'listTranslations',
      summary: 'Every locale translated for the course (by locale tag)',
      description: scale,
      tags,
      responses: {
        200: { description: 'The translations', schema: z.object({ data: z.array(Translation) }) },
        ...errorResponses,
      },
    },
    gate,
    async (ctx) => {
      ctx.body = { data: await listTranslations(em(), ctx.state.auth.workspace.id, ctx.params.id) };
    },
  );

  api.route(
    {
      method: 'post',
      path: '/courses/:id/translations',
      operationId: 'createTranslation',
      summary: 'Add a new, empty locale',
      description: `${scale} locale must be a BCP-47 tag (stored canonical) other than the course's own; 409 conflict when the locale exists.`,
      tags,
      body: CreateTranslation,
      responses: {
        201: { description: 'The new translation', schema: one },
        ...errorResponses,
        409: {
          description: 'conflict: the course already has this locale',
          schema: errorResponses[400].schema,
        },
      },
    },
    gate,
    async (ctx) => {
      const translation = await createTranslation(
        em(),
        ctx.state.auth.workspace.id,
        ctx.params.id,
        ctx.state.body.locale,
      );
      ctx.status = 201;
      ctx.set(
        'Location',
        `${api.prefix}/courses/${encodeURIComponent(translation.courseId)}/translations/${encodeURIComponent(translation.id)}`,
      );
      ctx.body = { data: translation };
    },
  );

  api.route(
    {
      method: 'get',
      path: '/courses/:id/translations/:translationId',
      operationId: 'getTranslation',
      summary: "One locale's translated fields",
      description: scale,
      tags,
      responses: { 200: { description: 'The translation', schema: one }, ...errorResponses },
    },
    gate,
    async (ctx) => {
      ctx.body = {
        data: await getTranslation(
          em(),
          ctx.state.auth.workspace.id,
          ctx.params.id,
          ctx.params.translationId,
        ),
      };
    },
  );

  api.route(
    {
      method: 'patch',
      path: '/courses/:id/translations/:translationId',
      operationId: 'updateTranslation',
      summary: 'Merge translated texts (an empty string clears a path back to the source text)',
      description: `${scale} An unknown path is a 400 with the path ["content", <path>].`,
      tags,
      body: UpdateTranslation,
      responses: { 200: { description: 'The translation', schema: one }, ...errorResponses },
    },
    gate,
    async (ctx) => {
      ctx.body = {
        data: await updateTranslation(
          em(),
          ctx.state.auth.workspace.id,
          ctx.params.id,
          ctx.params.translationId,
          ctx.state.body.content,
        ),
      };
    },
  );

  api.route(
    {
      method: 'delete',
      path: '/courses/:id/translations/:translationId',
      operationId: 'deleteTranslation',
      summary: 'Delete a locale',
      description: scale,
      tags,
      responses: { 204: { description: 'Deleted', schema: null }, ...errorResponses },
    },
    gate,
    async (ctx) => {
      await deleteTranslation(em(), ctx.state.auth.workspace.id, ctx.params.id, ctx.params.translationId);
      ctx.status = 204;
    },
  );
}
