import { spawn, type ChildProcess } from 'node:child_process';
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { Receipt } from './webhook-receiver.js';
import { call } from './http.js';
import { makeWorkspace, testConfig, testRuntime, type TestRuntime, type TestWorkspace } from './context.js';
import { boundQuery, type EntityManager } from '@lectern/db';
import type { EventType } from '@lectern/contracts';
import { closeRuntime } from '@lectern/runtime';
import { parseEncryptionKey } from '@lectern/secrets';
import { createEndpoint } from '@lectern/webhooks';

/**
 * Signature checks written the way a subscriber would, with node:crypto only (not Lectern's own verifier), so a
 * mistake shared by signer and verifier cannot hide.
 */
export function subscriberVerifies(
  secret: string,
  r: Receipt,
  nowSec = Date.now() / 1000,
): { service: boolean; standard: boolean } {
  const same = (a: string, b: string) => {
    const x = Buffer.from(a);
    const y = Buffer.from(b);
    return x.length === y.length && timingSafeEqual(x, y);
  };
  const hex = createHmac('sha256', secret).update(r.body).digest('hex');
  const service = same(`sha256=${hex}`, String(r.headers['x-service-signature'] ?? ''));
  const id = String(r.headers['webhook-id'] ?? '');
  const ts = String(r.headers['webhook-timestamp'] ?? '');
  const key = Buffer.from(secret.slice('whsec_'.length), 'base64');
  const sig = createHmac('sha256', key).update(`${id}.${ts}.${r.body}`).digest('base64');
  const fresh = id !== '' && /^\d+$/.test(ts) && Math.abs(nowSec - Number(ts)) <= 300;
  const standard =
    fresh &&
    String(r.headers['webhook-signature'] ?? '')
      .split(' ')
      .some((s) => same(s, `v1,${sig}`));
  return { service, standard };
}

export interface EndpointDto {
  id: string;
  name: string;
  url: string;
  eventTypes: string[];
  isActive: boolean;
  disabledReason: string | null;
  disabledAt: string | null;
  createdAt: string;
  updatedAt: string;
}

export interface DeliveryDto {
  id: string;
  eventId: string;
  eventType: string;
  status: 'pending' | 'delivered' | 'failed' | 'cancelled';
  attempts: number;
  lastStatusCode: number | null;
  nextAttemptAt: string | null;
  createdAt: string;
  updatedAt: string;
}

export interface AttemptDto {
  attempt: number;
  statusCode: number | null;
  error: string | null;
  durationMs: number;
  responseBody: string;
  startedAt: string;
}

export interface DeliveryDetailDto extends Omit<DeliveryDto, 'attempts'> {
  lastError: string | null;
  payload: string;
  attempts: AttemptDto[];
}

export async function createHook(
  base: string,
  key: string,
  body: { name?: string; url: string; eventTypes: string[]; isActive?: boolean },
): Promise<{ endpoint: EndpointDto; secret: string }> {
  const res = await call<{ data: EndpointDto & { signingSecret: string } }>(base, 'POST', '/webhooks', {
    key,
    body: { name: body.name ?? 'test hook', ...body },
  });
  if (res.status !== 201) throw new Error(`create webhook: ${res.status} ${res.text}`);
  const { signingSecret, ...endpoint } = res.body.data;
  return { endpoint, secret: signingSecret };
}

export async function deliveries(
  base: string,
  key: string,
  endpointId: string,
  query = '',
): Promise<DeliveryDto[]> {
  const res = await call<{ data: DeliveryDto[] }>(base, 'GET', `/webhooks/${endpointId}/deliveries${query}`, {
    key,
  });
  if (res.status !== 200) throw new Error(`list deliveries: ${res.status} ${res.text}`);
  return res.body.data;
}

export async function delivery(
  base: string,
  key: string,
  endpointId: string,
  deliveryId: string,
): Promise<DeliveryDetailDto> {
  const res = await call<{ data: DeliveryDetailDto }>(
    base,
    'GET',
    `/webhooks/${endpointId}/deliveries/${deliveryId}`,
    { key },
  );
  if (res.status !== 200) throw new Error(`get delivery: ${res.status} ${res.text}`);
  return res.body.data;
}

/** Removes a workspace's endpoints (and so their queued deliveries) so later tests' workers have nothing left over. */
export async function dropHooks(em: EntityManager, workspaceIds: string[]): Promise<void> {
  if (workspaceIds.length)
    await boundQuery(em, 'delete from webhook_endpoints where workspace_id = any (?::text[])', [
      workspaceIds,
    ]);
}

/** `lectern worker webhook` as its own OS process, on this run's database and bus (`overrides` on top). */
export function spawnWorkerProcess(overrides: Record<string, string> = {}): ChildProcess {
  const env: Record<string, string> = { PATH: process.env.PATH ?? '' };
  for (const [k, v] of Object.entries(testConfig(overrides))) if (v !== undefined) env[k] = String(v);
  // No probe server: a fixed port would collide with another run on the same machine.
  env.WORKER_HTTP_PORT = '0';
  return spawn(process.execPath, ['--import', 'tsx', 'apps/cli/src/main.ts', 'worker', 'webhook'], {
    env,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
}

/**
 * A runtime of its own, a workspace and one endpoint (created directly, no API) subscribed to `eventTypes`, for tests
 * that drive the webhook statements themselves; `close` drops the endpoint's rows and the runtime.
 */
export async function endpointFixture(
  name: string,
  eventTypes: EventType[],
): Promise<{ rt: TestRuntime; ws: TestWorkspace; endpointId: string; close(): Promise<void> }> {
  const rt = await testRuntime(name);
  const ws = await makeWorkspace(rt.orm.em.fork(), 'scale', name);
  const policy = { key: () => parseEncryptionKey(rt.cfg.WEBHOOK_SECRET_KEY!), allowPrivate: true };
  const { endpoint } = await createEndpoint(rt.orm.em.fork(), policy, ws.id, {
    name,
    url: 'http://127.0.0.1:9/hook',
    eventTypes,
  });
  return {
    rt,
    ws,
    endpointId: endpoint.id,
    async close() {
      await dropHooks(rt.orm.em.fork(), [ws.id]);
      await closeRuntime(rt, { keepStorage: true });
    },
  };
}

/** The worker's claim bounds with its defaults (`startWebhookWorker`), for tests that claim by hand. */
export const CLAIM_LIMITS = {
  perEndpoint: 128,
  batch: 256,
  leaseSec: 15,
} as const;

/** The worker's "slow endpoint" age with its default (`startWebhookWorker`), for tests that make a sender. */
export const SLOW_AFTER_SEC = 2;
