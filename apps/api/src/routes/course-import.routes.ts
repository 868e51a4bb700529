import { z } from 'zod';
import type { ApiRouter } from '../http/router.js';
import type { RouteDeps } from '../deps.js';
import { CsvImportError, CsvImportQuery, CsvImportResponse, ErrorBody } from '@lectern/contracts';
import { getCourse, courseDto } from '@lectern/authoring';
import { CSV_BLOB, CSV_IMPORT_KIND, CSV_MAX_ROWS } from '@lectern/csv-import';
import { runSyncJob } from '@lectern/jobs';
import { fingerprintBytes } from '@lectern/idempotency';
import { readRawBody } from '../http/raw-body.js';
import { withIdempotency } from '../http/idempotency.js';
import { errorResponses, syncJobErrors } from './shared.js';

/**
 * Largest CSV body, after decompression. 2,000 rows (SPEC.md Limits) of a typical
 * course take well under 1 MiB; 5 MiB leaves room for long quoted cells (markdown,
 * code) without letting a request hold megabytes it can never import.
 */
export const CSV_BODY_LIMIT = 5 * 1024 * 1024;

/**
 * POST /courses/import/csv through the synchronous command path (docs/jobs.md): the
 * body goes to the object store, the csv worker builds the course, the answer comes
 * from the job row. Registered before the course routes so no `/courses/:id` pattern
 * can shadow it.
 */
export function courseImportRoutes(
  api: ApiRouter,
  deps: Pick<RouteDeps, 'orm' | 'bus' | 'storage' | 'log' | 'cfg'>,
) {
  api.route(
    {
      method: 'post',
      path: '/courses/import/csv',
      operationId: 'importCourseFromCsv',
      summary: 'Import a draft course from a CSV file',
      description:
        'Raw CSV body with `Content-Type: text/csv` (UTF-8 with or without BOM, or Windows-1252; `,` `;` or tab; format in docs/csv-import.md). ' +
        `At most ${CSV_MAX_ROWS.toLocaleString('en-US')} data rows and ${CSV_BODY_LIMIT / 1024 / 1024} MiB. ` +
        '201: `data` is the draft course (`sourceKind: csv`) and `issues`, next to `data`, lists the rows that were skipped. ' +
        '400 `invalid_request`: no readable screen, or too many rows (`limit`), with the same `issues` list. ' +
        'Sandbox: the 3-course and 30-screen ceilings apply (403 plan_required). ' +
        '504 `timeout` when the import worker did not answer in time: the body carries `jobId`; the import may still complete. ' +
        '`Idempotency-Key` header: the same key, file and title within 24 h answers 200 with the first answer and imports nothing; another file or title with the key is 409 conflict.',
      tags: ['Courses'],
      query: CsvImportQuery,
      rawBody: {
        contentType: 'text/csv',
        what: 'the file',
        description:
          'The course CSV: a header row naming the columns (`screen` required), then one block per row.',
      },
      responses: {
        201: {
          description: 'The imported draft course, plus the unreadable rows',
          schema: CsvImportResponse,
        },
        ...errorResponses,
        200: {
          description:
            'Idempotent replay: the first answer to this Idempotency-Key (same body), nothing imported',
          schema: CsvImportResponse,
        },
        409: {
          description:
            'conflict: the Idempotency-Key was used with another body in the last 24 h, or is in use',
          schema: ErrorBody,
        },
        400: {
          description:
            'invalid_request: no readable screen or more than 2,000 data rows (issues list the rows), or a bad `title`',
          schema: z.union([CsvImportError, ErrorBody]),
        },
        413: {
          description: `payload_too_large: body over ${CSV_BODY_LIMIT / 1024 / 1024} MiB`,
          schema: ErrorBody,
        },
        415: { description: 'unsupported_media_type: Content-Type is not text/csv', schema: ErrorBody },
        ...syncJobErrors(
          'the import did not finish in time; `jobId` names the job, which may still complete',
        ),
      },
    },
    async (ctx) => {
      const body = await readRawBody(ctx, { limit: CSV_BODY_LIMIT, what: 'A CSV import' });
      const ws = ctx.state.auth.workspace;
      const title = ctx.state.query.title ?? null;
      // Idempotency-Key (docs/generation.md "Idempotency"): the fingerprint is the file's bytes and the title.
      const fingerprint = fingerprintBytes(body, JSON.stringify({ title }));
      await withIdempotency(
        ctx,
        deps.orm.em.fork(),
        { scope: 'importCourseFromCsv', fingerprint },
        async () => {
          const { result } = await runSyncJob(deps, {
            workspaceId: ws.id,
            kind: CSV_IMPORT_KIND,
            input: { title },
            blobs: { [CSV_BLOB]: { body, contentType: 'text/csv' } },
            timeoutMs: deps.cfg.CSV_IMPORT_TIMEOUT_MS,
            what: 'CSV import',
          });
          const course = await getCourse(deps.orm.em.fork(), ws.id, result.courseId);
          ctx.status = 201;
          ctx.set('Location', `/api/v1/courses/${encodeURIComponent(course.id)}`);
          ctx.body = { data: courseDto(course), issues: result.issues };
        },
      );
    },
  );
}
