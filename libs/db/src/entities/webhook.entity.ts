import { EntitySchema } from '@mikro-orm/core';
import { createdAt, oneOf, references, text, timestamptz, updatedAt } from './columns.js';

export interface WebhookEndpoint {
  id: string;
  workspaceId: string;
  name: string;
  url: string;
  eventTypes: string[];
  isActive: boolean;
  /** `encryptSecret(signingSecret, key, id)`; the plain secret is shown once at creation and never stored. */
  secretEncrypted: string;
  /** Why the service switched the endpoint off (sustained failure); cleared when re-activated. */
  disabledReason: string | null;
  /** When the service switched the endpoint off; cleared when re-activated. */
  disabledAt: Date | null;
  /** Start of the current run of failed attempts (no 2xx since); null after a 2xx or a re-activation. */
  failingSince: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

export const WebhookEndpointSchema = new EntitySchema<WebhookEndpoint>({
  name: 'WebhookEndpoint',
  tableName: 'webhook_endpoints',
  indexes: [{ name: 'webhook_endpoints_ws_idx', properties: ['workspaceId', 'createdAt', 'id'] }],
  properties: {
    id: { ...text, primary: true },
    workspaceId: { ...references('Workspace', 'workspace_id', 'cascade') },
    name: { ...text },
    url: { ...text },
    eventTypes: { type: 'string[]', fieldName: 'event_types', columnType: 'text[]' },
    isActive: { type: 'boolean', fieldName: 'is_active', default: true },
    secretEncrypted: { ...text, fieldName: 'secret_encrypted', lazy: true },
    disabledReason: { ...text, nullable: true, fieldName: 'disabled_reason' },
    disabledAt: { ...timestamptz, nullable: true, fieldName: 'disabled_at' },
    failingSince: { ...timestamptz, nullable: true, fieldName: 'failing_since' },
    createdAt: { ...createdAt },
    updatedAt: { ...updatedAt },
  },
});

export const WEBHOOK_DELIVERY_STATUSES = ['pending', 'delivered', 'failed', 'cancelled'] as const;
export type WebhookDeliveryStatus = (typeof WEBHOOK_DELIVERY_STATUSES)[number];

export interface WebhookDelivery {
  id: string;
  workspaceId: string;
  endpointId: string;
  eventId: string;
  eventType: string;
  /** The exact request body (the event envelope as JSON). */
  payload: string;
  status: WebhookDeliveryStatus;
  attempts: number;
  /** Attempts allowed before `failed`: 5, or one more than made when resent, 1 for a test send. */
  maxAttempts: number;
  lastStatusCode: number | null;
  lastError: string | null;
  nextAttemptAt: Date | null;
  /** Lease of the dispatcher/worker holding it; past or null = free. */
  lockedUntil: Date | null;
  claimSeq: number;
  createdAt: Date;
  updatedAt: Date;
}

export const WebhookDeliverySchema = new EntitySchema<WebhookDelivery>({
  name: 'WebhookDelivery',
  tableName: 'webhook_deliveries',
  uniques: [{ properties: ['eventId', 'endpointId'] }],
  indexes: [
    {
      name: 'webhook_deliveries_due_idx',
      expression:
        "create index webhook_deliveries_due_idx on webhook_deliveries (endpoint_id, next_attempt_at, id) where status = 'pending'",
    },
    {
      name: 'webhook_deliveries_log_idx',
      expression:
        'create index webhook_deliveries_log_idx on webhook_deliveries (endpoint_id, created_at desc, id desc)',
    },
  ],
  properties: {
    id: { ...text, primary: true },
    // The endpoint's workspace; no foreign key of its own (the endpoint's cascades), see its migration.
    workspaceId: { ...text, fieldName: 'workspace_id' },
    endpointId: { ...references('WebhookEndpoint', 'endpoint_id', 'cascade') },
    eventId: { ...text, fieldName: 'event_id' },
    eventType: { ...text, fieldName: 'event_type' },
    payload: { ...text, lazy: true },
    status: { ...oneOf(WEBHOOK_DELIVERY_STATUSES) },
    attempts: { type: 'integer', default: 0 },
    maxAttempts: { type: 'integer', fieldName: 'max_attempts', default: 5 },
    lastStatusCode: { type: 'integer', nullable: true, fieldName: 'last_status_code' },
    lastError: { ...text, nullable: true, fieldName: 'last_error' },
    nextAttemptAt: { ...timestamptz, nullable: true, fieldName: 'next_attempt_at' },
    lockedUntil: { ...timestamptz, nullable: true, fieldName: 'locked_until' },
    claimSeq: { type: 'integer', fieldName: 'claim_seq', default: 0 },
    createdAt: { ...createdAt },
    updatedAt: { ...updatedAt },
  },
});

export interface WebhookAttempt {
  deliveryId: string;
  attempt: number;
  statusCode: number | null;
  error: string | null;
  durationMs: number;
  /** First 2 KB of the response body. */
  responseBody: string;
  startedAt: Date;
}

export const WebhookAttemptSchema = new EntitySchema<WebhookAttempt>({
  name: 'WebhookAttempt',
  tableName: 'webhook_attempts',
  properties: {
    // No foreign key: only the attempt record writes these rows, for the delivery it holds locked; a trigger
    // deletes a delivery's attempts with it (see the migration that dropped the key).
    deliveryId: { ...text, fieldName: 'delivery_id', primary: true },
    attempt: { type: 'integer', primary: true },
    statusCode: { type: 'integer', nullable: true, fieldName: 'status_code' },
    error: { ...text, nullable: true },
    durationMs: { type: 'integer', fieldName: 'duration_ms' },
    responseBody: { ...text, fieldName: 'response_body', default: '' },
    startedAt: { ...timestamptz, fieldName: 'started_at' },
  },
});
