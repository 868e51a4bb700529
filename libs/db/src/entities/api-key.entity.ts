import { EntitySchema } from '@mikro-orm/core';

export type KeyScope = 'read' | 'write';

export interface ApiKey {
  id: string;
  workspaceId: string;
  /** First characters of the secret part, indexed, so a lookup never scans hashes. */
  lookup: string;
  hash: string;
  scope: KeyScope;
  createdAt: Date;
  revokedAt: Date | null;
}

export const ApiKeySchema = new EntitySchema<ApiKey>({
  name: 'ApiKey',
  tableName: 'api_keys',
  properties: {
    id: { type: 'string', primary: true },
    workspaceId: { type: 'string', fieldName: 'workspace_id' },
    lookup: { type: 'string' },
    hash: { type: 'string' },
    scope: { type: 'string' },
    createdAt: { type: 'Date', fieldName: 'created_at', columnType: 'timestamptz' },
    revokedAt: { type: 'Date', nullable: true, fieldName: 'revoked_at', columnType: 'timestamptz' },
  },
});
