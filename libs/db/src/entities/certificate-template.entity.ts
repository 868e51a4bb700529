import { EntitySchema } from '@mikro-orm/core';
import { createdAt, jsonb, references, text, updatedAt } from './columns.js';

/** The design of a certificate PDF (tokens: libs/contracts design.ts `CertificateTokens`). */
export interface CertificateTemplate {
  id: string;
  workspaceId: string;
  name: string;
  tokens: Record<string, unknown>;
  createdAt: Date;
  updatedAt: Date;
}

export const CertificateTemplateSchema = new EntitySchema<CertificateTemplate>({
  name: 'CertificateTemplate',
  tableName: 'certificate_templates',
  indexes: [
    {
      name: 'certificate_templates_ws_created_idx',
      expression:
        'create index certificate_templates_ws_created_idx on certificate_templates (workspace_id, created_at desc, id desc)',
    },
  ],
  properties: {
    id: { ...text, primary: true },
    workspaceId: { ...references('Workspace', 'workspace_id', 'cascade') },
    name: { ...text },
    tokens: { ...jsonb('{}') },
    createdAt: { ...createdAt },
    updatedAt: { ...updatedAt },
  },
});
