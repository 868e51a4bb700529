import { WorkspaceSchema } from './workspace.entity.js';
import { ApiKeySchema } from './api-key.entity.js';
import { IdentitySchema } from './identity.entity.js';
import { JobSchema } from './job.entity.js';
import { OutboxEventSchema } from './outbox-event.entity.js';

export * from './workspace.entity.js';
export * from './api-key.entity.js';
export * from './identity.entity.js';
export * from './job.entity.js';
export * from './outbox-event.entity.js';

/** Every entity the ORM knows. Add new schemas here. */
export const ENTITIES = [WorkspaceSchema, ApiKeySchema, IdentitySchema, JobSchema, OutboxEventSchema];
