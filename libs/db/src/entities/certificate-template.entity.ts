import { EntitySchema } from '@mikro-orm/core';

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
  properties: {
    id: { type: 'string', primary: true },
    workspaceId: { type: 'string', fieldName: 'workspace_id' },
    name: { type: 'string' },
    tokens: { type: 'json' },
    createdAt: { type: 'Date', fieldName: 'created_at', columnType: 'timestamptz' },
    updatedAt: { type: 'Date', fieldName: 'updated_at', columnType: 'timestamptz' },
  },
});
