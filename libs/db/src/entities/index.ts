import {
  PlayerSettingsSchema,
  UsageCounterSchema,
  UsageDaySchema,
  WorkspaceSchema,
} from './workspace.entity.js';
import { ApiKeySchema } from './api-key.entity.js';
import { IdentitySchema } from './identity.entity.js';
import { JobSchema } from './job.entity.js';
import { IdempotencyKeySchema } from './idempotency-key.entity.js';
import { OutboxEventSchema } from './outbox-event.entity.js';
import { WebhookAttemptSchema, WebhookDeliverySchema, WebhookEndpointSchema } from './webhook.entity.js';
import { CourseSchema } from './course.entity.js';
import { ThemeSchema } from './theme.entity.js';
import { CertificateTemplateSchema } from './certificate-template.entity.js';
import { CollectionCourseSchema, CollectionSchema } from './collection.entity.js';
import { CourseTranslationSchema } from './course-translation.entity.js';
import {
  AttemptSchema,
  CompletionBatchSchema,
  CompletionSchema,
  EmbedKeySchema,
} from './learner-runs.entity.js';
import { IssuedCertificateSchema } from './issued-certificate.entity.js';
import { MediaSchema, WorkspaceStorageSchema } from './media.entity.js';

export * from './workspace.entity.js';
export * from './api-key.entity.js';
export * from './identity.entity.js';
export * from './job.entity.js';
export * from './idempotency-key.entity.js';
export * from './outbox-event.entity.js';
export * from './webhook.entity.js';
export * from './course.entity.js';
export * from './theme.entity.js';
export * from './certificate-template.entity.js';
export * from './collection.entity.js';
export * from './course-translation.entity.js';
export * from './learner-runs.entity.js';
export * from './issued-certificate.entity.js';
export * from './media.entity.js';

/** Every entity the ORM knows. Add new schemas here. */
export const ENTITIES = [
  MediaSchema,
  WorkspaceStorageSchema,
  WorkspaceSchema,
  UsageCounterSchema,
  UsageDaySchema,
  PlayerSettingsSchema,
  ApiKeySchema,
  IdentitySchema,
  JobSchema,
  IdempotencyKeySchema,
  OutboxEventSchema,
  WebhookEndpointSchema,
  WebhookDeliverySchema,
  WebhookAttemptSchema,
  CourseSchema,
  ThemeSchema,
  CertificateTemplateSchema,
  CollectionSchema,
  CollectionCourseSchema,
  CourseTranslationSchema,
  EmbedKeySchema,
  CompletionSchema,
  AttemptSchema,
  CompletionBatchSchema,
  IssuedCertificateSchema,
];
