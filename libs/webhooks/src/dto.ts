/** Row → response mappers of webhook endpoints, deliveries and attempts (the schemas are in libs/contracts). */
import {
  iso,
  type WebhookAttemptDto,
  type WebhookDeliveryDetailDto,
  type WebhookDeliveryDto,
  type WebhookEndpointDto,
} from '@lectern/contracts';
import type {
  WebhookAttempt as AttemptRow,
  WebhookDelivery as DeliveryRow,
  WebhookEndpoint as EndpointRow,
} from '@lectern/db';

export function webhookEndpointDto(row: EndpointRow): WebhookEndpointDto {
  return {
    id: row.id,
    name: row.name,
    url: row.url,
    eventTypes: row.eventTypes as WebhookEndpointDto['eventTypes'],
    isActive: row.isActive,
    disabledReason: row.disabledReason,
    disabledAt: iso(row.disabledAt),
    createdAt: iso(row.createdAt)!,
    updatedAt: iso(row.updatedAt)!,
  };
}

export function webhookDeliveryDto(row: DeliveryRow): WebhookDeliveryDto {
  return {
    id: row.id,
    eventId: row.eventId,
    eventType: row.eventType as WebhookDeliveryDto['eventType'],
    status: row.status,
    attempts: row.attempts,
    lastStatusCode: row.lastStatusCode,
    nextAttemptAt: row.status === 'pending' ? iso(row.nextAttemptAt) : null,
    createdAt: iso(row.createdAt)!,
    updatedAt: iso(row.updatedAt)!,
  };
}

export function webhookAttemptDto(row: AttemptRow): WebhookAttemptDto {
  return {
    attempt: row.attempt,
    statusCode: row.statusCode,
    error: row.error,
    durationMs: row.durationMs,
    responseBody: row.responseBody,
    startedAt: iso(row.startedAt)!,
  };
}

export function webhookDeliveryDetailDto(row: DeliveryRow, attempts: AttemptRow[]): WebhookDeliveryDetailDto {
  const item = webhookDeliveryDto(row);
  return {
    id: item.id,
    eventId: item.eventId,
    eventType: item.eventType,
    status: item.status,
    lastStatusCode: item.lastStatusCode,
    lastError: row.lastError,
    nextAttemptAt: item.nextAttemptAt,
    createdAt: item.createdAt,
    updatedAt: item.updatedAt,
    payload: row.payload,
    attempts: attempts.map(webhookAttemptDto),
  };
}
