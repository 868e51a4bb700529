import { z } from 'zod';
import type { ApiRouter } from '../http/router.js';
import type { EntityManager } from '@lectern/db';
import {
  Attempt,
  Completion,
  CompletionWithAnswers,
  CompletionsQuery,
  Pagination,
  PagingQuery,
  paged,
  parsePaging,
} from '@lectern/contracts';
import { getCompletion, listAttempts, listCompletions } from '@lectern/learner-runs';
import { errorResponses } from './shared.js';

/** Completions and attempts: read-only, recorded by the player (docs/player-api.md). */
export function completionRoutes(api: ApiRouter, deps: { em: () => EntityManager }) {
  const tags = ['Completions'] as const;

  api.route(
    {
      method: 'get',
      path: '/completions',
      operationId: 'listCompletions',
      summary: 'List runs (newest first by startedAt; by completedAt with completedAfter), paged',
      description: 'Includes runs in progress. Answers are only on the single-run endpoint.',
      tags,
      query: CompletionsQuery,
      responses: {
        200: {
          description: 'A page of completions',
          schema: z.object({ data: z.array(Completion), pagination: Pagination }),
        },
        ...errorResponses,
      },
    },
    async (ctx) => {
      const paging = parsePaging(ctx.query);
      const { rows, total } = await listCompletions(
        deps.em(),
        ctx.state.auth.workspace.id,
        ctx.state.query,
        paging,
      );
      ctx.body = paged(rows, total, paging);
    },
  );

  api.route(
    {
      method: 'get',
      path: '/completions/:id',
      operationId: 'getCompletion',
      summary: 'One run, with its answers',
      description:
        'The run with its answers; 404 when it is not in this workspace. Any plan; read-only keys may read.',
      tags,
      responses: {
        200: { description: 'The completion', schema: z.object({ data: CompletionWithAnswers }) },
        ...errorResponses,
      },
    },
    async (ctx) => {
      ctx.body = { data: await getCompletion(deps.em(), ctx.state.auth.workspace.id, ctx.params.id) };
    },
  );

  api.route(
    {
      method: 'get',
      path: '/completions/:id/attempts',
      operationId: 'listCompletionAttempts',
      summary: 'The finishes of one run, newest first, paged',
      description: 'One entry per finished pass, so a retake keeps the earlier results.',
      tags,
      query: PagingQuery,
      responses: {
        200: {
          description: 'A page of attempts',
          schema: z.object({ data: z.array(Attempt), pagination: Pagination }),
        },
        ...errorResponses,
      },
    },
    async (ctx) => {
      const paging = parsePaging(ctx.query);
      const { rows, total } = await listAttempts(
        deps.em(),
        ctx.state.auth.workspace.id,
        ctx.params.id,
        paging,
      );
      ctx.body = paged(rows, total, paging);
    },
  );
}
