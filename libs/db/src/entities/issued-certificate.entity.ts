import { DecimalType, EntitySchema } from '@mikro-orm/core';

/** One issued certificate (migration 20261123000400). Written once; only `pdfKey` is filled in later. */
export interface IssuedCertificate {
  id: string;
  workspaceId: string;
  /** `LC-XXXX-XXXX-XXXX`, unique across every workspace. */
  serial: string;
  /**
   * The run it was issued for; one certificate per run. Null once that run is deleted (with its learner): the
   * certificate stays verifiable (migration 20261124000600).
   */
  completionId: string | null;
  courseId: string;
  identityId: string;
  identityExternalId: string;
  learnerName: string;
  /** The course title in `locale`, as it read at issue. */
  courseTitle: string;
  /** The template's issuerName at issue, or the workspace name when it was empty. */
  issuerName: string;
  /** Percentage 0–100; null when the course had no graded blocks. */
  score: number | null;
  locale: string;
  direction: 'ltr' | 'rtl';
  /** The template the design came from; null for the built-in default design. */
  templateId: string | null;
  /** The template tokens at issue (`CertificateTokens`). */
  design: Record<string, unknown>;
  /** Object-store key of the rendered PDF; null until it is first rendered. */
  pdfKey: string | null;
  issuedAt: Date;
}

export const IssuedCertificateSchema = new EntitySchema<IssuedCertificate>({
  name: 'IssuedCertificate',
  tableName: 'issued_certificates',
  properties: {
    id: { type: 'string', primary: true },
    workspaceId: { type: 'string', fieldName: 'workspace_id' },
    serial: { type: 'string', unique: true },
    completionId: {
      type: 'string',
      fieldName: 'completion_id',
      unique: true,
      nullable: true,
    },
    courseId: { type: 'string', fieldName: 'course_id' },
    identityId: { type: 'string', fieldName: 'identity_id' },
    identityExternalId: { type: 'string', fieldName: 'identity_external_id' },
    learnerName: { type: 'string', fieldName: 'learner_name' },
    courseTitle: { type: 'string', fieldName: 'course_title' },
    issuerName: { type: 'string', fieldName: 'issuer_name' },
    score: { type: new DecimalType('number'), nullable: true, columnType: 'numeric' },
    locale: { type: 'string' },
    direction: { type: 'string' },
    templateId: { type: 'string', nullable: true, fieldName: 'template_id' },
    design: { type: 'json' },
    pdfKey: { type: 'string', nullable: true, fieldName: 'pdf_key' },
    issuedAt: { type: 'Date', fieldName: 'issued_at', columnType: 'timestamptz' },
  },
});
