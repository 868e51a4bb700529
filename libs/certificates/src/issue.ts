import { AppError, notFound } from '@lectern/errors';
import { newId, boundQuery, type EntityManager, type MikroORM } from '@lectern/db';
import { iso, type CertificateSubject, type CertificateTokens } from '@lectern/contracts';
import { eventIdentity } from '@lectern/identities';
import { recordEvent } from '@lectern/events';
import { runSyncJob } from '@lectern/jobs';
import type { Bus } from '@lectern/bus';
import type { Logger } from '@lectern/log';
import type { Storage } from '@lectern/storage';
import { certificateRefusal } from './rules.js';
import { generateSerial } from './serial.js';
import { pdfKeyOf, verifyUrl } from './paths.js';
import { CERTIFICATE_RENDER_KIND } from './worker.js';
import { localizedDesign } from './wording.js';

export type { CertificateSubject } from '@lectern/contracts';

/** An issued certificate as stored (snake_case columns). */
export interface IssuedCertificateRow {
  id: string;
  workspace_id: string;
  serial: string;
  /** null once the run was deleted (with its learner); the certificate stays. */
  completion_id: string | null;
  course_id: string;
  identity_id: string;
  identity_external_id: string;
  learner_name: string;
  course_title: string;
  issuer_name: string;
  score: string | number | null;
  locale: string;
  direction: 'ltr' | 'rtl';
  /** `scorm`: an LMS asserted the learner's identity; the PDF and /verify say so. */
  source: 'embed' | 'scorm';
  template_id: string | null;
  design: CertificateTokens;
  pdf_key: string | null;
  issued_at: Date;
}

/**
 * What reading (and, when it is missing, rendering) a certificate's PDF uses: PostgreSQL, NATS and the object
 * store for the `certificate.render` job, and the two settings that shape it.
 */
export interface CertificatePdfDeps {
  orm: MikroORM;
  bus: Bus;
  storage: Pick<Storage, 'get' | 'put'>;
  log: Logger;
  cfg: {
    /** Base of the verification URL printed (as a QR code) on the page. */
    PUBLIC_URL: string;
    /** How long a download waits for the render worker before its 504. */
    CERTIFICATE_RENDER_TIMEOUT_MS: number;
  };
}

export interface IssueDeps extends CertificatePdfDeps {
  /** Called after a commit that wrote a certificate.issued event (the API kicks its outbox relay). */
  onEvent?: () => void;
}

export interface IssueOutcome {
  certificate: IssuedCertificateRow;
  pdf: Buffer;
  /** True for the download that issued the certificate (and emitted certificate.issued). */
  issued: boolean;
}

/** PostgreSQL's SQLSTATE for a foreign key violation (MikroORM keeps the driver's code on its exception). */
const FOREIGN_KEY_VIOLATION = '23503';

/** A serial collision is ~1 in 10^17 per issue; five tries make a failure a matter of cosmic rays. */
const SERIAL_TRIES = 5;

export function scoreOf(row: Pick<IssuedCertificateRow, 'score'>): number | null {
  return row.score === null ? null : Number(row.score);
}

async function byCompletion(em: EntityManager, workspaceId: string, completionId: string) {
  const [row] = await boundQuery<IssuedCertificateRow>(
    em,
    'select * from issued_certificates where completion_id = ? and workspace_id = ?',
    [completionId, workspaceId],
  );
  return row ?? null;
}

/**
 * Issues the certificate of a run on its first download and returns its PDF; later calls
 * return the same certificate and PDF and emit nothing (SPEC.md "Issued certificate").
 *
 * 1. The refusal rules (403 `forbidden`): not finished, pass mark not met, anonymous, no name.
 * 2. The certificate row and its certificate.issued event are written in one transaction
 *    with `insert … on conflict do nothing`: of two racing downloads one inserts (and
 *    records the event), the other waits on the unique completion id and finds the
 *    winner's row. Never check-then-insert. A serial collision (the insert hit the serial's
 *    unique index, not the completion's) retries with a fresh serial.
 * 3. The row records what was true at issue: learner name, course title, issuer, score,
 *    locale, direction and the template design; later edits change nothing issued.
 * 4. The PDF is rendered by the certificate worker (`certificate.render` over the bus,
 *    deadline CERTIFICATE_RENDER_TIMEOUT_MS) and kept in the object store keyed by
 *    serial; later downloads read it back. A render that failed is redone on the next
 *    download: the row, not the file, is the certificate.
 */
