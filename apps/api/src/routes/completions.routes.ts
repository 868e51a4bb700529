import { z } from 'zod';
import type { ApiRouter } from '../http/router.js';
import type { EntityManager } from '@lectern/db';
import {
  ErrorBody,
  IssuedCertificate,
  Attempt,
  Completion,
  CompletionWithAnswers,
  CompletionsQuery,
  Pagination,
  PagingQuery,
  paged,
  parsePaging,
} from '@lectern/contracts';
import { getCompletion, listAttempts, listCompletions, runForCertificate } from '@lectern/learner-runs';
import { AppError } from '@lectern/errors';
import {
  issueCertificate,
  issueCertificateRecord,
  issuedCertificateDto,
  type IssueDeps,
} from '@lectern/certificates';
import { errorResponses } from './shared.js';
import { sendCertificatePdf } from './player.routes.js';

/**
 * Completions and attempts: read-only, recorded by the player (docs/player-api.md); and a run's certificate for
 * the customer's backend, issued on the first call like the learner's download (docs/certificates.md).
 */
export function completionRoutes(
  api: ApiRouter,
  deps: {
    em: () => EntityManager;
    certificates: IssueDeps;
    publicUrl: string;
    /** Keys the learner-facing item ids, so match and ranking answers can be read back (`answerItems`). */
    answerKeySecret: () => string;
  },
) {
  const tags = ['Completions'] as const;

  api.route(
    {
      method: 'get',
      path: '/completions',
      operationId: 'listCompletions',
      summary: 'List runs (newest first by startedAt; by completedAt with completedAfter), paged',
      description: 'Includes runs in progress. Answers are only on the single-run endpoint.',
      tags,
      query: CompletionsQuery,
      responses: {
        200: {
          description: 'A page of completions',
          schema: z.object({ data: z.array(Completion), pagination: Pagination }),
        },
        ...errorResponses,
      },
    },
    async (ctx) => {
      const paging = parsePaging(ctx.query);
      const { rows, total } = await listCompletions(
        deps.em(),
        ctx.state.auth.workspace.id,
        ctx.state.query,
        paging,
      );
      ctx.body = paged(rows, total, paging);
    },
  );

  api.route(
    {
      method: 'get',
      path: '/completions/:id',
      operationId: 'getCompletion',
      summary: 'One run, with its answers',
      description:
        'The run with its answers; 404 when it is not in this workspace. Any plan; read-only keys may read. ' +
        '`answerItems` reads match and ranking answers: beside each keyed id the learner sent, the course item id ' +
        'and text (docs/player-api.md "Readable answers").',
      tags,
      responses: {
        200: { description: 'The completion', schema: z.object({ data: CompletionWithAnswers }) },
        ...errorResponses,
      },
    },
    async (ctx) => {
      ctx.body = {
        data: await getCompletion(deps.em(), ctx.state.auth.workspace.id, ctx.params.id, {
          answerKeySecret: deps.answerKeySecret,
        }),
      };
    },
  );

  api.route(
    {
      method: 'get',
      path: '/completions/:id/attempts',
      operationId: 'listCompletionAttempts',
      summary: 'The finishes of one run, newest first, paged',
      description: 'One entry per finished pass, so a retake keeps the earlier results.',
      tags,
      query: PagingQuery,
      responses: {
        200: {
          description: 'A page of attempts',
          schema: z.object({ data: z.array(Attempt), pagination: Pagination }),
        },
        ...errorResponses,
      },
    },
    async (ctx) => {
      const paging = parsePaging(ctx.query);
      const { rows, total } = await listAttempts(
        deps.em(),
        ctx.state.auth.workspace.id,
        ctx.params.id,
        paging,
      );
      ctx.body = paged(rows, total, paging);
    },
  );

  api.route(
    {
      method: 'get',
      path: '/completions/:id/certificate',
      operationId: 'getCompletionCertificate',
      summary:
        "The run's certificate, issued on the first call (PDF, or its record with Accept: application/json)",
      description:
        "For the customer's backend: the same certificate the learner downloads from the player, under the same " +
        'rules and events — the first call issues it (a serial, certificate.issued once), later calls return the ' +
        "same certificate. A certificate once issued stays the run's whatever the run did since. " +
        '`Accept: application/json` answers the issued record (`data`: Issued certificate) without rendering the ' +
        'PDF; otherwise (`application/pdf`, `*/*` or no Accept) the PDF. A write key is required even though this ' +
        'is a GET, because the first call issues. 403 `forbidden` with `reason` (`not_finished`, `not_passed`, ' +
        '`anonymous`, `no_name`) when the run earns none; 404 for a run of another workspace.',
      tags,
      responses: {
        200: {
          description:
            'The certificate PDF (attachment; `Certificate-Serial` and `Certificate-Verify-Url` headers), or with ' +
            'Accept: application/json its record',
          contentType: 'application/pdf',
          alternatives: { 'application/json': z.object({ data: IssuedCertificate }) },
        },
        ...errorResponses,
        403: {
          description:
            'insufficient_scope (read-only key), or forbidden: the run earns no certificate; `reason` says why',
          schema: ErrorBody,
        },
        503: {
          description: 'service_unavailable: the object store or the job queue is unreachable',
          schema: ErrorBody,
        },
        504: {
          description: 'timeout: the render worker did not answer in time; try again',
          schema: ErrorBody,
        },
      },
    },
    async (ctx) => {
      // Read-only keys may GET everything else; this GET may issue a certificate and emit its event.
      if (ctx.state.auth.scope !== 'write')
        throw new AppError(
          'insufficient_scope',
          "This API key is read-only; a run's first certificate download issues it, so use a key with write access",
        );
      // The key's own rate limit bounds the backend; the learner's per-run window is theirs (0: not judged here).
      const subject = await runForCertificate(
        { em: deps.em(), perRunPerMinute: 0 },
        { completionId: ctx.params.id, workspaceId: ctx.state.auth.workspace.id },
      );
      ctx.vary('Accept');
      if (ctx.accepts('application/pdf', 'application/json') === 'application/json') {
        const { certificate } = await issueCertificateRecord(deps.certificates, subject);
        ctx.set('Cache-Control', 'private, no-store');
        ctx.body = { data: issuedCertificateDto(certificate) };
        return;
      }
      const { certificate, pdf } = await issueCertificate(deps.certificates, subject);
      sendCertificatePdf(ctx, certificate, pdf, deps.publicUrl);
    },
  );
}
