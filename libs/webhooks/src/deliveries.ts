/**
 * The delivery log, manual resend and test sends. Every function is scoped by workspace and endpoint: another
 * workspace's endpoint or delivery is a 404.
 */
import {
  newId,
  boundQuery,
  WebhookAttemptSchema,
  WebhookDeliverySchema,
  WebhookEndpointSchema,
  type EntityManager,
  type WebhookAttempt,
  type WebhookDelivery,
  type WebhookDeliveryStatus,
} from '@lectern/db';
import { AppError, notFound } from '@lectern/errors';
import { EVENT_TYPES, type EventType } from '@lectern/contracts';
import { envelopeBody } from './fanout.js';
import { samplePayload } from './samples.js';

/**
 * Cancels the pending deliveries of an endpoint (deactivated, or switched off after sustained failure). A lease is
 * left as it is: an
 * attempt already under way still records what happened (the delivery stays cancelled unless it succeeded).
 */
export async function cancelPending(em: EntityManager, endpointId: string): Promise<number> {
  const rows = await boundQuery(
    em,
    `update webhook_deliveries set status = 'cancelled', next_attempt_at = null, updated_at = now()
      where endpoint_id = ? and status = 'pending' returning id`,
    [endpointId],
  );
  return rows.length;
}

async function endpointOf(em: EntityManager, workspaceId: string, endpointId: string) {
  const ep = await em.findOne(WebhookEndpointSchema, { id: endpointId, workspaceId });
  if (!ep) throw notFound('Webhook endpoint');
  return ep;
}

export async function listDeliveries(
  em: EntityManager,
  workspaceId: string,
  endpointId: string,
  opts: { status?: WebhookDeliveryStatus; eventType?: string; limit: number; offset: number },
): Promise<{ rows: WebhookDelivery[]; total: number }> {
  await endpointOf(em, workspaceId, endpointId);
  const where: Record<string, unknown> = { workspaceId, endpointId };
  if (opts.status) where.status = opts.status;
  if (opts.eventType) where.eventType = opts.eventType;
  const [rows, total] = await em.findAndCount(WebhookDeliverySchema, where, {
    orderBy: { createdAt: 'desc', id: 'desc' },
    limit: opts.limit,
    offset: opts.offset,
  });
  return { rows, total };
}

export async function getDelivery(
  em: EntityManager,
  workspaceId: string,
  endpointId: string,
  deliveryId: string,
): Promise<{ delivery: WebhookDelivery; attempts: WebhookAttempt[] }> {
  const delivery = await em.findOne(
    WebhookDeliverySchema,
    { id: deliveryId, endpointId, workspaceId },
    { populate: ['payload'] },
  );
  if (!delivery) throw notFound('Webhook delivery');
  const attempts = await em.find(WebhookAttemptSchema, { deliveryId }, { orderBy: { attempt: 'asc' } });
  return { delivery, attempts };
}

function inactive(): AppError {
  return new AppError(
    'conflict',
    'The webhook endpoint is inactive: re-enable it with PATCH {"isActive": true} first',
  );
}

/**
 * Queues one more attempt of a delivery, whatever its state: the same body and event id, to the endpoint's
 * current URL, due now. A pending delivery keeps its remaining automatic retries; a delivered, failed or
 * cancelled one gets exactly this one attempt (its status then reflects that attempt's outcome).
 */
export async function resendDelivery(
  em: EntityManager,
  workspaceId: string,
  endpointId: string,
  deliveryId: string,
): Promise<WebhookDelivery> {
  const ep = await endpointOf(em, workspaceId, endpointId);
  const found = await em.count(WebhookDeliverySchema, { id: deliveryId, endpointId, workspaceId });
  if (!found) throw notFound('Webhook delivery');
  if (!ep.isActive) throw inactive();
  // A pending, leased row has an attempt under way: its lease stays (the resend follows it). Any other lease is
  // left over from before and must not hold the resend back.
  await boundQuery(
    em,
    `update webhook_deliveries set
       -- A resend is an extra attempt: a pending delivery keeps every automatic retry it had left.
       max_attempts = case when status = 'pending' then max_attempts + 1 else attempts + 1 end,
       locked_until = case when status = 'pending' then locked_until else null end,
       status = 'pending', next_attempt_at = now(), updated_at = now()
     where id = ? and endpoint_id = ? and workspace_id = ?`,
    [deliveryId, endpointId, workspaceId],
  );
  const fresh = em.fork();
  return (await fresh.findOne(WebhookDeliverySchema, { id: deliveryId }))!;
}

/**
 * Queues a signed sample event of `eventType` (default: the endpoint's first subscribed type) as a delivery of its
 * own, with one attempt: it shows up in the delivery log like any other, with a fresh event id.
 */
export async function sendTestEvent(
  em: EntityManager,
  workspaceId: string,
  endpointId: string,
  opts: { eventType?: EventType; publicUrl: string },
): Promise<WebhookDelivery> {
  const ep = await endpointOf(em, workspaceId, endpointId);
  if (!ep.isActive) throw inactive();
  const type =
    opts.eventType ??
    (ep.eventTypes.find((t) => (EVENT_TYPES as readonly string[]).includes(t)) as EventType);
  const envelope = {
    id: newId('evt'),
    type,
    createdAt: new Date().toISOString(),
    workspaceId,
    data: samplePayload(type, opts.publicUrl) as Record<string, unknown>,
  };
  const now = new Date();
  const delivery = em.create(WebhookDeliverySchema, {
    id: newId('whd'),
    workspaceId,
    endpointId,
    eventId: envelope.id,
    eventType: type,
    payload: envelopeBody(envelope),
    status: 'pending',
    attempts: 0,
    // A test send is attempted once; the subscriber reads the outcome in the log (or sends another).
    maxAttempts: 1,
    lastStatusCode: null,
    lastError: null,
    nextAttemptAt: now,
    lockedUntil: null,
    claimSeq: 0,
    createdAt: now,
    updatedAt: now,
  });
  await em.flush();
  return delivery;
}
