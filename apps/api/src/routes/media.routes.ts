import { z } from 'zod';
import type { ApiRouter } from '../http/router.js';
import type { RouteDeps } from '../deps.js';
import { ErrorBody, Media, MediaList, PagingQuery, paged, parsePaging } from '@lectern/contracts';
import {
  MEDIA_MAX_BYTES,
  deleteMedia,
  getMedia,
  listMedia,
  mediaDto,
  parseStorageLimits,
  drainAfterAnswer,
  fingerprintUpload,
  uploadMedia,
} from '@lectern/media';
import { claimIdempotencyKey } from '@lectern/idempotency';
import { idempotencyScopeOf, replay } from '../http/idempotency.js';
import { errorResponses } from './shared.js';

/** SPEC.md "Media" (docs/media.md): upload, list, read and delete; every plan. */
export function mediaRoutes(
  api: ApiRouter,
  deps: Pick<RouteDeps, 'orm' | 'bus' | 'storage' | 'log' | 'cfg'>,
) {
  const tags = ['Media'] as const;
  const em = () => deps.orm.em.fork();
  const storageLimits = parseStorageLimits(deps.cfg.MEDIA_STORAGE_LIMITS);
  const ttl = deps.cfg.MEDIA_URL_TTL_SECONDS;
  const one = z.object({ data: Media });

  api.route(
    {
      method: 'post',
      path: '/media',
      operationId: 'uploadMedia',
      summary: 'Upload an image, video or audio file',
      description:
        '`multipart/form-data` with `file` (required) and `kind` (`image`, `video`, `audio`; default `image`; send it first), streamed into the ' +
        'private store as it arrives; one file and at most 8 fields of 1 KiB (more is a 400). ' +
        `At most ${MEDIA_MAX_BYTES.toLocaleString('en-US')} bytes (413 payload_too_large, at once when Content-Length says so). ` +
        'The bytes decide the type (PNG, JPEG, GIF, WebP, AVIF; MP4, WebM; MP3, M4A/AAC, Ogg, WAV): another type, an empty file or a ' +
        'type that does not belong to `kind` is a 400. The storage line of the plan counts every file: the upload that would cross it ' +
        'is a 403 plan_required naming the plan that holds it. `url` (`media://<id>`) is what a block stores; processing ' +
        '(variants, poster, duration) runs afterwards (`status`). `Idempotency-Key`: the same key, kind and file within 24 h ' +
        'answers 200 with the first answer and stores nothing; another file or kind with the key is 409 conflict.',
      tags,
      rawBody: {
        contentType: 'multipart/form-data',
        what: 'the file',
        description: 'A form with `file` and optionally `kind`.',
      },
      responses: {
        201: { description: 'The stored file', schema: one },
        200: {
          description:
            'Idempotent replay: the first answer to this Idempotency-Key (same kind and file), nothing stored',
          schema: one,
        },
        ...errorResponses,
        409: {
          description:
            'conflict: the Idempotency-Key was used with another file or kind in the last 24 h, or is in use',
          schema: ErrorBody,
        },
        400: {
          description: 'invalid_request: no `file`, a bad `kind`, an empty or refused file',
          schema: ErrorBody,
        },
        413: { description: 'payload_too_large: the file is over 25 MB', schema: ErrorBody },
        415: {
          description: 'unsupported_media_type: the body is not multipart/form-data',
          schema: ErrorBody,
        },
      },
    },
    async (ctx) => {
      const ws = ctx.state.auth.workspace;
      drainAfterAnswer(ctx.req, ctx.res);
      // Idempotency-Key (docs/generation.md "Idempotency"): the fingerprint is the kind and the file's bytes.
      const scope = idempotencyScopeOf(ctx, 'uploadMedia');
      const claim = scope ? await claimIdempotencyKey(deps.orm.em.fork(), scope) : null;
      if (claim?.state === 'stored') {
        const fingerprint = await fingerprintUpload(ctx.req, ctx.req.headers);
        return replay(ctx, claim.answerFor(fingerprint).body);
      }
      let fingerprint: string | undefined;
      let media;
      try {
        media = await uploadMedia(deps, ws, ctx.req, ctx.req.headers, {
          storageLimits,
          urlTtlSeconds: ttl,
          ...(claim ? { fingerprint: (f: string) => (fingerprint = f) } : {}),
        });
      } catch (err) {
        await claim?.released();
        throw err;
      }
      ctx.status = 201;
      ctx.set('Location', `${api.prefix}/media/${encodeURIComponent(media.id)}`);
      ctx.body = { data: media };
      await claim?.succeeded(ctx.body, fingerprint);
    },
  );

  api.route(
    {
      method: 'get',
      path: '/media',
      operationId: 'listMedia',
      summary: 'List uploaded media (newest first, paged)',
      description: 'Every file of the workspace with its processing state; limit and offset page the result.',
      tags,
      query: PagingQuery,
      responses: { 200: { description: 'A page of media', schema: MediaList }, ...errorResponses },
    },
    async (ctx) => {
      const paging = parsePaging(ctx.query);
      const { rows, total } = await listMedia(em(), ctx.state.auth.workspace.id, paging);
      ctx.body = paged(await Promise.all(rows.map((m) => mediaDto(deps.storage, m, ttl))), total, paging);
    },
  );

  api.route(
    {
      method: 'get',
      path: '/media/:id',
      operationId: 'getMedia',
      summary: 'Get one uploaded file',
      description:
        'The file with its processing state and a fresh `previewUrl`. Another workspace’s id is a 404.',
      tags,
      responses: { 200: { description: 'The file', schema: one }, ...errorResponses },
    },
    async (ctx) => {
      const m = await getMedia(em(), ctx.state.auth.workspace.id, ctx.params.id);
      ctx.body = { data: await mediaDto(deps.storage, m, ttl) };
    },
  );

  api.route(
    {
      method: 'delete',
      path: '/media/:id',
      operationId: 'deleteMedia',
      summary: 'Delete an uploaded file (frees its storage)',
      description:
        'Removes the file and everything derived from it and frees its bytes. Blocks that still reference it render a labelled placeholder.',
      tags,
      responses: { 204: { description: 'Deleted', schema: null }, ...errorResponses },
    },
    async (ctx) => {
      await deleteMedia(deps, ctx.state.auth.workspace.id, ctx.params.id);
      ctx.status = 204;
    },
  );
}
