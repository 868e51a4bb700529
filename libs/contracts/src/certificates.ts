/**
 * Issued certificates (SPEC.md "Issued certificate", "Issued certificates" endpoints,
 * certificate.issued) and the `certificate.render` job. Reference: docs/certificates.md.
 */
import { z } from 'zod';
import { PagingQuery, Timestamp } from './common.js';
import { CertificateTokens } from './design.js';
import { RUN_SOURCES } from './learner-runs.js';

/** What a certificate states when an LMS asserted the learner's identity and nothing verified it. */
export const ASSERTED_IDENTITY_NOTE = "The learner's identity was asserted by an LMS, not verified.";

/**
 * The template tokens a course translation may translate, under the paths `certificate.<token>`
 * (docs/certificates.md "Language"): the texts printed around the learner's name and the course title.
 */
export const CERTIFICATE_TRANSLATABLE_TOKENS = [
  'issuerName',
  'eyebrow',
  'bodyText',
  'signatureName',
  'signatureTitle',
  'footerText',
] as const;
export type CertificateTranslatableToken = (typeof CERTIFICATE_TRANSLATABLE_TOKENS)[number];

export const IssuedCertificate = z
  .object({
    id: z.string(),
    serial: z.string().meta({
      description:
        'Printed on the PDF: prefix LC and three dash-joined groups of four, e.g. LC-7KQM-W3XD-9TPA',
      example: 'LC-7KQM-W3XD-9TPA',
    }),
    courseId: z.string(),
    identityId: z.string(),
    identityExternalId: z.string(),
    score: z.number().meta({
      description: 'Percentage at issue; 100 when the course had no graded blocks (docs/certificates.md)',
    }),
    locale: z
      .string()
      .meta({ description: 'Language the certificate was issued in (the learner studied in)' }),
    source: z.enum(RUN_SOURCES).meta({
      description:
        "The run's source: `embed` (your backend signed the learner id and it was verified) or `scorm` (an LMS " +
        'asserted the id and nothing verified it; the PDF and the verification page say so)',
    }),
    issuedAt: Timestamp,
  })
  .meta({ id: 'IssuedCertificate' });
export type IssuedCertificateDto = z.infer<typeof IssuedCertificate>;

export const IssuedCertificatesQuery = PagingQuery.extend({
  courseId: z.string().min(1).optional().meta({ description: 'Only certificates of this course' }),
  identityId: z.string().min(1).optional().meta({ description: 'Only certificates of this learner' }),
});

/** What the public verification page states (`GET /verify/:serial` with `Accept: application/json`). */
export const CertificateVerification = z
  .object({
    valid: z.literal(true),
    serial: z.string(),
    learnerName: z.string(),
    courseTitle: z.string(),
    issuerName: z.string(),
    issuedAt: Timestamp,
    locale: z.string(),
    score: z.number().nullable().meta({
      description: 'Only when the certificate design shows the score and the course had graded blocks',
    }),
    source: z.enum(RUN_SOURCES).meta({
      description: "`embed`: the issuer's system signed the learner's identity; `scorm`: an LMS asserted it",
    }),
    learnerIdentity: z.enum(['verified', 'asserted']).meta({
      description:
        "`verified`: the issuer's system vouched for the learner; `asserted`: an LMS asserted the learner's " +
        'identity and the issuer did not verify it',
    }),
  })
  .meta({ id: 'CertificateVerification' });
export type CertificateVerification = z.infer<typeof CertificateVerification>;

// ------------------------------------------------------------ certificate.render

/**
 * Everything the worker needs to draw one certificate: the facts fixed at issue and
 * the design snapshot. No database read is needed to render, so a render is a pure
 * function of this input and the same certificate renders the same PDF every time.
 */
export const CertificateRenderInput = z.object({
  serial: z.string(),
  learnerName: z.string(),
  courseTitle: z.string(),
  issuerName: z.string(),
  /** null: the course had no graded blocks, so no score is printed whatever `showScore` says. */
  score: z.number().nullable(),
  locale: z.string(),
  direction: z.enum(['ltr', 'rtl']),
  issuedAt: Timestamp,
  verifyUrl: z.string(),
  tokens: CertificateTokens,
  /** `scorm`: the page states that an LMS asserted the learner's identity. Absent: `embed` (nothing printed). */
  source: z.enum(RUN_SOURCES).optional(),
  /** Object-store key the PDF is written to (`certificates/<workspaceId>/<serialKey>.pdf`). */
  pdfKey: z.string(),
});
export type CertificateRenderInput = z.infer<typeof CertificateRenderInput>;

export const CertificateRenderResult = z.object({
  pdfKey: z.string(),
  bytes: z.number().int(),
  /** Things left out of the PDF and why (a logo that could not be fetched, …). */
  warnings: z.array(z.string()),
});
export type CertificateRenderResult = z.infer<typeof CertificateRenderResult>;

/**
 * The run a certificate is asked for, as plain facts. Built by learner-runs from the completion row
 * (runForCertificate) and taken by certificates (issueCertificate): the shape lives here so neither library
 * depends on the other.
 */
export interface CertificateSubject {
  workspaceId: string;
  completionId: string;
  courseId: string;
  /** null for an anonymous run. */
  identityId: string | null;
  identityExternalId: string | null;
  /** The name to print; null or blank when the identity has none. */
  learnerName: string | null;
  /** The course title in `locale` (the translation the learner studied, else the source title). */
  courseTitle: string;
  /** Percentage 0–100; null when the course has no graded blocks. */
  score: number | null;
  /** Language the learner studied in. */
  locale: string;
  status: 'in_progress' | 'completed';
  /** See `RunVerdict.passed`: the verdict fixed at completion; null when the course has no pass mark. */
  passed: boolean | null;
  passingScore?: number | null;
  /** Reading direction of the certificate; default: the course's direction. */
  direction?: 'ltr' | 'rtl';
  /** The run's source; default `embed`. `scorm`: an LMS asserted the learner's identity. */
  source?: 'embed' | 'scorm';
  /**
   * The template's texts as the course translation of `locale` has them (`certificate.<token>` paths), when the
   * run was served a translation; each replaces the template's own text of that token.
   */
  templateTexts?: Partial<Record<CertificateTranslatableToken, string>>;
}
