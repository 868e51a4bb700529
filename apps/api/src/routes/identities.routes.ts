import { z } from 'zod';
import type { ApiRouter } from '../http/router.js';
import type { RouteDeps } from '../deps.js';
import {
  BulkDeleteIdentities,
  BulkDeleteResult,
  BulkUpsertIdentities,
  BulkUpsertResult,
  Identity,
  IdentitySearchQuery,
  Pagination,
  UpsertIdentity,
  paged,
  parsePaging,
} from '@lectern/contracts';
import {
  bulkDeleteIdentities,
  deleteIdentity,
  getIdentity,
  searchIdentities,
  upsertIdentities,
  identityDto,
} from '@lectern/identities';
import { errorResponses } from './shared.js';

export function identityRoutes(api: ApiRouter, deps: Pick<RouteDeps, 'orm' | 'relay'>) {
  const tags = ['Identities'];
  const em = () => deps.orm.em.fork();

  api.route(
    {
      method: 'get',
      path: '/identities',
      summary: 'Search identities (newest first, paged)',
      tags,
      query: IdentitySearchQuery,
      responses: {
        200: {
          description: 'A page of identities',
          schema: z.object({ data: z.array(Identity), pagination: Pagination }),
        },
        ...errorResponses,
      },
    },
    async (ctx) => {
      const paging = parsePaging(ctx.query);
      const search = typeof ctx.query.search === 'string' ? ctx.query.search : undefined;
      const { rows, total } = await searchIdentities(em(), ctx.state.auth.workspace.id, {
        search,
        ...paging,
      });
      ctx.body = paged(rows.map(identityDto), total, paging);
    },
  );

  api.route(
    {
      method: 'post',
      path: '/identities',
      summary: 'Upsert an identity by externalId (201 on first creation, 200 after)',
      tags,
      body: UpsertIdentity,
      responses: {
        200: { description: 'Updated', schema: z.object({ data: Identity }) },
        201: { description: 'Created', schema: z.object({ data: Identity }) },
        ...errorResponses,
      },
    },
    async (ctx) => {
      const [r] = await upsertIdentities(em(), ctx.state.auth.workspace.id, [ctx.state.body]);
      if (r.created) deps.relay.kick();
      ctx.status = r.created ? 201 : 200;
      ctx.body = { data: identityDto(r.identity) };
    },
  );

  api.route(
    {
      method: 'post',
      path: '/identities/bulk',
      summary: 'Upsert up to 500 identities (201 when any was created)',
      tags,
      body: BulkUpsertIdentities,
      responses: {
        200: { description: 'All existed', schema: z.object({ data: BulkUpsertResult }) },
        201: { description: 'Some created', schema: z.object({ data: BulkUpsertResult }) },
        ...errorResponses,
      },
    },
    async (ctx) => {
      const results = await upsertIdentities(em(), ctx.state.auth.workspace.id, ctx.state.body.identities);
      const created = results.filter((r) => r.created).length;
      if (created) deps.relay.kick();
      ctx.status = created ? 201 : 200;
      ctx.body = {
        data: {
          created,
          updated: results.length - created,
          identities: results.map((r) => identityDto(r.identity)),
        },
      };
    },
  );

  api.route(
    {
      method: 'delete',
      path: '/identities/bulk',
      summary: 'Delete up to 500 identities by externalIds and/or ids (keys in the body)',
      tags,
      body: BulkDeleteIdentities,
      responses: {
        200: { description: 'What was removed', schema: z.object({ data: BulkDeleteResult }) },
        ...errorResponses,
      },
    },
    async (ctx) => {
      ctx.body = { data: await bulkDeleteIdentities(em(), ctx.state.auth.workspace.id, ctx.state.body) };
    },
  );

  api.route(
    {
      method: 'get',
      path: '/identities/:id',
      summary: 'Get one identity',
      tags,
      responses: {
        200: { description: 'The identity', schema: z.object({ data: Identity }) },
        ...errorResponses,
      },
    },
    async (ctx) => {
      ctx.body = { data: identityDto(await getIdentity(em(), ctx.state.auth.workspace.id, ctx.params.id)) };
    },
  );

  api.route(
    {
      method: 'delete',
      path: '/identities/:id',
      summary: 'Delete one identity',
      tags,
      responses: { 204: { description: 'Deleted', schema: null }, ...errorResponses },
    },
    async (ctx) => {
      await deleteIdentity(em(), ctx.state.auth.workspace.id, ctx.params.id);
      ctx.status = 204;
    },
  );
}
