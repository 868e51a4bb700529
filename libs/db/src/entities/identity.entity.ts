import { EntitySchema } from '@mikro-orm/core';
import { createdAt, references, text, updatedAt } from './columns.js';

export interface Identity {
  id: string;
  workspaceId: string;
  externalId: string;
  /**
   * Whose word the external id is (migration 20261126000900): '' for the workspace's own learners (the API, signed
   * embeds); `course:<courseId>` for a learner id an LMS asserted through that course's tracking token.
   */
  scope: string;
  name: string | null;
  email: string | null;
  createdAt: Date;
  updatedAt: Date;
}

export const IdentitySchema = new EntitySchema<Identity>({
  name: 'Identity',
  tableName: 'identities',
  uniques: [{ properties: ['workspaceId', 'scope', 'externalId'] }],
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
    scope: { ...text, default: '' },
    name: { ...text, nullable: true },
    email: { ...text, nullable: true },
    createdAt: { ...createdAt },
    updatedAt: { ...updatedAt },
  },
});
