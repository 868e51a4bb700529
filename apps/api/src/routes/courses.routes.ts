import { z } from 'zod';
import type { ApiRouter } from '../http/router.js';
import type { RouteDeps } from '../deps.js';
import { Course, CourseWriteResult, CreateCourse, UpdateCourse } from '@lectern/contracts';
import {
  createCourse,
  deleteCourse,
  getCourse,
  listCourses,
  updateCourse,
  courseDto,
  courseWarnings,
} from '@lectern/authoring';
import { errorResponses } from './shared.js';

/** Courses carry whole screen documents; a large paid-plan course outgrows the 1 MiB default. */
const COURSE_BODY_LIMIT = 8 * 1024 * 1024;

export function courseRoutes(api: ApiRouter, deps: Pick<RouteDeps, 'orm' | 'cfg' | 'relay'>) {
  const tags = ['Courses'] as const;
  const em = () => deps.orm.em.fork();
  const one = z.object({ data: Course });
  /** A written course, with `meta.warnings` when the saved course has something its author should know. */
  const written = (course: Parameters<typeof courseDto>[0]) => {
    const warnings = courseWarnings(course);
    return { data: courseDto(course), ...(warnings.length ? { meta: { warnings } } : {}) };
  };

  api.route(
    {
      method: 'get',
      path: '/courses',
      operationId: 'listCourses',
      summary: 'List courses (newest first, unpaged)',
      description: 'Every course of the workspace, drafts and published, with their screens.',
      tags,
      responses: {
        200: { description: 'Every course of the workspace', schema: z.object({ data: z.array(Course) }) },
        ...errorResponses,
      },
    },
    async (ctx) => {
      ctx.body = { data: (await listCourses(em(), ctx.state.auth.workspace.id)).map(courseDto) };
    },
  );

  api.route(
    {
      method: 'post',
      path: '/courses',
      operationId: 'createCourse',
      summary: 'Create a draft course',
      description:
        'Defaults: status draft, sourceKind manual, direction ltr, locale en, quizFeedback deferred, navigation default, completion free, passingScore/themeId/certificateId null, screens and customFonts []. ' +
        'Sandbox: at most 3 courses per workspace and 30 screens per course (403 plan_required). themeId/certificateId of another workspace: 400 with the path.',
      tags,
      body: CreateCourse,
      bodyLimit: COURSE_BODY_LIMIT,
      responses: {
        201: {
          description: 'The created draft course; `meta.warnings` when it may not read as meant',
          schema: CourseWriteResult,
        },
        ...errorResponses,
        413: { description: 'payload_too_large: body over 8 MiB', schema: errorResponses[400].schema },
      },
    },
    async (ctx) => {
      const course = await createCourse(em(), ctx.state.auth.workspace, ctx.state.body);
      ctx.status = 201;
      ctx.set('Location', `${api.prefix}/courses/${encodeURIComponent(course.id)}`);
      ctx.body = written(course);
    },
  );

  api.route(
    {
      method: 'get',
      path: '/courses/:id',
      operationId: 'getCourse',
      summary: 'Get one course',
      description: 'The course as stored, screens and blocks included; 404 when it is not in this workspace.',
      tags,
      responses: { 200: { description: 'The course', schema: one }, ...errorResponses },
    },
    async (ctx) => {
      ctx.body = { data: courseDto(await getCourse(em(), ctx.state.auth.workspace.id, ctx.params.id)) };
    },
  );

  api.route(
    {
      method: 'patch',
      path: '/courses/:id',
      operationId: 'updateCourse',
      summary: 'Update a course (screens replace the whole array; status publishes/unpublishes)',
      description:
        'A real status transition emits course.published / course.unpublished with embedUrl; sending the status the course already has emits nothing. ' +
        'Sandbox: a write taking a course past 30 screens is a 403; a course already over the line stays editable while the write adds no screens.',
      tags,
      body: UpdateCourse,
      bodyLimit: COURSE_BODY_LIMIT,
      responses: {
        200: {
          description: 'The updated course; `meta.warnings` when it may not read as meant',
          schema: CourseWriteResult,
        },
        ...errorResponses,
        413: { description: 'payload_too_large: body over 8 MiB', schema: errorResponses[400].schema },
      },
    },
    async (ctx) => {
      const { course, event } = await updateCourse(
        em(),
        ctx.state.auth.workspace,
        ctx.params.id,
        ctx.state.body,
        {
          publicUrl: deps.cfg.PUBLIC_URL,
        },
      );
      if (event) deps.relay.kick();
      ctx.body = written(course);
    },
  );

  api.route(
    {
      method: 'delete',
      path: '/courses/:id',
      operationId: 'deleteCourse',
      summary: 'Delete a course (it leaves every collection; its translations go with it)',
      description: 'Deleting a published course emits course.unpublished (its embed link goes offline).',
      tags,
      responses: {
        204: { description: 'Deleted', schema: null },
        ...errorResponses,
        409: {
          description: 'conflict: the course has issued certificates; unpublish it instead',
          schema: errorResponses[400].schema,
        },
      },
    },
    async (ctx) => {
      const { event } = await deleteCourse(em(), ctx.state.auth.workspace.id, ctx.params.id, {
        publicUrl: deps.cfg.PUBLIC_URL,
      });
      if (event) deps.relay.kick();
      ctx.status = 204;
    },
  );
}
