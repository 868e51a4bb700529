import { z } from 'zod';
import type { Context, Next } from 'koa';
import type { ApiRouter } from '../http/router.js';
import type { EntityManager } from '@lectern/db';
import { AppError, isAppError, HTTP_ERRORS } from '@lectern/errors';
import {
  ErrorBody,
  EventBatch,
  EventBatchResult,
  OpenRun,
  OpenRunResult,
  PollResults,
  RetakeResult,
} from '@lectern/contracts';
import {
  applyBatch,
  checkEmbed,
  frameAncestors as frameAncestorsOfAccess,
  hitAddressLimit,
  openRun,
  pollResults,
  retakeRun,
  runForCertificate,
  type RunTokens,
  type TrackingTokens,
  type SecretBox,
  type AnonymousLimits,
  type OpenRunPorts,
} from '@lectern/learner-runs';
import { issueCertificate, verifyUrl, type IssueDeps } from '@lectern/certificates';
import type { ResponseSpec } from '../http/router.js';
import { EMBED_STYLE_HASHES, renderEmbedPage, renderErrorPage } from './embed-page.js';
import { ANY_FRAME_ANCESTOR, newNonce, originOf, setPageHeaders } from '../http/page-security.js';

export const PLAYER_PREFIX = '/player/v1';
export const PLAYER_TAG = 'Player API';

/** What the player routes need from the process; built by the app wiring (app.ts). */
export interface PlayerDeps {
  em: () => EntityManager;
  relay: { kick(): void };
  /** Built on first use: a process without the secret-encryption key fails only when the player is used. */
  keys: () => { secrets: SecretBox; tokens: RunTokens; tracking: TrackingTokens; answerKeySecret: string };
  limits: {
    opensPerMinutePerAddress: number;
    requestsPerMinutePerRun: number;
    anonymousOpens: AnonymousLimits;
  };
  publicUrl: string;
  /** Signs `media://` references in the served course (docs/media.md "Serving"). */
  mediaUrl?: OpenRunPorts['mediaUrl'];
  /** The origin signed media load from, allowed by the embed page's policy (`mediaOrigin` of setPageHeaders). */
  mediaOrigin?: string;
  /** The player bundle's URLs for the embed page; null when the bundle is not built. */
  assets?: () => { js: string; css: string } | null;
  /** What issuing a certificate needs (the runtime: database, bus to the render worker, object store). */
  certificates: IssueDeps;
}

const err = (description: string): ResponseSpec => ({ description, schema: ErrorBody });
const playerErrors = {
  400: err('invalid_request: the body fails validation (with issues)'),
  401: err('unauthorized: the identity token or run token is refused; the message says why'),
  402: err(
    'plan_required: the workspace may not serve learners now (Sandbox views spent, invoice past grace)',
  ),
  404: err('not_found: no published course (or run) with that id'),
  413: err('payload_too_large: body over the cap'),
  429: err('rate_limited: per-address or per-run limit (Retry-After seconds)'),
  500: err('internal_error'),
};

/** The Player API takes only bodies labelled JSON (its router is strict, app.ts). */
const UNSUPPORTED_BODY = err(
  'unsupported_media_type: the body is not sent as Content-Type: application/json',
);

/** Opens: 16 KiB (an identity token is at most 8 KiB). Batches: 100 events with answers of up to 16 KiB each. */
const OPEN_BODY_LIMIT = 16 * 1024;
const BATCH_BODY_LIMIT = 512 * 1024;

const lastOf = z
  .union([z.string(), z.array(z.string())])
  .optional()
  .transform((v) => (Array.isArray(v) ? v[v.length - 1] : v));

const BEARER = /^Bearer ([A-Za-z0-9_.-]+)$/;

/**
 * `Authorization: Bearer <run token>` → the run it is for (401 otherwise). With `query: true` (the certificate
 * download only) the token may instead ride in `?token=`, so the download works as a plain link or a form
 * submit; a header, when sent, wins and must be well formed.
 */