export async function issueCertificate(deps: IssueDeps, subject: CertificateSubject): Promise<IssueOutcome> {
  const { certificate, issued } = await issueCertificateRecord(deps, subject);
  return { certificate, pdf: await certificatePdf(deps, certificate), issued };
}

/**
 * `issueCertificate` without the PDF: the certificate row of the run, issued (with its event) when this is the
 * first call. For a caller that answers with the record (`GET /api/v1/completions/:id/certificate` with
 * `Accept: application/json`); the PDF renders on its first download.
 *
 * A certificate already issued for the run is returned before any rule is asked again: it stays the learner's
 * whatever the run did since (a failed retake, a pass mark lowered or cleared, a name removed). The rules
 * judge only whether a first certificate may be issued.
 */
export async function issueCertificateRecord(
  deps: IssueDeps,
  subject: CertificateSubject,
): Promise<Omit<IssueOutcome, 'pdf'>> {
  const em = deps.orm.em.fork();
  const existing = await byCompletion(em, subject.workspaceId, subject.completionId);
  if (existing) return { certificate: existing, issued: false };
  const learnerName = subject.learnerName?.trim() ?? '';
  const refusal = certificateRefusal({
    status: subject.status,
    passed: subject.passed,
    identityId: subject.identityId,
    passingScore: subject.passingScore,
    score: subject.score,
  });
  if (refusal) throw new AppError('forbidden', refusal.message, { details: { reason: refusal.reason } });
  if (learnerName === '') {
    throw new AppError(
      'forbidden',
      'The learner has no name on record to print on the certificate; send `name` in the signed learner identity, or set it with POST /identities',
      { details: { reason: 'no_name' } },
    );
  }
  const outcome = await em
    .transactional(async (tx) => {
      // FOR SHARE: a DELETE /courses/:id running now waits for this certificate, then sees it (409).
      const [course] = await boundQuery<{
        certificate_id: string | null;
        direction: 'ltr' | 'rtl';
        ws_name: string;
      }>(
        tx,
        `select c.certificate_id, c.direction, w.name as ws_name
           from courses c join workspaces w on w.id = c.workspace_id
          where c.id = ? and c.workspace_id = ? for share of c`,
        [subject.courseId, subject.workspaceId],
      );
      if (!course) throw notFound('Course');
      const [template] = course.certificate_id
        ? await boundQuery<{ id: string; tokens: CertificateTokens }>(
            tx,
            'select id, tokens from certificate_templates where id = ? and workspace_id = ?',
            [course.certificate_id, subject.workspaceId],
          )
        : [];
      // The snapshot speaks the run's language: the built-in wording in its locale, the template's texts as
      // the course translation has them (docs/certificates.md "Language").
      const design = localizedDesign(template?.tokens ?? {}, subject.locale, subject.templateTexts ?? {});
      const issuerName = design.issuerName?.trim() ? design.issuerName.trim() : course.ws_name;
      for (let attempt = 0; attempt < SERIAL_TRIES; attempt++) {
        const serial = generateSerial();
        const [inserted] = await boundQuery<IssuedCertificateRow>(
          tx,
          `insert into issued_certificates
             (id, workspace_id, serial, completion_id, course_id, identity_id, identity_external_id,
              learner_name, course_title, issuer_name, score, locale, direction, source, template_id, design, issued_at)
           values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?::jsonb, date_trunc('milliseconds', clock_timestamp()))
           on conflict do nothing
           returning *`,
          [
            newId('crt'),
            subject.workspaceId,
            serial,
            subject.completionId,
            subject.courseId,
            subject.identityId,
            subject.identityExternalId ?? '',
            learnerName,
            subject.courseTitle,
            issuerName,
            subject.score,
            subject.locale,
            subject.direction ?? course.direction,
            subject.source ?? 'embed',
            template?.id ?? null,
            JSON.stringify(design),
          ],
        );
        if (inserted) {
          const [identity] = await boundQuery<{
            id: string;
            external_id: string;
            name: string | null;
            email: string | null;
          }>(tx, 'select id, external_id, name, email from identities where id = ? and workspace_id = ?', [
            subject.identityId,
            subject.workspaceId,
          ]);
          recordEvent(tx, subject.workspaceId, 'certificate.issued', {
            course: { id: subject.courseId, title: subject.courseTitle },
            identity: eventIdentity(
              identity
                ? {
                    id: identity.id,
                    externalId: identity.external_id,
                    name: identity.name,
                    email: identity.email,
                  }
                : {
                    id: subject.identityId!,
                    externalId: subject.identityExternalId ?? '',
                    name: learnerName,
                    email: null,
                  },
            ),
            serial,
            verifyUrl: verifyUrl(deps.cfg.PUBLIC_URL, serial),
            score: reportedScore(subject.score),
            issuedAt: iso(inserted.issued_at)!,
          });
          await tx.flush();
          return { row: inserted, issued: true };
        }
        // Nothing inserted: another download of this run won (its row is committed now), or the serial was taken.
        const winner = await byCompletion(tx, subject.workspaceId, subject.completionId);
        if (winner) return { row: winner, issued: false };
      }
      throw new AppError('internal_error', `No free serial after ${SERIAL_TRIES} tries`);
    })
    .catch((err: unknown) => {
      // The run was deleted (with its learner) between the token check and the insert: the foreign key on
      // completion_id refuses the certificate, and the run is gone as far as the learner is concerned.
      if ((err as { code?: unknown }).code === FOREIGN_KEY_VIOLATION) throw notFound('Run');
      throw err;
    });
  if (outcome.issued) deps.onEvent?.();
  return { certificate: outcome.row, issued: outcome.issued };
}

