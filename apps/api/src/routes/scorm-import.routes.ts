import type { ApiRouter } from '../http/router.js';
import type { RouteDeps } from '../deps.js';
import { ErrorBody, ScormImportQuery, ScormImportResponse } from '@lectern/contracts';
import { getCourse, courseDto } from '@lectern/authoring';
import { SCORM_BLOB, SCORM_IMPORT_KIND, ZIP_CAPS } from '@lectern/scorm';
import { runSyncJob } from '@lectern/jobs';
import { planGate } from '../http/plan-gate.js';
import { rawBodyStream } from '../http/raw-body.js';
import { withStreamedIdempotency } from '../http/idempotency.js';
import { errorResponses, syncJobErrors } from './shared.js';

/** SPEC.md Limits: a SCORM package of more than 100 MB is a 413. */
export const SCORM_BODY_LIMIT = 100 * 1000 * 1000;

/**
 * POST /courses/import/scorm through the synchronous command path (docs/jobs.md): the body is streamed to the
 * object store (never whole in memory), the scorm worker checks and reads the package, the answer comes from the
 * job row. Registered before the course routes so no `/courses/:id` pattern can shadow it.
 */
export function scormImportRoutes(
  api: ApiRouter,
  deps: Pick<RouteDeps, 'orm' | 'bus' | 'storage' | 'log' | 'cfg'>,
) {
  api.route(
    {
      method: 'post',
      path: '/courses/import/scorm',
      operationId: 'importCourseFromScorm',
      summary: 'Import a draft course from a SCORM package',
      description:
        'Raw zip body with `Content-Type: application/zip` (or `application/x-zip-compressed`), SCORM 1.2 or 2004. ' +
        'Scale plan or higher (403 plan_required otherwise, before the body is read). ' +
        '201: `data` is the draft course (`sourceKind: scorm`); `meta.kind` is `roundtrip` for a package this service exported ' +
        '(restored exactly) or `salvaged` (outline and text), and `meta.warnings` lists what was left behind (docs/scorm.md). ' +
        `400 invalid_request: not a zip, no manifest, unsafe entries (zip slip, absolute paths, symlinks, encryption), more than ${ZIP_CAPS.maxEntries.toLocaleString('en-US')} entries, ` +
        'zip bombs, DOCTYPE/entities in XML, manifests that are not XML; `issues[0].code` says which. Nothing is stored. ' +
        '413 over 100 MB. Sandbox ceilings apply (403 plan_required). 504 `timeout` with `jobId` when the worker did not answer in time. ' +
        '`Idempotency-Key` header: the same key, package and title within 24 h answers 200 with the first answer and imports nothing; another package or title with the key is 409 conflict.',
      tags: ['Courses'],
      query: ScormImportQuery,
      rawBody: {
        contentType: 'application/zip',
        // What Windows browsers send for a .zip picked in a file input (docs/scorm.md).
        alsoAccept: ['application/x-zip-compressed'],
        what: 'the package',
        description: 'The SCORM package (.zip), at most 100 MB.',
      },
      responses: {
        201: {
          description: 'The imported draft course and what the import did',
          schema: ScormImportResponse,
        },
        ...errorResponses,
        200: {
          description:
            'Idempotent replay: the first answer to this Idempotency-Key (same body), nothing imported',
          schema: ScormImportResponse,
        },
        409: {
          description:
            'conflict: the Idempotency-Key was used with another body in the last 24 h, or is in use',
          schema: ErrorBody,
        },
        400: {
          description:
            'invalid_request: the package is refused (issues[0].code: not_a_zip, no_manifest, zip_slip, …) or a bad `title`',
          schema: ErrorBody,
        },
        413: { description: 'payload_too_large: body over 100 MB', schema: ErrorBody },
        415: {
          description: 'unsupported_media_type: Content-Type is not application/zip',
          schema: ErrorBody,
        },
        ...syncJobErrors(
          'the import did not finish in time; `jobId` names the job, which may still complete',
        ),
      },
    },
    planGate('scorm_api'),
    async (ctx) => {
      const what = 'A SCORM import';
      const body = rawBodyStream(ctx, { limit: SCORM_BODY_LIMIT, what });
      const ws = ctx.state.auth.workspace;
      const title = ctx.state.query.title ?? null;
      // Idempotency-Key (docs/generation.md "Idempotency"): the fingerprint is the package's bytes, hashed as they
      // stream, and the title.
      const idem = { scope: 'importCourseFromScorm', limit: SCORM_BODY_LIMIT, tooLarge: body.tooLarge };
      try {
        await withStreamedIdempotency(
          ctx,
          deps.orm.em.fork(),
          { ...idem, stream: body.stream, extra: JSON.stringify({ title }) },
          async (stream) => {
            let outcome;
            try {
              outcome = await runSyncJob(deps, {
                workspaceId: ws.id,
                kind: SCORM_IMPORT_KIND,
                input: { title },
                blobs: { [SCORM_BLOB]: { ...body, stream, contentType: 'application/zip' } },
                timeoutMs: deps.cfg.SCORM_IMPORT_TIMEOUT_MS,
                what: 'SCORM import',
                deleteBlobsWhenDone: true,
              });
            } catch (err) {
              // The rest of a refused upload is discarded, so the client still reads the answer.
              ctx.req.resume();
              throw err;
            }
            const course = await getCourse(deps.orm.em.fork(), ws.id, outcome.result.courseId);
            ctx.status = 201;
            ctx.set('Location', `/api/v1/courses/${encodeURIComponent(course.id)}`);
            ctx.body = { data: courseDto(course), meta: outcome.result.meta };
          },
        );
      } catch (err) {
        ctx.req.resume();
        throw body.mapError(err);
      }
    },
  );
}
