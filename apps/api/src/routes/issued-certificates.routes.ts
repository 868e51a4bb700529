import { z } from 'zod';
import type { ApiRouter } from '../http/router.js';
import type { RouteDeps } from '../deps.js';
import {
  ErrorBody,
  IssuedCertificate,
  IssuedCertificatesQuery,
  Pagination,
  paged,
  parsePaging,
} from '@lectern/contracts';
import {
  certificatePdf,
  getIssuedCertificate,
  issuedCertificateDto,
  listIssuedCertificates,
} from '@lectern/certificates';
import { errorResponses } from './shared.js';

/** SPEC.md "Issued certificates (read-only)": every plan; there is no endpoint to create one. */
export function issuedCertificateRoutes(
  api: ApiRouter,
  deps: Pick<RouteDeps, 'orm' | 'bus' | 'storage' | 'log' | 'cfg'>,
) {
  const tags = ['Issued certificates'] as const;
  const em = () => deps.orm.em.fork();

  api.route(
    {
      method: 'get',
      path: '/issued-certificates',
      operationId: 'listIssuedCertificates',
      summary: 'List issued certificates (newest first, paged)',
      description: 'Every certificate issued in the workspace; limit and offset page the result.',
      tags,
      query: IssuedCertificatesQuery,
      responses: {
        200: {
          description: 'A page of issued certificates',
          schema: z.object({ data: z.array(IssuedCertificate), pagination: Pagination }),
        },
        ...errorResponses,
      },
    },
    async (ctx) => {
      const paging = parsePaging(ctx.query);
      const { rows, total } = await listIssuedCertificates(em(), ctx.state.auth.workspace.id, {
        courseId: ctx.state.query.courseId,
        identityId: ctx.state.query.identityId,
        ...paging,
      });
      ctx.body = paged(rows.map(issuedCertificateDto), total, paging);
    },
  );

  api.route(
    {
      method: 'get',
      path: '/issued-certificates/:serial',
      operationId: 'getIssuedCertificate',
      summary: 'Get one issued certificate by serial (any case, dashes optional)',
      description:
        "Serial lookup ignores case and dashes: `lc7kqmw3xd9tpa` finds `LC-7KQM-W3XD-9TPA`. Scoped to the caller's workspace; an unknown serial, or one of another workspace, is 404 `not_found`.",
      tags,
      responses: {
        200: { description: 'The certificate', schema: z.object({ data: IssuedCertificate }) },
        ...errorResponses,
      },
    },
    async (ctx) => {
      const row = await getIssuedCertificate(em(), ctx.state.auth.workspace.id, ctx.params.serial);
      ctx.body = { data: issuedCertificateDto(row) };
    },
  );

  api.route(
    {
      method: 'get',
      path: '/issued-certificates/:serial/pdf',
      operationId: 'getIssuedCertificatePdf',
      summary: 'Download the PDF of an issued certificate',
      description:
        'The PDF as issued (stored at issue; later template edits do not change it). Same serial rules as GET /issued-certificates/:serial.',
      tags,
      responses: {
        200: { description: 'The certificate PDF', contentType: 'application/pdf' },
        ...errorResponses,
        503: {
          description: 'service_unavailable: the object store or the job queue is unreachable',
          schema: ErrorBody,
        },
        504: {
          description: 'timeout: the PDF had to be rendered again and the worker did not answer in time',
          schema: ErrorBody,
        },
      },
    },
    async (ctx) => {
      const row = await getIssuedCertificate(em(), ctx.state.auth.workspace.id, ctx.params.serial);
      const pdf = await certificatePdf(deps, row);
      ctx.type = 'application/pdf';
      ctx.set('Content-Disposition', `attachment; filename="certificate-${row.serial}.pdf"`);
      ctx.body = pdf;
    },
  );
}
