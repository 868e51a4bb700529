import { EntitySchema } from '@mikro-orm/core';
import { createdAt, references, text } from './columns.js';

/** One Idempotency-Key a workspace used on a route (libs/idempotency; read and written by SQL there). */
export interface IdempotencyKey {
  workspaceId: string;
  /** The route's operationId. */
  scope: string;
  key: string;
  /** sha256 of the request body; null until a streamed body was read. */
  fingerprint: string | null;
  /** The first answer; null while the first request runs. */
  response: unknown;
  createdAt: Date;
}

export const IdempotencyKeySchema = new EntitySchema<IdempotencyKey>({
  name: 'IdempotencyKey',
  tableName: 'idempotency_keys',
  indexes: [
    {
      name: 'idempotency_keys_created_idx',
      expression: 'create index idempotency_keys_created_idx on idempotency_keys (created_at)',
    },
  ],
  properties: {
    workspaceId: { ...references('Workspace', 'workspace_id', 'cascade'), primary: true },
    scope: { ...text, primary: true },
    key: { ...text, primary: true },
    fingerprint: { ...text, nullable: true },
    response: { type: 'json', nullable: true },
    createdAt: { ...createdAt },
  },
});
