import type { ApiRouter } from '../http/router.js';
import type { RouteDeps } from '../deps.js';
import type { PlayerKeys } from '../player-keys.js';
import { AppError } from '@lectern/errors';
import { z } from 'zod';
import { ErrorBody, ScormExportQuery, TrackingSecret, iso } from '@lectern/contracts';
import { getCourse } from '@lectern/authoring';
import { rotateTrackingSecret, trackingSecretOf } from '@lectern/learner-runs';
import { runSyncJob } from '@lectern/jobs';
import { SCORM_EXPORT_KIND } from '@lectern/scorm';
import { planGate } from '../http/plan-gate.js';
import { errorResponses, syncJobErrors } from './shared.js';

/**
 * GET /courses/:id/scorm (docs/scorm.md "Export"): the scorm worker builds the package and puts it in the object
 * store (docs/jobs.md), and this route streams it from there to the client, so neither process holds it whole.
 * Drafts export too: an author tries a course in their LMS before publishing it.
 */
export function scormExportRoutes(
  api: ApiRouter,
  deps: Pick<RouteDeps, 'orm' | 'bus' | 'storage' | 'log' | 'cfg'> & { playerKeys: () => PlayerKeys },
) {
  api.route(
    {
      method: 'get',
      path: '/courses/:id/scorm',
      operationId: 'exportCourseToScorm',
      summary: 'Export a course as a SCORM package (zip)',
      description:
        'Scale plan or higher (403 plan_required otherwise). A single-SCO package with the player, the course ' +
        '(answer keys included: grading happens in the browser) and its fonts; drafts export too. ' +
        '`version`: scorm2004 (4th edition, default) or scorm12. `lang`: a locale of the course (404 when it has ' +
        'none such). `track=1`: the package also reports runs to this service through the Player API with a ' +
        'course-bound tracking token (no expiry; POST /courses/:id/tracking-secret/rotate retires it). Layout and ' +
        'manifest: docs/scorm.md.',
      tags: ['Courses'],
      query: ScormExportQuery,
      responses: {
        200: {
          description:
            'The package: `Content-Disposition: attachment; filename="<slug>-<version>.zip"`, with Content-Length',
          contentType: 'application/zip',
        },
        ...errorResponses,
        404: {
          description: 'not_found: no such course in this workspace, or `lang` is not a locale of the course',
          schema: ErrorBody,
        },
        ...syncJobErrors(
          'the export did not finish in time; `jobId` names the job (nothing is created, retrying is safe)',
        ),
      },
    },
    planGate('scorm_api'),
    async (ctx) => {
      const ws = ctx.state.auth.workspace;
      const { version, lang, track } = ctx.state.query;
      // A course of another workspace is 404 before any job or token exists.
      const course = await getCourse(deps.orm.em.fork(), ws.id, ctx.params.id);
      const tracking =
        track === '1'
          ? {
              apiBase: `${deps.cfg.PUBLIC_URL}/player/v1`,
              token: await deps.playerKeys().tracking.sign({
                courseId: course.id,
                workspaceId: ws.id,
                version: (await trackingSecretOf(deps.orm.em.fork(), ws.id, course.id)).version,
              }),
            }
          : null;
      const { result } = await runSyncJob(deps, {
        workspaceId: ws.id,
        kind: SCORM_EXPORT_KIND,
        input: {
          courseId: course.id,
          version,
          lang: lang ? Intl.getCanonicalLocales(lang)[0] : null,
          track: tracking,
        },
        timeoutMs: deps.cfg.SCORM_EXPORT_TIMEOUT_MS,
        what: 'SCORM export',
      });
      let body;
      try {
        body = await deps.storage.stream(result.key);
      } catch (cause) {
        throw new AppError('unavailable', 'The object store is unreachable; retry shortly', {
          cause,
          retryAfter: 2,
        });
      }
      // The package is made for this one download: once it has been streamed out (or the client went away),
      // it leaves the object store. A package whose request already timed out is left for the bucket's
      // lifecycle rule on jobs/ (docs/scorm.md).
      body.once('close', () => {
        deps.storage.remove(result.key).catch((err: unknown) => {
          deps.log.warn({ err, key: result.key }, 'could not delete a downloaded SCORM package');
        });
      });
      ctx.type = 'application/zip';
      ctx.length = result.bytes;
      ctx.set('Content-Disposition', `attachment; filename="${result.fileName}"`);
      ctx.body = body;
    },
  );

  api.route(
    {
      method: 'post',
      path: '/courses/:id/tracking-secret/rotate',
      operationId: 'rotateCourseTrackingSecret',
      summary:
        "Rotate a course's tracking secret: every package exported with track=1 before stops reporting",
      description:
        'The tracking token in a `track=1` package can be read by anyone who has the package. Rotating retires ' +
        'every package of this course exported before: their run opens are refused with 401 `unauthorized` from ' +
        'now on, on every server; packages exported afterwards work. Runs already recorded stay. Every plan (a ' +
        'workspace that left Scale can still retire its packages). docs/scorm.md "Export" (track=1).',
      tags: ['Courses'],
      responses: {
        200: { description: 'The new secret version', schema: z.object({ data: TrackingSecret }) },
        ...errorResponses,
        404: { description: 'not_found: no such course in this workspace', schema: ErrorBody },
      },
    },
    async (ctx) => {
      const secret = await rotateTrackingSecret(
        deps.orm.em.fork(),
        ctx.state.auth.workspace.id,
        ctx.params.id,
      );
      ctx.body = {
        data: { courseId: secret.courseId, version: secret.version, rotatedAt: iso(secret.rotatedAt) },
      };
    },
  );
}
