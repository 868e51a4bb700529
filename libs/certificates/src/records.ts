import { AppError } from '@lectern/errors';
import { boundQuery, type EntityManager } from '@lectern/db';
import {
  iso,
  resolveCertificateTokens,
  type CertificateVerification,
  type IssuedCertificateDto,
} from '@lectern/contracts';
import { reportedScore, scoreOf, type IssuedCertificateRow } from './issue.js';
import { normaliseSerial } from './serial.js';

export function issuedCertificateDto(row: IssuedCertificateRow): IssuedCertificateDto {
  return {
    id: row.id,
    serial: row.serial,
    courseId: row.course_id,
    identityId: row.identity_id,
    identityExternalId: row.identity_external_id,
    score: reportedScore(scoreOf(row)),
    locale: row.locale,
    source: row.source,
    issuedAt: iso(row.issued_at)!,
  };
}

export interface IssuedCertificateFilter {
  courseId?: string;
  identityId?: string;
  limit: number;
  offset: number;
}

/** GET /issued-certificates: newest first (issue time, then id), paged, optionally by course and learner. */
export async function listIssuedCertificates(
  em: EntityManager,
  workspaceId: string,
  filter: IssuedCertificateFilter,
): Promise<{ rows: IssuedCertificateRow[]; total: number }> {
  const where = ['workspace_id = ?'];
  const params: unknown[] = [workspaceId];
  if (filter.courseId !== undefined) {
    where.push('course_id = ?');
    params.push(filter.courseId);
  }
  if (filter.identityId !== undefined) {
    where.push('identity_id = ?');
    params.push(filter.identityId);
  }
  const clause = where.join(' and ');
  const rows = await boundQuery<IssuedCertificateRow>(
    em,
    `select * from issued_certificates where ${clause} order by issued_at desc, id desc limit ? offset ?`,
    [...params, filter.limit, filter.offset],
  );
  const [count] = await boundQuery<{ n: string }>(
    em,
    `select count(*) as n from issued_certificates where ${clause}`,
    params,
  );
  return { rows, total: Number(count?.n ?? 0) };
}

/** A certificate by serial in any spelling, or null. `workspaceId` null: any workspace (the public page). */
export async function findBySerial(
  em: EntityManager,
  workspaceId: string | null,
  serial: string,
): Promise<IssuedCertificateRow | null> {
  const printed = normaliseSerial(serial);
  if (printed === null) return null;
  const [row] = await boundQuery<IssuedCertificateRow>(
    em,
    workspaceId === null
      ? 'select * from issued_certificates where serial = ?'
      : 'select * from issued_certificates where serial = ? and workspace_id = ?',
    workspaceId === null ? [printed] : [printed, workspaceId],
  );
  return row ?? null;
}

/** GET /issued-certificates/:serial: scoped to the caller's workspace; another workspace's serial is a 404 like an unknown one. */
export async function getIssuedCertificate(
  em: EntityManager,
  workspaceId: string,
  serial: string,
): Promise<IssuedCertificateRow> {
  const row = await findBySerial(em, workspaceId, serial);
  if (!row) throw new AppError('not_found', 'No issued certificate with that serial');
  return row;
}

/**
 * What the public verification page states. The score only when the certificate's
 * design prints it and the course had graded blocks: the page shows what the paper
 * shows, nothing the learner did not choose to have printed.
 */
export function verificationOf(row: IssuedCertificateRow): CertificateVerification {
  const design = resolveCertificateTokens(row.design);
  const score = scoreOf(row);
  return {
    valid: true,
    serial: row.serial,
    learnerName: row.learner_name,
    courseTitle: row.course_title,
    issuerName: row.issuer_name,
    issuedAt: iso(row.issued_at)!,
    locale: row.locale,
    score: design.showScore && score !== null ? score : null,
    source: row.source,
    learnerIdentity: row.source === 'scorm' ? 'asserted' : 'verified',
  };
}

/**
 * One public lookup by `address`; the number of seconds to wait when over `perMinute`,
 * else 0. Shares the API's rolling-window counter (PostgreSQL `lectern_rate_hit`), so the
 * limit holds across every API replica. Keys are `verify:<address>`, apart from API keys.
 */
export async function verifyLookupWait(
  em: EntityManager,
  address: string,
  perMinute: number,
): Promise<number> {
  const [row] = await boundQuery<{ retry: number }>(em, 'select lectern_rate_hit(?, ?, 60000) as retry', [
    `verify:${address}`,
    perMinute,
  ]);
  return Number(row?.retry ?? 0);
}
