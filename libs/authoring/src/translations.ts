import { LockMode } from '@mikro-orm/core';
import {
  CourseTranslationSchema,
  newId,
  boundQuery,
  type Course,
  type CourseTranslation,
  type EntityManager,
} from '@lectern/db';
import { AppError, invalid, notFound } from '@lectern/errors';
import { sourceFingerprints, stalePaths, translatableFields, translationIssues } from '@lectern/courses';
import {
  CERTIFICATE_TRANSLATABLE_TOKENS,
  iso,
  type CertificateTranslatableToken,
  type TranslatableDto,
  type TranslationDto,
} from '@lectern/contracts';
import { getCourse, lockCourse } from './courses.js';

/**
 * A translation against the course as it is now: `currentSourceHash` is the
 * course's content hash, `stalePaths` the translated paths whose source text
 * changed (or vanished) since they were written.
 */
export function translationDto(row: CourseTranslation, course: Course): TranslationDto {
  return {
    id: row.id,
    courseId: row.courseId,
    locale: row.locale,
    content: row.content,
    sourceHash: row.sourceHash,
    currentSourceHash: course.contentHash,
    stalePaths: stalePaths(course, row.sourceFingerprints),
    createdAt: iso(row.createdAt)!,
    updatedAt: iso(row.updatedAt)!,
  };
}

/**
 * The course as a translator sees it: its title and screens, and the texts of its certificate template (the
 * built-in design has none of its own: its wording follows the learner's locale by itself).
 */
async function translatableCourse<C extends Course>(
  em: EntityManager,
  course: C,
): Promise<C & { certificateTexts: Partial<Record<CertificateTranslatableToken, string>> }> {
  const certificateTexts: Partial<Record<CertificateTranslatableToken, string>> = {};
  if (course.certificateId) {
    const [template] = await boundQuery<{ tokens: Record<string, unknown> }>(
      em,
      'select tokens from certificate_templates where id = ? and workspace_id = ?',
      [course.certificateId, course.workspaceId],
    );
    for (const token of CERTIFICATE_TRANSLATABLE_TOKENS) {
      const text = template?.tokens[token];
      if (typeof text === 'string' && text.trim() !== '') certificateTexts[token] = text;
    }
  }
  return Object.assign(Object.create(Object.getPrototypeOf(course) as object) as C, course, {
    certificateTexts,
  });
}

/** GET /courses/:id/translatable: the course's own language and every translatable text in reading order. */
export async function translatableOf(
  em: EntityManager,
  workspaceId: string,
  courseId: string,
): Promise<TranslatableDto> {
  const course = await translatableCourse(em, await getCourse(em, workspaceId, courseId));
  return { sourceLocale: course.locale, fields: translatableFields(course) };
}

/** Every locale of the course, by locale tag. */
export async function listTranslations(
  em: EntityManager,
  workspaceId: string,
  courseId: string,
): Promise<TranslationDto[]> {
  const course = await translatableCourse(em, await getCourse(em, workspaceId, courseId));
  const rows = await em.find(
    CourseTranslationSchema,
    { courseId, workspaceId },
    { orderBy: { locale: 'asc' } },
  );
  return rows.map((r) => translationDto(r, course));
}

async function findTranslation(
  em: EntityManager,
  workspaceId: string,
  courseId: string,
  id: string,
  lock = false,
) {
  const row = await em.findOne(
    CourseTranslationSchema,
    { id, courseId, workspaceId },
    lock ? { lockMode: LockMode.PESSIMISTIC_WRITE } : {},
  );
  if (!row) throw notFound('Translation');
  return row;
}

export async function getTranslation(
  em: EntityManager,
  workspaceId: string,
  courseId: string,
  id: string,
): Promise<TranslationDto> {
  const course = await translatableCourse(em, await getCourse(em, workspaceId, courseId));
  return translationDto(await findTranslation(em, workspaceId, courseId, id), course);
}