/** SPEC: the Issued certificate's `score` is a number; a course without graded blocks reports 100 (docs/certificates.md). */
export function reportedScore(score: number | null): number {
  return score === null ? 100 : score;
}

/** The stored PDF of a certificate; rendered (once more) when it is not in the store. */
export async function certificatePdf(deps: CertificatePdfDeps, row: IssuedCertificateRow): Promise<Buffer> {
  if (row.pdf_key) {
    try {
      const stored = await deps.storage.get(row.pdf_key);
      if (isWholePdf(stored)) return stored;
      deps.log.warn(
        { serial: row.serial, bytes: stored.length },
        'stored certificate PDF incomplete; rendering it again',
      );
    } catch (err) {
      deps.log.warn({ err, serial: row.serial }, 'stored certificate PDF unreadable; rendering it again');
    }
  }
  const { result } = await runSyncJob(deps, {
    workspaceId: row.workspace_id,
    kind: CERTIFICATE_RENDER_KIND,
    input: {
      serial: row.serial,
      learnerName: row.learner_name,
      courseTitle: row.course_title,
      issuerName: row.issuer_name,
      score: scoreOf(row),
      locale: row.locale,
      direction: row.direction,
      issuedAt: iso(row.issued_at)!,
      verifyUrl: verifyUrl(deps.cfg.PUBLIC_URL, row.serial),
      tokens: row.design,
      // Only an asserted learner changes the page: an embed certificate renders exactly as it always did.
      ...(row.source === 'scorm' ? { source: row.source } : {}),
      pdfKey: pdfKeyOf(row.workspace_id, row.serial),
    },
    timeoutMs: deps.cfg.CERTIFICATE_RENDER_TIMEOUT_MS,
    what: 'certificate render',
  });
  // Racing first downloads each render the same page to the same key; a read that meets
  // another render's overwrite (the loopback S3 server writes in place) fails or returns a
  // partial file (measured: an empty body with a 200), so both are read again. Never answer
  // a learner with a broken PDF.
  for (let attempt = 1; ; attempt++) {
    let cause: unknown = null;
    try {
      const pdf = await deps.storage.get(result.pdfKey);
      if (isWholePdf(pdf)) return pdf;
      cause = new Error(`incomplete PDF read (${pdf.length} bytes)`);
    } catch (err) {
      cause = err;
    }
    if (attempt >= READ_TRIES)
      throw new AppError('unavailable', 'The object store is unreachable; retry shortly', {
        cause,
        retryAfter: 2,
      });
    await new Promise((r) => setTimeout(r, 100 * attempt));
  }
}

/** Six reads over about two seconds: longer than racing renders of one page take on a loaded machine. */
const READ_TRIES = 6;

/** A complete PDF file: the header, and the end-of-file marker in its last bytes (PDF 1.7 §7.5.5). */
export function isWholePdf(pdf: Buffer): boolean {
  return (
    pdf.length > 16 &&
    pdf.subarray(0, 5).toString('latin1') === '%PDF-' &&
    pdf.subarray(-32).toString('latin1').includes('%%EOF')
  );
}