function runAuth(deps: PlayerDeps, opts: { query?: boolean } = {}) {
  return async (ctx: Context, next: Next) => {
    const header = ctx.get('authorization');
    // Runs before the query is validated: read it raw (a repeated parameter counts by its last value).
    const raw = opts.query && header === '' ? ctx.query.token : undefined;
    const fromQuery = Array.isArray(raw) ? raw[raw.length - 1] : raw;
    const token = header !== '' ? BEARER.exec(header)?.[1] : fromQuery;
    if (!token)
      throw new AppError(
        'unauthorized',
        opts.query
          ? 'Send Authorization: Bearer <runToken> or ?token=<runToken> (from POST /player/v1/runs)'
          : 'Send Authorization: Bearer <runToken> (from POST /player/v1/runs)',
      );
    ctx.state.run = await deps.keys().tokens.verify(token, ctx.params.completionId);
    await next();
  };
}

/**
 * A certificate's PDF as a download: private and never cached, named for the learner's disk, with the serial and
 * its verification page in `Certificate-Serial` and `Certificate-Verify-Url` (exposed to other origins), so a
 * player can show the verify link beside the download without a second call.
 */
export function sendCertificatePdf(
  ctx: Context,
  certificate: { serial: string; course_title: string },
  pdf: Buffer,
  publicUrl: string,
): void {
  ctx.set('Cache-Control', 'private, no-store');
  ctx.set('X-Content-Type-Options', 'nosniff');
  ctx.set('Certificate-Serial', certificate.serial);
  ctx.set('Certificate-Verify-Url', verifyUrl(publicUrl, certificate.serial));
  ctx.attachment(certificateFileName(certificate.course_title, certificate.serial));
  ctx.type = 'application/pdf';
  ctx.body = pdf;
}