/**
 * A new, empty locale. `locale` arrives canonical (contracts `Locale`). The
 * course's own language is a 400; a locale that exists is a 409 `conflict`
 * (decided atomically by the unique key, not by a prior read).
 */
export async function createTranslation(
  em: EntityManager,
  workspaceId: string,
  courseId: string,
  locale: string,
): Promise<TranslationDto> {
  return em.transactional(async (tx) => {
    // Locked so a concurrent change of the course's own language cannot cross this check.
    const course = await lockCourse(tx, workspaceId, courseId);
    if (locale.toLowerCase() === course.locale.toLowerCase()) {
      throw invalid(`${locale} is the course's source language; translate into another locale`, [
        {
          code: 'source_locale',
          path: ['locale'],
          message: `${locale} is the source language of this course`,
        },
      ]);
    }
    const now = new Date();
    const inserted = await boundQuery<{ id: string }>(
      tx,
      `insert into course_translations (id, course_id, workspace_id, locale, content, source_hash, source_fingerprints, created_at, updated_at)
       values (?, ?, ?, ?, '{}'::jsonb, ?, '{}'::jsonb, ?, ?)
       on conflict (course_id, locale) do nothing
       returning id`,
      [newId('trn'), courseId, workspaceId, locale, course.contentHash, now, now],
    );
    if (inserted.length === 0) {
      const [existing] = await boundQuery<{ id: string }>(
        tx,
        'select id from course_translations where course_id = ? and locale = ?',
        [courseId, locale],
      );
      throw new AppError(
        'conflict',
        `This course already has a ${locale} translation (${existing?.id ?? 'unknown'}); PATCH it instead`,
      );
    }
    return translationDto(await findTranslation(tx, workspaceId, courseId, inserted[0].id), course);
  });
}

const isBlank = (s: string) => s.trim() === '';

/**
 * Merges `content` into the locale. A non-blank string sets the path and
 * records the fingerprint of the source text it translates; an empty (or
 * blank) string clears the path back to the source text. Unknown paths are a
 * 400 with the path `["content", <path>]` — except clearing a path the locale
 * still holds, which always works (so a path orphaned by a course edit can be
 * cleaned up). `sourceHash` becomes the course's current content hash.
 */
export async function updateTranslation(
  em: EntityManager,
  workspaceId: string,
  courseId: string,
  id: string,
  content: Record<string, string>,
): Promise<TranslationDto> {
  return em.transactional(async (tx) => {
    // Lock order course → translation, the same as a course write that checks locales.
    const course = await translatableCourse(tx, await lockCourse(tx, workspaceId, courseId));
    const row = await findTranslation(tx, workspaceId, courseId, id, true);
    const toCheck = Object.fromEntries(
      Object.entries(content).filter(([path, text]) => !(isBlank(text) && Object.hasOwn(row.content, path))),
    );
    const issues = translationIssues(course, toCheck);
    if (issues.length)
      throw invalid(
        `The translation content is invalid (${issues.length} issue${issues.length > 1 ? 's' : ''})`,
        issues,
      );

    const current = sourceFingerprints(course);
    const nextContent: Record<string, string> = { ...row.content };
    const nextFingerprints: Record<string, string> = { ...row.sourceFingerprints };
    for (const [path, text] of Object.entries(content)) {
      if (isBlank(text)) {
        delete nextContent[path];
        delete nextFingerprints[path];
      } else {
        nextContent[path] = text;
        nextFingerprints[path] = current[path];
      }
    }
    row.content = nextContent;
    row.sourceFingerprints = nextFingerprints;
    row.sourceHash = course.contentHash;
    row.updatedAt = new Date();
    await tx.flush();
    return translationDto(row, course);
  });
}

export async function deleteTranslation(
  em: EntityManager,
  workspaceId: string,
  courseId: string,
  id: string,
): Promise<void> {
  const n = await em.nativeDelete(CourseTranslationSchema, { id, courseId, workspaceId });
  if (!n) throw notFound('Translation');
}
