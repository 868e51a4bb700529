import { EntitySchema } from '@mikro-orm/core';

/** A row of the transactional outbox: written with the change, published later by the relay. */
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
  properties: {
    id: { type: 'string', primary: true },
    workspaceId: { type: 'string', fieldName: 'workspace_id' },
    type: { type: 'string' },
    data: { type: 'json' },
    createdAt: { type: 'Date', fieldName: 'created_at', columnType: 'timestamptz' },
    publishedAt: { type: 'Date', nullable: true, fieldName: 'published_at', columnType: 'timestamptz' },
  },
});
