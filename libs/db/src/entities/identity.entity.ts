import { EntitySchema } from '@mikro-orm/core';

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
  properties: {
    id: { type: 'string', primary: true },
    workspaceId: { type: 'string', fieldName: 'workspace_id' },
    externalId: { type: 'string', fieldName: 'external_id' },
    name: { type: 'string', nullable: true },
    email: { type: 'string', nullable: true },
    createdAt: { type: 'Date', fieldName: 'created_at', columnType: 'timestamptz' },
    updatedAt: { type: 'Date', fieldName: 'updated_at', columnType: 'timestamptz' },
  },
});
