import { EntitySchema } from '@mikro-orm/core';
import { numeric, oneOf, references, text, timestamptz } from './columns.js';

const CERTIFICATE_DIRECTIONS = ['ltr', 'rtl'] as const;
const CERTIFICATE_SOURCES = ['embed', 'scorm'] as const;

/**
 * One issued certificate (migration Migration20261123000500_issued_certificates). Written once; only `pdfKey` is
 * filled in later.
 */
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
  direction: (typeof CERTIFICATE_DIRECTIONS)[number];
  /** The run's source at issue: `scorm` when an LMS asserted the learner's id and nothing verified it. */
  source: (typeof CERTIFICATE_SOURCES)[number];
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
  checks: [{ name: 'issued_certificates_score_check', expression: 'score >= 0 and score <= 100' }],
  indexes: [
    {
      name: 'issued_certificates_ws_issued_idx',
      expression:
        'create index issued_certificates_ws_issued_idx on issued_certificates (workspace_id, issued_at desc, id desc)',
    },
    { name: 'issued_certificates_course_idx', properties: ['courseId'] },
    { name: 'issued_certificates_identity_idx', properties: ['workspaceId', 'identityId'] },
  ],
  properties: {
    id: { ...text, primary: true },
    workspaceId: { ...references('Workspace', 'workspace_id', 'cascade') },
    serial: { ...text, unique: true },
    // The run it was earned on; SET NULL when the learner's runs are erased, so the certificate stays verifiable.
    completionId: { ...references('Completion', 'completion_id', 'set null'), nullable: true, unique: true },
    // A course with issued certificates cannot be deleted (ON DELETE RESTRICT).
    courseId: { ...references('Course', 'course_id', 'restrict') },
    // No foreign key on purpose: a certificate stays verifiable after the identity is deleted.
    identityId: { ...text, fieldName: 'identity_id' },
    identityExternalId: { ...text, fieldName: 'identity_external_id' },
    learnerName: { ...text, fieldName: 'learner_name' },
    courseTitle: { ...text, fieldName: 'course_title' },
    issuerName: { ...text, fieldName: 'issuer_name' },
    score: { ...numeric(), nullable: true },
    locale: { ...text },
    direction: { ...oneOf(CERTIFICATE_DIRECTIONS) },
    source: { ...oneOf(CERTIFICATE_SOURCES), default: 'embed' },
    // No foreign key in the migration: the design itself is copied at issue, the id only records its origin.
    templateId: { ...text, nullable: true, fieldName: 'template_id' },
    design: { type: 'json' },
    pdfKey: { ...text, nullable: true, fieldName: 'pdf_key' },
    issuedAt: { ...timestamptz, fieldName: 'issued_at', defaultRaw: 'now()' },
  },
});