/** A download name a browser keeps as it is: the course title (path and control characters dropped) and the serial. */
export function certificateFileName(courseTitle: string, serial: string): string {
  const title = courseTitle
    .replace(/[\p{Cc}\p{Cf}\\/:*?"<>|]+/gu, ' ')
    .replace(/\s+/g, ' ')
    .trim()
    .slice(0, 80)
    .trim();
  return title ? `${title} - certificate ${serial}.pdf` : `certificate ${serial}.pdf`;
}

/**
 * The player surface: GET /embed/:courseId (HTML) and the Player API under /player/v1 (JSON, no API key,
 * CORS for any origin — set in app.ts). Decisions: docs/player-api.md.
 */
export function playerRoutes(player: ApiRouter, embed: ApiRouter, deps: PlayerDeps) {
  const tags = [PLAYER_TAG] as const;
  const playerApiBase = `${deps.publicUrl}${PLAYER_PREFIX}`;
  const ownOrigin = new URL(deps.publicUrl).origin;
  const publicOrigin = originOf(deps.publicUrl);

  embed.route(
    {
      method: 'get',
      path: '/:courseId',
      operationId: 'getEmbedPage',
      summary: 'The embed page of a published course (HTML that boots the player)',
      description:
        'Answers 200 with the player page for a published course; 404 (identical for a draft, unknown or ' +
        "another workspace's course), 401 for an identity token that does not verify, 402 when the workspace " +
        'may not serve; all as plain HTML. Counts no view: the player counts one when it opens the run.',
      tags,
      auth: 'public',
      query: z.object({
        identity: lastOf.meta({ description: 'Identity token (HS256 JWT) signed with an embed key' }),
        lang: lastOf.meta({ description: 'Preferred locale (BCP-47)' }),
      }),
      responses: {
        200: { description: 'The player page', contentType: 'text/html' },
        401: { description: 'Identity token refused (HTML)', contentType: 'text/html' },
        402: { description: 'Course unavailable (HTML)', contentType: 'text/html' },
        404: { description: 'Course not found (HTML)', contentType: 'text/html' },
        429: { description: 'Too many opens from this address (HTML)', contentType: 'text/html' },
      },
    },
    async (ctx) => {
      const { identity, lang } = ctx.state.query;
      ctx.set('Cache-Control', 'no-store');
      const styleNonce = newNonce();
      // Who may frame the page (the player page and its error pages alike): anyone until the course's workspace
      // is known, then the sites it lists (player settings' allowedOrigins).
      let frameAncestors = ANY_FRAME_ANCESTOR;
      ctx.type = 'html';
      try {
        await hitAddressLimit(deps.em(), ctx.ip, deps.limits.opensPerMinutePerAddress);
        const published = await checkEmbed(
          { em: deps.em(), secrets: deps.keys().secrets },
          ctx.params.courseId,
          identity || undefined,
        );
        frameAncestors = frameAncestorsOfAccess(published.access);
        ctx.body = renderEmbedPage({
          courseId: ctx.params.courseId,
          identity: identity || null,
          lang: lang || null,
          playerApiBase,
          assets: deps.assets?.() ?? null,
          styleNonce,
        });
      } catch (caught) {
        if (
          !isAppError(caught) ||
          !['not_found', 'unauthorized', 'plan_blocked', 'rate_limited'].includes(caught.code)
        )
          throw caught;
        ctx.status = HTTP_ERRORS[caught.code].status;
        if (caught.retryAfter !== undefined) ctx.set('Retry-After', String(caught.retryAfter));
        ctx.body = renderErrorPage(ctx.status);
      }
      setPageHeaders(ctx, {
        frameAncestors,
        styleHashes: EMBED_STYLE_HASHES,
        styleNonce,
        publicOrigin,
        mediaOrigin: deps.mediaOrigin,
        // The identity token rides in the URL: never pass it on to whatever the page links to.
        referrerPolicy: 'no-referrer',
      });
    },
  );

  player.route(
    {
      method: 'post',
      path: '/runs',
      operationId: 'openRun',
      summary: 'Open or resume the run of a learner (201 new, 200 resumed)',
      description:
        'Counts one course view and emits course.viewed (and identity.created for a learner seen the first ' +
        'time). Without `identity` the run is anonymous and keyed by `anonymousId`. A SCORM package exported ' +
        'with track=1 sends `tracking` instead: its course-bound token (401 when it does not verify, names ' +
        "another course or was made before the course's tracking secret was rotated) and the LMS learner, a " +
        "learner of that course's packages only (never one of your signed learners); the run has source `scorm`. " +
        'A workspace may restrict opens to listed origins (403 origin_not_allowed, nothing counted) and refuse ' +
        'anonymous runs (401, nothing counted); anonymous opens are also limited per address and per anonymousId (429).',
      tags,
      auth: 'public',
      body: OpenRun,
      bodyLimit: OPEN_BODY_LIMIT,
      responses: {
        200: { description: 'Resumed', schema: z.object({ data: OpenRunResult }) },
        201: { description: 'Opened', schema: z.object({ data: OpenRunResult }) },
        ...playerErrors,
        401: err(
          'unauthorized: the identity token or tracking token is refused, or the workspace refuses anonymous runs; the message says why',
        ),
        403: err(
          "origin_not_allowed: the request's Origin is not one of the workspace's allowedOrigins (player settings)",
        ),
        409: err(
          'conflict: the run of this learner and course was recorded with another source (a learner reported ' +
            'by an LMS before LMS learners had a scope of their own)',
        ),
        415: UNSUPPORTED_BODY,
      },
    },
    async (ctx) => {
      await hitAddressLimit(deps.em(), ctx.ip, deps.limits.opensPerMinutePerAddress);
      const { secrets, tokens, tracking, answerKeySecret } = deps.keys();
      const { created, result } = await openRun(
        {
          em: deps.em(),
          secrets,
          tokens,
          tracking,
          answerKeySecret,
          verifyUrl: (serial) => verifyUrl(deps.publicUrl, serial),
          mediaUrl: deps.mediaUrl,
          client: {
            origin: ctx.get('origin') || undefined,
            address: ctx.ip,
            ownOrigin,
            anonymousLimits: deps.limits.anonymousOpens,
          },
        },
        ctx.state.body,
      );
      deps.relay.kick();
      ctx.status = created ? 201 : 200;
      ctx.body = { data: result };
    },
  );

  player.route(
    {
      method: 'post',
      path: '/runs/:completionId/events',
      operationId: 'reportRunEvents',
      summary: 'Report a batch of screen changes, answers and time',
      description:
        'Up to 100 events. A repeated batchId answers as the first time and applies nothing. Arriving at the ' +
        'last screen finishes the run (`result`).',
      tags,
      auth: 'runToken',
      body: EventBatch,
      bodyLimit: BATCH_BODY_LIMIT,
      responses: {
        200: { description: 'Applied (or already applied)', schema: z.object({ data: EventBatchResult }) },
        ...playerErrors,
        415: UNSUPPORTED_BODY,
      },
    },
    runAuth(deps),
    async (ctx) => {
      const data = await applyBatch(
        {
          em: deps.em(),
          answerKeySecret: deps.keys().answerKeySecret,
          perRunPerMinute: deps.limits.requestsPerMinutePerRun,
        },
        ctx.state.run as { completionId: string; workspaceId: string },
        ctx.state.body,
      );
      deps.relay.kick();
      ctx.body = { data };
    },
  );

  player.route(
    {
      method: 'post',
      path: '/runs/:completionId/retake',
      operationId: 'retakeRun',
      summary: 'Start a new pass of a finished run',
      description:
        'Clears answers and position; the run stays `completed` with its last result until the next finish. ' +
        '409 when the run was never finished.',
      tags,
      auth: 'runToken',
      responses: {
        200: { description: 'The run, ready for a new pass', schema: z.object({ data: RetakeResult }) },
        409: err('conflict: the run has not been finished yet'),
        ...playerErrors,
      },
    },
    runAuth(deps),
    async (ctx) => {
      const completion = await retakeRun(
        {
          em: deps.em(),
          answerKeySecret: deps.keys().answerKeySecret,
          perRunPerMinute: deps.limits.requestsPerMinutePerRun,
        },
        ctx.state.run as { completionId: string; workspaceId: string },
      );
      ctx.body = { data: { completion } };
    },
  );

  player.route(
    {
      method: 'get',
      path: '/runs/:completionId/polls/:blockId',
      operationId: 'getRunPollResults',
      summary: "A poll's results, after this run voted in it",
      description:
        'The votes for each option of a poll over every run of the course, when the course shows them ' +
        '(`showResults: true` on the poll block) and this run has voted. 403 `forbidden` with `reason` ' +
        '`results_hidden` or `not_voted`; 404 when the course has no such poll. See docs/player-api.md.',
      tags,
      auth: 'runToken',
      responses: {
        200: { description: 'The counts', schema: z.object({ data: PollResults }) },
        403: err(
          'forbidden: the poll does not show results, or this run has not voted; `details.reason` says which',
        ),
        ...playerErrors,
      },
    },
    runAuth(deps),
    async (ctx) => {
      const data = await pollResults(
        { em: deps.em(), perRunPerMinute: deps.limits.requestsPerMinutePerRun },
        ctx.state.run as { completionId: string; workspaceId: string },
        ctx.params.blockId,
      );
      ctx.body = { data };
    },
  );

  player.route(
    {
      method: 'get',
      path: '/runs/:completionId/certificate',
      operationId: 'getRunCertificate',
      summary: 'Download the certificate of a finished, passing run (the first download issues it)',
      description:
        'The run token goes in `Authorization: Bearer <runToken>` or, so the download works as a plain link, in ' +
        '`?token=`. The first download issues the certificate (a serial, certificate.issued once); later ' +
        'downloads return the same certificate and PDF and emit nothing; racing downloads still issue one. ' +
        '403 `forbidden` (with `reason`) when the run is not finished, did not meet the pass mark, is anonymous, ' +
        'or the learner has no name on record. See docs/certificates.md.',
      tags,
      auth: 'runToken',
      query: z.object({
        token: lastOf.meta({
          description: 'The run token, when it cannot go in the Authorization header (a plain link)',
        }),
      }),
      responses: {
        200: {
          description:
            'The certificate PDF (attachment); `Certificate-Serial` and `Certificate-Verify-Url` name the certificate',
          contentType: 'application/pdf',
        },
        401: playerErrors[401],
        403: err(
          'forbidden: no certificate for this run: not finished, pass mark not met, anonymous run, or no learner name; `details.reason` says which',
        ),
        404: err('not_found: the run no longer exists (deleted with its learner)'),
        429: playerErrors[429],
        500: playerErrors[500],
        503: err('service_unavailable: the object store or the job queue is unreachable'),
        504: err('timeout: the render worker did not answer in time; try again'),
      },
    },
    runAuth(deps, { query: true }),
    async (ctx) => {
      const subject = await runForCertificate(
        { em: deps.em(), perRunPerMinute: deps.limits.requestsPerMinutePerRun },
        ctx.state.run as { completionId: string; workspaceId: string },
      );
      const { certificate, pdf } = await issueCertificate(deps.certificates, subject);
      // The token may be in the URL: never pass it on, never keep the answer in a shared cache.
      ctx.set('Referrer-Policy', 'no-referrer');
      sendCertificatePdf(ctx, certificate, pdf, deps.publicUrl);
    },
  );
}
