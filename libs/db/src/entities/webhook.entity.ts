import { EntitySchema } from '@mikro-orm/core';

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
  properties: {
    id: { type: 'string', primary: true },
    workspaceId: { type: 'string', fieldName: 'workspace_id' },
    name: { type: 'string' },
    url: { type: 'string' },
    eventTypes: { type: 'string[]', fieldName: 'event_types', columnType: 'text[]' },
    isActive: { type: 'boolean', fieldName: 'is_active' },
    secretEncrypted: { type: 'string', fieldName: 'secret_encrypted', lazy: true },
    disabledReason: { type: 'string', nullable: true, fieldName: 'disabled_reason' },
    disabledAt: { type: 'Date', nullable: true, fieldName: 'disabled_at', columnType: 'timestamptz' },
    failingSince: { type: 'Date', nullable: true, fieldName: 'failing_since', columnType: 'timestamptz' },
    createdAt: { type: 'Date', fieldName: 'created_at', columnType: 'timestamptz' },
    updatedAt: { type: 'Date', fieldName: 'updated_at', columnType: 'timestamptz' },
  },
});

export type WebhookDeliveryStatus = 'pending' | 'delivered' | 'failed' | 'cancelled';

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
  properties: {
    id: { type: 'string', primary: true },
    workspaceId: { type: 'string', fieldName: 'workspace_id' },
    endpointId: { type: 'string', fieldName: 'endpoint_id' },
    eventId: { type: 'string', fieldName: 'event_id' },
    eventType: { type: 'string', fieldName: 'event_type' },
    payload: { type: 'text', lazy: true },
    status: { type: 'string' },
    attempts: { type: 'integer' },
    maxAttempts: { type: 'integer', fieldName: 'max_attempts' },
    lastStatusCode: { type: 'integer', nullable: true, fieldName: 'last_status_code' },
    lastError: { type: 'text', nullable: true, fieldName: 'last_error' },
    nextAttemptAt: { type: 'Date', nullable: true, fieldName: 'next_attempt_at', columnType: 'timestamptz' },
    lockedUntil: { type: 'Date', nullable: true, fieldName: 'locked_until', columnType: 'timestamptz' },
    claimSeq: { type: 'integer', fieldName: 'claim_seq' },
    createdAt: { type: 'Date', fieldName: 'created_at', columnType: 'timestamptz' },
    updatedAt: { type: 'Date', fieldName: 'updated_at', columnType: 'timestamptz' },
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
    deliveryId: { type: 'string', primary: true, fieldName: 'delivery_id' },
    attempt: { type: 'integer', primary: true },
    statusCode: { type: 'integer', nullable: true, fieldName: 'status_code' },
    error: { type: 'text', nullable: true },
    durationMs: { type: 'integer', fieldName: 'duration_ms' },
    responseBody: { type: 'text', fieldName: 'response_body' },
    startedAt: { type: 'Date', fieldName: 'started_at', columnType: 'timestamptz' },
  },
});
