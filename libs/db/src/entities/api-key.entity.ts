import { EntitySchema } from '@mikro-orm/core';
import { createdAt, oneOf, references, text, timestamptz } from './columns.js';

export const KEY_SCOPES = ['read', 'write'] as const;
export type KeyScope = (typeof KEY_SCOPES)[number];

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
  indexes: [{ name: 'api_keys_workspace_idx', properties: ['workspaceId'] }],
  properties: {
    id: { ...text, primary: true },
    workspaceId: { ...references('Workspace', 'workspace_id', 'cascade') },
    lookup: { ...text, unique: true },
    hash: { ...text },
    scope: { ...oneOf(KEY_SCOPES) },
    createdAt: { ...createdAt },
    revokedAt: { ...timestamptz, nullable: true, fieldName: 'revoked_at' },
  },
});
