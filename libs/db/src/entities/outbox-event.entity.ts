import { EntitySchema } from '@mikro-orm/core';
import { createdAt, text, timestamptz } from './columns.js';

/**
 * A row of the transactional outbox: written with the change, published later by the relay. `workspace_id` has
 * no foreign key in the migration, so it is a plain column here too.
 */
export interface OutboxEvent {
  id: string;
  workspaceId: string;
  type: string;
  data: Record<string, unknown>;
  createdAt: Date;
  publishedAt: Date | null;
}

export const OutboxEventSchema = new EntitySchema<OutboxEvent>({
  name: 'OutboxEvent',
  tableName: 'outbox_events',
  indexes: [
    {
      name: 'outbox_unsent_order_idx',
      expression:
        'create index outbox_unsent_order_idx on outbox_events (created_at, id) where published_at is null',
    },
  ],
  properties: {
    id: { ...text, primary: true },
    workspaceId: { ...text, fieldName: 'workspace_id' },
    type: { ...text },
    data: { type: 'json' },
    createdAt: { ...createdAt },
    publishedAt: { ...timestamptz, nullable: true, fieldName: 'published_at' },
  },
});
