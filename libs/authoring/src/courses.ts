import { LockMode } from '@mikro-orm/core';
import { CourseSchema, newId, boundQuery, type Course, type EntityManager } from '@lectern/db';
import { AppError, invalid, notFound } from '@lectern/errors';
import { PLANS, checkCourseCeiling, checkScreenCeiling, type PlanName } from '@lectern/plans';
import { contentHash, courseSizeIssue, dropNullFields, validateScreens } from '@lectern/courses';
import { recordEvent } from '@lectern/events';
import { DEFAULT_COURSE_LOCALE, type CreateCourseInput, type UpdateCourse } from '@lectern/contracts';
import { assertRefsInWorkspace } from './refs.js';

export interface WorkspaceRef {
  id: string;
  plan: PlanName;
}

/** The player page of a course: SPEC.md `{embed_url}/<course_id>`. */
export function embedUrl(publicUrl: string, courseId: string): string {
  return `${publicUrl.replace(/\/+$/, '')}/embed/${encodeURIComponent(courseId)}`;
}

/**
 * The screens as they will be stored: size limits first (so an oversized body costs no more work), then
 * known optional fields sent as null dropped, then the write rules. Throws 400 with every issue.
 */
function checkedScreens(raw: unknown[]): unknown[] {
  const tooBig = courseSizeIssue(raw);
  if (tooBig) throw invalid('The course is too large', [tooBig]);
  const screens = dropNullFields(raw) as unknown[];
  assertScreens(screens);
  return screens;
}

function assertScreens(screens: unknown[]): void {
  const issues = validateScreens(screens);
  if (issues.length)
    throw invalid(
      `The course screens are invalid (${issues.length} issue${issues.length > 1 ? 's' : ''})`,
      issues,
    );
}

/**
 * Creates a draft course: the one path for the API, the CSV importer and
 * (later) SCORM import and generation. In order: the plan's course ceiling
 * (403), the screen rules (400, paths `["screens", …]`), the screen ceiling
 * (403), `themeId`/`certificateId` in the workspace (400). Runs in its own
 * transaction, or as a savepoint of the caller's (a worker writing its job row).
 */
export async function createCourse(
  em: EntityManager,
  ws: { id: string; plan: PlanName },
  input: CreateCourseInput,
  opts: { sourceKind?: string } = {},
): Promise<Course> {
  return em.transactional(async (tx) => {
    if (PLANS[ws.plan].maxCourses !== null) {
      // Serialises course creation per workspace: two concurrent creates cannot both pass the ceiling.
      await boundQuery(tx, 'select pg_advisory_xact_lock(hashtext(?))', [`lectern:courses:${ws.id}`]);
      const [{ n }] = await boundQuery<{ n: number }>(
        tx,
        'select count(*)::int as n from courses where workspace_id = ?',
        [ws.id],
      );
      checkCourseCeiling(ws.plan, n);
    }
    const screens = checkedScreens(input.screens ?? []);
    checkScreenCeiling(ws.plan, 0, screens.length);
    const themeId = input.themeId ?? null;
    const certificateId = input.certificateId ?? null;
    await assertRefsInWorkspace(tx, ws.id, { themeId, certificateId });

    const now = new Date();
    const title = input.title;
    const direction = input.direction ?? 'ltr';
    const locale = input.locale ?? DEFAULT_COURSE_LOCALE;
    const course = tx.create(CourseSchema, {
      id: newId('crs'),
      workspaceId: ws.id,
      title,
      status: 'draft',
      screens,
      sourceKind: opts.sourceKind ?? 'manual',
      direction,
      locale,
      customFonts: input.customFonts ?? [],
      themeId,
      certificateId,
      passingScore: input.passingScore ?? null,
      quizFeedback: input.quizFeedback ?? 'deferred',
      navigation: input.navigation ?? 'default',
      completion: input.completion ?? 'free',
      reviewShowCorrectAnswers: input.review?.showCorrectAnswers ?? false,
      contentHash: contentHash({ title, screens, direction, locale }),
      createdAt: now,
      updatedAt: now,
    });
    await tx.flush();
    return course;
  });
}

/** Newest first, unpaged (SPEC.md). */
export async function listCourses(em: EntityManager, workspaceId: string): Promise<Course[]> {
  return em.find(CourseSchema, { workspaceId }, { orderBy: { createdAt: 'desc', id: 'desc' } });
}

export async function getCourse(em: EntityManager, workspaceId: string, id: string): Promise<Course> {
  const course = await em.findOne(CourseSchema, { id, workspaceId });
  if (!course) throw notFound('Course');
  return course;
}

/** The course row locked for the rest of the transaction. */
export async function lockCourse(tx: EntityManager, workspaceId: string, id: string): Promise<Course> {
  const course = await tx.findOne(
    CourseSchema,
    { id, workspaceId },
    { lockMode: LockMode.PESSIMISTIC_WRITE },
  );
  if (!course) throw notFound('Course');
  return course;
}

export type CourseStatusEvent = 'course.published' | 'course.unpublished';

export interface UpdateCourseResult {
  course: Course;
  /** The status event written to the outbox, if this write was a real transition. */
  event: CourseStatusEvent | null;
}

