import { boundQuery, type EntityManager } from '@lectern/db';
import { CERTIFICATE_TRANSLATABLE_TOKENS, type CertificateSubject } from '@lectern/contracts';
import { AppError, notFound } from '@lectern/errors';
import { applyTranslation } from '@lectern/courses';
import { RATE_SET, type RunRef } from './ingest.js';

/**
 * The facts of a run a certificate is judged and printed from, for the player's certificate download
 * (docs/certificates.md): the shared `CertificateSubject`, with the pass mark and direction always known here.
 */
export type CertificateRun = CertificateSubject &
  Required<Pick<CertificateSubject, 'passingScore' | 'direction'>>;

interface Row {
  id: string;
  workspace_id: string;
  course_id: string;
  identity_id: string | null;
  source: 'embed' | 'scorm';
  status: 'in_progress' | 'completed';
  score: string | null;
  passed_at_completion: boolean | null;
  passing_score_at_completion: string | null;
  locale: string;
  rate_window_count: number;
  retry_after: number;
  course_title: string;
  course_locale: string;
  direction: 'ltr' | 'rtl';
  translation: Record<string, unknown> | null;
  external_id: string | null;
  name: string | null;
}

const num = (v: string | null): number | null => (v === null ? null : Number(v));

/** The template texts a course translation holds (`certificate.<token>` paths), for the certificate's snapshot. */
function certificateTextsOf(content: Record<string, unknown>): CertificateSubject['templateTexts'] {
  const texts: NonNullable<CertificateSubject['templateTexts']> = {};
  for (const token of CERTIFICATE_TRANSLATABLE_TOKENS) {
    const text = content[`certificate.${token}`];
    if (typeof text === 'string' && text.trim() !== '') texts[token] = text;
  }
  return texts;
}

/**
 * One statement: counts the download in the run's per-minute window (the same window as event batches and
 * retakes, so a looping download link is stopped like a looping player; not with `perRunPerMinute` 0) and reads the run with its course
 * title in the served locale and its learner. 404 when the run is gone (deleted with its learner after the
 * token was issued). The course need not be published any more: a certificate earned stays downloadable
 * after the course is unpublished (which is what a course with certificates is told to do instead of
 * being deleted).
 */
export async function runForCertificate(
  ports: { em: EntityManager; perRunPerMinute: number },
  ref: RunRef,
): Promise<CertificateRun> {
  // perRunPerMinute 0 (the keyed API's download): read only, so a customer's backend never spends the learner's
  // window; its key's own rate limit bounds it.
  const head =
    ports.perRunPerMinute > 0
      ? `update completions c set ${RATE_SET} where c.id = ? and c.workspace_id = ? returning`
      : 'select';
  const tail = ports.perRunPerMinute > 0 ? '' : ' from completions c where c.id = ? and c.workspace_id = ?';
  const [row] = await boundQuery<Row>(
    ports.em,
    `${head} c.id, c.workspace_id, c.course_id, c.identity_id, c.source, c.status, c.score, c.passed_at_completion,
       c.passing_score_at_completion, c.locale, c.rate_window_count,
       greatest(1, ceil(extract(epoch from (c.rate_window_start + interval '1 minute' - clock_timestamp()))))::int as retry_after,
       (select co.title from courses co where co.id = c.course_id) as course_title,
       (select co.locale from courses co where co.id = c.course_id) as course_locale,
       (select co.direction from courses co where co.id = c.course_id) as direction,
       (select t.content from course_translations t where t.course_id = c.course_id and t.locale = c.locale) as translation,
       (select i.external_id from identities i where i.id = c.identity_id) as external_id,
       (select i.name from identities i where i.id = c.identity_id) as name${tail}`,
    [ref.completionId, ref.workspaceId],
  );
  if (!row) throw notFound('Run');
  if (ports.perRunPerMinute > 0 && row.rate_window_count > ports.perRunPerMinute) {
    throw new AppError(
      'rate_limited',
      `Too many calls for this run: at most ${ports.perRunPerMinute} a minute`,
      {
        retryAfter: row.retry_after,
      },
    );
  }
  // The title as the learner read it: the translation of the served locale (a blank or missing title in it
  // keeps the source title, as on the player).
  const translated = row.translation && row.locale !== row.course_locale ? row.translation : null;
  const courseTitle = translated
    ? applyTranslation({ title: row.course_title, screens: [] }, translated).title
    : row.course_title;
  return {
    workspaceId: row.workspace_id,
    completionId: row.id,
    courseId: row.course_id,
    identityId: row.identity_id,
    identityExternalId: row.external_id,
    learnerName: row.name,
    courseTitle,
    score: num(row.score),
    locale: row.locale,
    status: row.status,
    passed: row.passed_at_completion,
    passingScore: num(row.passing_score_at_completion),
    direction: row.direction,
    source: row.source,
    templateTexts: translated ? certificateTextsOf(translated) : {},
  };
}
