/**
 * Webhook endpoints: create, read, update, delete, scoped by workspace (another workspace's endpoint is a 404).
 *
 * The signing secret is generated here, returned once by `createEndpoint`, and stored only encrypted
 * (AES-256-GCM, bound to the endpoint id). The entity loads it lazily, so no read path carries it.
 */
import { promises as dns } from 'node:dns';
import { LockMode } from '@mikro-orm/core';
import { newId, WebhookEndpointSchema, type EntityManager, type WebhookEndpoint } from '@lectern/db';
import { invalid, notFound } from '@lectern/errors';
import type { CreateWebhook, UpdateWebhook } from '@lectern/contracts';
import { checkUrl, checkUrlResolved, type HostResolver, type ResolvedAddress } from '@lectern/outbound';
import { encryptSecret } from '@lectern/secrets';
import { generateSigningSecret } from './secrets.js';
import { cancelPending } from './deliveries.js';

export interface EndpointPolicy {
  /** Encrypts signing secrets at rest (WEBHOOK_SECRET_KEY). Only creation needs it. */
  key: () => Buffer;
  /** ALLOW_PRIVATE_NETWORKS (`OutboundEnv`). */
  allowPrivate: boolean;
  /** DNS override (tests). */
  lookup?: HostResolver;
}

/** How long a create/update waits for DNS before accepting the URL unresolved (delivery re-checks anyway). */
const CREATE_DNS_TIMEOUT_MS = 3000;

function withTimeout(resolver: HostResolver | undefined, ms: number): HostResolver {
  return async (hostname) => {
    const lookup = resolver ?? ((h: string) => dns.lookup(h, { all: true, verbatim: true }));
    let timer: NodeJS.Timeout | undefined;
    try {
      return await Promise.race([
        lookup(hostname),
        new Promise<ResolvedAddress[]>((_, reject) => {
          timer = setTimeout(() => reject(Object.assign(new Error('DNS timeout'), { code: 'ETIMEOUT' })), ms);
        }),
      ]);
    } finally {
      clearTimeout(timer);
    }
  };
}

/**
 * Refuses (400, path ['url']) a URL that is not absolute http(s) without credentials, or whose host is or
 * resolves to a loopback, private, link-local or metadata address (unless private networks are allowed). A name
 * that does not resolve right now is accepted: that is not an SSRF risk, and every delivery checks again.
 */
export async function checkEndpointUrl(url: string, policy: EndpointPolicy): Promise<void> {
  const syntax = checkUrl(url, { allowPrivate: true });
  if (!syntax.ok) {
    throw invalid('url must be an absolute http(s) URL', [
      { code: 'invalid_url', path: ['url'], message: syntax.reason },
    ]);
  }
  if (policy.allowPrivate) return;
  const refuse = (reason: string) =>
    invalid('url points at a non-public address', [
      {
        code: 'forbidden_address',
        path: ['url'],
        message: `${reason}: webhooks are delivered to public addresses only`,
      },
    ]);
  const literal = checkUrl(url, { allowPrivate: false });
  if (!literal.ok) throw refuse(literal.reason);
  const resolved = await checkUrlResolved(url, {
    allowPrivate: false,
    lookup: withTimeout(policy.lookup, CREATE_DNS_TIMEOUT_MS),
  });
  if (!resolved.ok && !resolved.reason.startsWith('DNS lookup')) throw refuse(resolved.reason);
}

export async function createEndpoint(
  em: EntityManager,
  policy: EndpointPolicy,
  workspaceId: string,
  input: CreateWebhook,
): Promise<{ endpoint: WebhookEndpoint; signingSecret: string }> {
  await checkEndpointUrl(input.url, policy);
  const id = newId('whe');
  const signingSecret = generateSigningSecret();
  const now = new Date();
  const endpoint = em.create(WebhookEndpointSchema, {
    id,
    workspaceId,
    name: input.name,
    url: input.url,
    eventTypes: input.eventTypes,
    // SPEC lists isActive among the writable fields: an endpoint may be created switched off.
    isActive: input.isActive ?? true,
    secretEncrypted: encryptSecret(signingSecret, policy.key(), id),
    disabledReason: null,
    disabledAt: null,
    failingSince: null,
    createdAt: now,
    updatedAt: now,
  });
  await em.flush();
  return { endpoint, signingSecret };
}

export async function listEndpoints(em: EntityManager, workspaceId: string): Promise<WebhookEndpoint[]> {
  return em.find(WebhookEndpointSchema, { workspaceId }, { orderBy: { createdAt: 'asc', id: 'asc' } });
}

export async function getEndpoint(
  em: EntityManager,
  workspaceId: string,
  id: string,
): Promise<WebhookEndpoint> {
  const row = await em.findOne(WebhookEndpointSchema, { id, workspaceId });
  if (!row) throw notFound('Webhook endpoint');
  return row;
}

/**
 * Applies a PATCH. Switching `isActive` off cancels the endpoint's pending deliveries in the same transaction;
 * switching it on clears `disabledReason`, `disabledAt` and the run of failures behind them (cancelled deliveries
 * stay cancelled; resend them if needed). A new
 * `url` applies to every later attempt, including retries of earlier events.
 */
export async function updateEndpoint(
  em: EntityManager,
  policy: EndpointPolicy,
  workspaceId: string,
  id: string,
  patch: UpdateWebhook,
): Promise<WebhookEndpoint> {
  if (patch.url !== undefined) await checkEndpointUrl(patch.url, policy);
  return em.transactional(async (tx) => {
    const row = await tx.findOne(
      WebhookEndpointSchema,
      { id, workspaceId },
      { lockMode: LockMode.PESSIMISTIC_WRITE },
    );
    if (!row) throw notFound('Webhook endpoint');
    let changed = false;
    if (patch.name !== undefined && patch.name !== row.name) [row.name, changed] = [patch.name, true];
    if (patch.url !== undefined && patch.url !== row.url) [row.url, changed] = [patch.url, true];
    if (patch.eventTypes !== undefined) [row.eventTypes, changed] = [patch.eventTypes, true];
    if (patch.isActive !== undefined && patch.isActive !== row.isActive) {
      row.isActive = patch.isActive;
      changed = true;
      if (patch.isActive) {
        // A fresh start: the sustained-failure rule counts failures from now on.
        row.disabledReason = null;
        row.disabledAt = null;
        row.failingSince = null;
      } else await cancelPending(tx, row.id);
    }
    if (changed) row.updatedAt = new Date();
    return row;
  });
}

/** Deletes the endpoint; its deliveries and their attempts go with it, so nothing more is sent. */
export async function deleteEndpoint(em: EntityManager, workspaceId: string, id: string): Promise<void> {
  const n = await em.nativeDelete(WebhookEndpointSchema, { id, workspaceId });
  if (!n) throw notFound('Webhook endpoint');
}
