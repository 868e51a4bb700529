import { EntitySchema } from '@mikro-orm/core';
import { createdAt, references, text, updatedAt } from './columns.js';

export interface Identity {
  id: string;
  workspaceId: string;
  externalId: string;
  name: string | null;
  email: string | null;
  createdAt: Date;
  updatedAt: Date;
}

export const IdentitySchema = new EntitySchema<Identity>({
  name: 'Identity',
  tableName: 'identities',
  uniques: [{ properties: ['workspaceId', 'externalId'] }],
  indexes: [
    {
      name: 'identities_ws_created_idx',
      expression:
        'create index identities_ws_created_idx on identities (workspace_id, created_at desc, id desc)',
    },
  ],
  properties: {
    id: { ...text, primary: true },
    workspaceId: { ...references('Workspace', 'workspace_id', 'cascade') },
    externalId: { ...text, fieldName: 'external_id' },
    name: { ...text, nullable: true },
    email: { ...text, nullable: true },
    createdAt: { ...createdAt },
    updatedAt: { ...updatedAt },
  },
});