/**
 * PATCH /courses/:id. `screens` replaces the whole array. A status change that
 * is a real transition writes course.published / course.unpublished to the
 * outbox in the same transaction; the caller kicks the relay after commit.
 */
export async function updateCourse(
  em: EntityManager,
  ws: WorkspaceRef,
  id: string,
  patch: UpdateCourse,
  opts: { publicUrl: string },
): Promise<UpdateCourseResult> {
  return em.transactional(async (tx) => {
    const course = await lockCourse(tx, ws.id, id);
    if (patch.screens !== undefined) {
      const screens = checkedScreens(patch.screens);
      patch = { ...patch, screens };
      // A course already over the line after a downgrade stays editable while a write adds no screens.
      checkScreenCeiling(ws.plan, course.screens.length, screens.length);
    }
    await assertRefsInWorkspace(tx, ws.id, { themeId: patch.themeId, certificateId: patch.certificateId });
    if (patch.locale !== undefined && patch.locale !== course.locale) {
      const clash = await boundQuery<{ id: string }>(
        tx,
        'select id from course_translations where course_id = ? and locale = ?',
        [course.id, patch.locale],
      );
      if (clash.length) {
        throw invalid(
          `This course has a ${patch.locale} translation (${clash[0].id}); delete it before making ${patch.locale} the source language`,
          [
            {
              code: 'translation_exists',
              path: ['locale'],
              message: `a ${patch.locale} translation of this course exists`,
            },
          ],
        );
      }
    }

    if (patch.title !== undefined) course.title = patch.title;
    if (patch.screens !== undefined) course.screens = patch.screens;
    if (patch.themeId !== undefined) course.themeId = patch.themeId;
    if (patch.certificateId !== undefined) course.certificateId = patch.certificateId;
    if (patch.direction !== undefined) course.direction = patch.direction;
    if (patch.locale !== undefined) course.locale = patch.locale;
    if (patch.passingScore !== undefined) course.passingScore = patch.passingScore;
    if (patch.quizFeedback !== undefined) course.quizFeedback = patch.quizFeedback;
    if (patch.navigation !== undefined) course.navigation = patch.navigation;
    if (patch.completion !== undefined) course.completion = patch.completion;
    if (patch.review !== undefined) course.reviewShowCorrectAnswers = patch.review.showCorrectAnswers;
    if (patch.customFonts !== undefined) course.customFonts = patch.customFonts;

    let event: CourseStatusEvent | null = null;
    if (patch.status !== undefined && patch.status !== course.status) {
      course.status = patch.status;
      event = patch.status === 'published' ? 'course.published' : 'course.unpublished';
    }
    course.contentHash = contentHash(course);
    course.updatedAt = new Date();
    if (event) {
      recordEvent(tx, ws.id, event, {
        course: { id: course.id, title: course.title },
        embedUrl: embedUrl(opts.publicUrl, course.id),
      });
    }
    await tx.flush();
    return { course, event };
  });
}

/**
 * SPEC.md Courses rule 3: "A course that has issued certificates cannot be
 * deleted" (409 `conflict`, unpublish instead). Called with the course row
 * locked, inside the delete's transaction; issuing a certificate takes a share
 * lock on the same row, so a delete and a first download cannot cross. The
 * foreign key of issued_certificates (ON DELETE RESTRICT) backs this up.
 */
export async function assertCourseDeletable(
  tx: EntityManager,
  workspaceId: string,
  courseId: string,
): Promise<void> {
  const [row] = await boundQuery<{ n: string }>(
    tx,
    'select count(*) as n from issued_certificates where course_id = ? and workspace_id = ?',
    [courseId, workspaceId],
  );
  const n = Number(row?.n ?? 0);
  if (n > 0) {
    throw new AppError(
      'conflict',
      `This course has ${n} issued certificate${n === 1 ? '' : 's'} and cannot be deleted; unpublish it instead (PATCH status "draft")`,
      { details: { issuedCertificates: n } },
    );
  }
}

/**
 * DELETE /courses/:id. Collections memberships and translations cascade. Deleting a published
 * course takes its embed link offline, so it writes course.unpublished to the outbox in the same
 * transaction (subscribers would otherwise never learn the link went away); returns that event
 * so the caller kicks the relay after commit.
 */
export async function deleteCourse(
  em: EntityManager,
  workspaceId: string,
  id: string,
  opts: { publicUrl: string },
): Promise<{ event: CourseStatusEvent | null }> {
  return em.transactional(async (tx) => {
    const rows = await boundQuery<{ id: string; title: string; status: string }>(
      tx,
      'select id, title, status from courses where id = ? and workspace_id = ? for update',
      [id, workspaceId],
    );
    if (rows.length === 0) throw notFound('Course');
    await assertCourseDeletable(tx, workspaceId, id);
    await boundQuery(tx, 'delete from courses where id = ? and workspace_id = ?', [id, workspaceId]);
    if (rows[0].status !== 'published') return { event: null };
    recordEvent(tx, workspaceId, 'course.unpublished', {
      course: { id, title: rows[0].title },
      embedUrl: embedUrl(opts.publicUrl, id),
    });
    await tx.flush();
    return { event: 'course.unpublished' };
  });
}
