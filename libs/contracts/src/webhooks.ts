import { z } from 'zod';
import { Timestamp } from './common.js';
import { EVENT_TYPES, EventType } from './events.js';

const EventTypes = z
  .array(EventType)
  .min(1, 'subscribe to at least one event type')
  .max(EVENT_TYPES.length * 4)
  .transform((types) => [...new Set(types)])
  .meta({ description: `Event types to receive: ${EVENT_TYPES.join(', ')}` });

/** Syntax and the SSRF policy are checked by the service (400 with path ['url']). */
const Url = z
  .string()
  .trim()
  .min(1)
  .max(2048)
  .meta({ description: 'Absolute http(s) URL receiving the POSTs' });
const Name = z.string().trim().min(1).max(200);

const IsActive = z.boolean().meta({
  description:
    'false: the endpoint receives nothing (and its pending deliveries are cancelled) until set to true',
});

export const CreateWebhook = z
  .object({
    name: Name,
    url: Url,
    eventTypes: EventTypes,
    isActive: IsActive.optional().meta({
      description: 'Default true. Created with false, it receives nothing',
    }),
  })
  .meta({ id: 'CreateWebhook' });
export type CreateWebhook = z.infer<typeof CreateWebhook>;

export const UpdateWebhook = z
  .object({
    name: Name.optional(),
    url: Url.optional(),
    eventTypes: EventTypes.optional(),
    isActive: IsActive.optional(),
  })
  .meta({ id: 'UpdateWebhook' });
export type UpdateWebhook = z.infer<typeof UpdateWebhook>;

export const WebhookEndpoint = z
  .object({
    id: z.string(),
    name: z.string(),
    url: z.string(),
    eventTypes: z.array(EventType),
    isActive: z.boolean(),
    disabledReason: z.string().nullable().meta({
      description:
        'Why Lectern switched the endpoint off (every delivery failed for 5 days); null otherwise. Cleared by isActive: true',
    }),
    disabledAt: Timestamp.nullable().meta({
      description: 'When Lectern switched the endpoint off; null otherwise. Cleared by isActive: true',
    }),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  })
  .meta({ id: 'WebhookEndpoint' });
export type WebhookEndpointDto = z.infer<typeof WebhookEndpoint>;

export const WebhookEndpointCreated = WebhookEndpoint.extend({
  signingSecret: z
    .string()
    .meta({ description: 'whsec_…: shown once, never again. Verify signatures with it.' }),
}).meta({ id: 'WebhookEndpointCreated' });

export const DELIVERY_STATUSES = ['pending', 'delivered', 'failed', 'cancelled'] as const;
export const DeliveryStatus = z.enum(DELIVERY_STATUSES);

export const WebhookDelivery = z
  .object({
    id: z.string(),
    eventId: z.string().meta({ description: 'The event id: body `id`, X-Service-Delivery and webhook-id' }),
    eventType: EventType,
    status: DeliveryStatus,
    attempts: z
      .number()
      .int()
      .meta({ description: 'Attempts made so far (5 at most automatically, plus resends)' }),
    lastStatusCode: z.number().int().nullable(),
    nextAttemptAt: Timestamp.nullable().meta({
      description: 'When the next automatic attempt is due; null unless pending',
    }),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  })
  .meta({ id: 'WebhookDelivery' });
export type WebhookDeliveryDto = z.infer<typeof WebhookDelivery>;

export const WebhookAttempt = z
  .object({
    attempt: z.number().int(),
    statusCode: z.number().int().nullable(),
    error: z
      .string()
      .nullable()
      .meta({ description: 'Null when delivered; e.g. "HTTP 500", "timeout after 5000 ms"' }),
    durationMs: z.number().int(),
    responseBody: z.string().meta({ description: 'First 2 KB of the response body' }),
    startedAt: Timestamp,
  })
  .meta({ id: 'WebhookAttempt' });
export type WebhookAttemptDto = z.infer<typeof WebhookAttempt>;

export const WebhookDeliveryDetail = WebhookDelivery.omit({ attempts: true })
  .extend({
    lastError: z.string().nullable(),
    payload: z.string().meta({ description: 'The exact request body sent (the event envelope as JSON)' }),
    attempts: z.array(WebhookAttempt),
  })
  .meta({ id: 'WebhookDeliveryDetail' });
export type WebhookDeliveryDetailDto = z.infer<typeof WebhookDeliveryDetail>;

export const DeliveryListQuery = z.object({
  status: DeliveryStatus.optional(),
  eventType: EventType.optional(),
  limit: z.string().optional().meta({ description: 'Default 50, maximum 10,000' }),
  offset: z.string().optional(),
});

export const TestWebhook = z
  .object({
    eventType: EventType.optional().meta({
      description: "Type of the sample event; default the endpoint's first event type",
    }),
  })
  .meta({ id: 'TestWebhook' });
