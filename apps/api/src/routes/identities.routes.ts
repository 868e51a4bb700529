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
  const tags = ['Identities'] as const;
  const em = () => deps.orm.em.fork();

  api.route(
    {
      method: 'get',
      path: '/identities',
      operationId: 'listIdentities',
      summary: 'Search identities (newest first, paged)',
      description: 'search matches externalId, name or email; limit and offset page the result.',
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
      operationId: 'upsertIdentity',
      summary: 'Upsert an identity by externalId (201 on first creation, 200 after)',
      description:
        'Creates the identity the first time its externalId is seen (201), else updates its name and email (200). Creating one emits identity.created.',
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
      operationId: 'upsertIdentitiesInBulk',
      summary: 'Upsert up to 500 identities (201 when any was created)',
      description:
        'The same upsert as for one identity, for up to 500 in one request; the answer counts created and updated and lists every identity.',
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
      operationId: 'deleteIdentitiesInBulk',
      summary: 'Delete up to 500 identities by externalIds and/or ids (keys in the body)',
      description:
        'The keys travel in the body: up to 500 externalIds and/or ids. Keys that match nothing are not an error; the answer says what was removed.',
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
      operationId: 'getIdentity',
      summary: 'Get one identity',
      description: '404 when no identity of this workspace has this id.',
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
      operationId: 'deleteIdentity',
      summary: 'Delete one identity',
      description: '404 when no identity of this workspace has this id.',
      tags,
      responses: { 204: { description: 'Deleted', schema: null }, ...errorResponses },
    },
    async (ctx) => {
      await deleteIdentity(em(), ctx.state.auth.workspace.id, ctx.params.id);
      ctx.status = 204;
    },
  );
}
