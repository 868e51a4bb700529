import { z } from 'zod';
import type { ApiRouter } from '../http/router.js';
import type { RouteDeps } from '../deps.js';
import {
  CreateWebhook,
  DeliveryListQuery,
  ErrorBody,
  Pagination,
  TestWebhook,
  UpdateWebhook,
  WebhookDelivery,
  WebhookDeliveryDetail,
  WebhookEndpoint,
  WebhookEndpointCreated,
  paged,
  parsePaging,
} from '@lectern/contracts';
import {
  createEndpoint,
  deleteEndpoint,
  getDelivery,
  getEndpoint,
  kickDispatchers,
  listDeliveries,
  listEndpoints,
  resendDelivery,
  sendTestEvent,
  updateEndpoint,
  type EndpointPolicy,
  webhookDeliveryDetailDto,
  webhookDeliveryDto,
  webhookEndpointDto,
} from '@lectern/webhooks';
import { installationSecretKey } from '@lectern/secrets';
import { errorResponses } from './shared.js';

export function webhookRoutes(api: ApiRouter, deps: Pick<RouteDeps, 'orm' | 'bus' | 'cfg'>) {
  const tags = ['Webhooks'] as const;
  const em = () => deps.orm.em.fork();
  let key: Buffer | undefined;
  const policy: EndpointPolicy = {
    key: () => (key ??= installationSecretKey(deps.cfg)),
    allowPrivate: deps.cfg.ALLOW_PRIVATE_NETWORKS,
  };
  const conflict = { 409: { description: 'conflict: the endpoint is inactive', schema: ErrorBody } };

  api.route(
    {
      method: 'get',
      path: '/webhooks',
      operationId: 'listWebhookEndpoints',
      summary: 'List webhook endpoints (oldest first)',
      description:
        'Unpaged. Signing secrets are never listed: they are shown once, when the endpoint is created.',
      tags,
      responses: {
        200: {
          description: 'Every endpoint of the workspace',
          schema: z.object({ data: z.array(WebhookEndpoint) }),
        },
        ...errorResponses,
      },
    },
    async (ctx) => {
      ctx.body = { data: (await listEndpoints(em(), ctx.state.auth.workspace.id)).map(webhookEndpointDto) };
    },
  );

  api.route(
    {
      method: 'post',
      path: '/webhooks',
      operationId: 'createWebhookEndpoint',
      summary: 'Create a webhook endpoint; the response carries signingSecret, shown this once only',
      description:
        'The url must be an absolute http(s) URL whose host is not, and does not resolve to, a loopback, private, link-local or metadata address (400 with path ["url"]). isActive defaults to true; an endpoint created with isActive: false receives nothing until it is set to true.',
      tags,
      body: CreateWebhook,
      responses: {
        201: {
          description: 'Created, with signingSecret',
          schema: z.object({ data: WebhookEndpointCreated }),
        },
        ...errorResponses,
      },
    },
    async (ctx) => {
      const { endpoint, signingSecret } = await createEndpoint(
        em(),
        policy,
        ctx.state.auth.workspace.id,
        ctx.state.body,
      );
      ctx.status = 201;
      ctx.body = { data: { ...webhookEndpointDto(endpoint), signingSecret } };
    },
  );

  api.route(
    {
      method: 'get',
      path: '/webhooks/:id',
      operationId: 'getWebhookEndpoint',
      summary: 'Get one webhook endpoint (never its secret)',
      description: 'The signing secret is never shown again after creation.',
      tags,
      responses: {
        200: { description: 'The endpoint', schema: z.object({ data: WebhookEndpoint }) },
        ...errorResponses,
      },
    },
    async (ctx) => {
      ctx.body = {
        data: webhookEndpointDto(await getEndpoint(em(), ctx.state.auth.workspace.id, ctx.params.id)),
      };
    },
  );

  api.route(
    {
      method: 'patch',
      path: '/webhooks/:id',
      operationId: 'updateWebhookEndpoint',
      summary: 'Update name, url, eventTypes or isActive of a webhook endpoint',
      description:
        'Deactivating (isActive: false) cancels pending deliveries; re-activating clears disabledReason and disabledAt. A new url follows the same rules as on creation.',
      tags,
      body: UpdateWebhook,
      responses: {
        200: { description: 'The endpoint', schema: z.object({ data: WebhookEndpoint }) },
        ...errorResponses,
      },
    },
    async (ctx) => {
      const row = await updateEndpoint(
        em(),
        policy,
        ctx.state.auth.workspace.id,
        ctx.params.id,
        ctx.state.body,
      );
      ctx.body = { data: webhookEndpointDto(row) };
    },
  );

  api.route(
    {
      method: 'delete',
      path: '/webhooks/:id',
      operationId: 'deleteWebhookEndpoint',
      summary: 'Delete a webhook endpoint and its delivery log; nothing more is sent to it',
      description: '404 when the endpoint is not in this workspace.',
      tags,
      responses: { 204: { description: 'Deleted', schema: null }, ...errorResponses },
    },
    async (ctx) => {
      await deleteEndpoint(em(), ctx.state.auth.workspace.id, ctx.params.id);
      ctx.status = 204;
    },
  );

  api.route(
    {
      method: 'get',
      path: '/webhooks/:id/deliveries',
      operationId: 'listWebhookDeliveries',
      summary: 'The delivery log of an endpoint: newest first, paged, filtered by status and eventType',
      description: 'Filter by status and eventType; limit and offset page the result.',
      tags,
      query: DeliveryListQuery,
      responses: {
        200: {
          description: 'A page of deliveries',
          schema: z.object({ data: z.array(WebhookDelivery), pagination: Pagination }),
        },
        ...errorResponses,
      },
    },
    async (ctx) => {
      const paging = parsePaging(ctx.query);
      const { status, eventType } = ctx.state.query;
      const { rows, total } = await listDeliveries(em(), ctx.state.auth.workspace.id, ctx.params.id, {
        status,
        eventType,
        ...paging,
      });
      ctx.body = paged(rows.map(webhookDeliveryDto), total, paging);
    },
  );

  api.route(
    {
      method: 'get',
      path: '/webhooks/:id/deliveries/:deliveryId',
      operationId: 'getWebhookDelivery',
      summary:
        'One delivery with the exact body sent and every attempt (status, error, latency, first 2 KB of the response)',
      description:
        'Includes the exact body sent and every attempt: status, error, latency and the first 2 KB of the response.',
      tags,
      responses: {
        200: { description: 'The delivery', schema: z.object({ data: WebhookDeliveryDetail }) },
        ...errorResponses,
      },
    },
    async (ctx) => {
      const { delivery, attempts } = await getDelivery(
        em(),
        ctx.state.auth.workspace.id,
        ctx.params.id,
        ctx.params.deliveryId,
      );
      ctx.body = { data: webhookDeliveryDetailDto(delivery, attempts) };
    },
  );

  api.route(
    {
      method: 'post',
      path: '/webhooks/:id/deliveries/:deliveryId/resend',
      operationId: 'resendWebhookDelivery',
      summary:
        "Send a delivery again (same body, same X-Service-Delivery) to the endpoint's current URL, whatever its state",
      description:
        "The same body and the same X-Service-Delivery, so a receiver that dedupes on it sees a repeat. Sent to the current URL whatever the delivery's state; 409 when the endpoint is inactive.",
      tags,
      responses: {
        202: {
          description: 'Queued; poll the delivery for the outcome',
          schema: z.object({ data: WebhookDelivery }),
        },
        ...conflict,
        ...errorResponses,
      },
    },
    async (ctx) => {
      const row = await resendDelivery(
        em(),
        ctx.state.auth.workspace.id,
        ctx.params.id,
        ctx.params.deliveryId,
      );
      kickDispatchers(deps.bus);
      ctx.status = 202;
      ctx.body = { data: webhookDeliveryDto(row) };
    },
  );

  api.route(
    {
      method: 'post',
      path: '/webhooks/:id/test',
      operationId: 'sendWebhookTestEvent',
      summary: 'Send a signed sample event to the endpoint (one attempt, listed in its delivery log)',
      description:
        'A signed sample event, delivered once (no retries) and listed in the delivery log like any other; 409 when the endpoint is inactive.',
      tags,
      body: TestWebhook,
      responses: {
        202: {
          description: 'Queued; poll the delivery for the outcome',
          schema: z.object({ data: WebhookDelivery }),
        },
        ...conflict,
        ...errorResponses,
      },
    },
    async (ctx) => {
      const row = await sendTestEvent(em(), ctx.state.auth.workspace.id, ctx.params.id, {
        eventType: ctx.state.body.eventType,
        publicUrl: deps.cfg.PUBLIC_URL,
      });
      kickDispatchers(deps.bus);
      ctx.status = 202;
      ctx.body = { data: webhookDeliveryDto(row) };
    },
  );
}
