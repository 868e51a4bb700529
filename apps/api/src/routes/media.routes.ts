import { z } from 'zod';
import busboy from 'busboy';
import { fileTypeFromFile } from 'file-type';
import { createWriteStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import type { Context } from 'koa';
import type { ApiRouter } from '../http/router.js';
import type { RouteDeps } from '../deps.js';
import { ErrorBody, Pagination, paged, parsePaging, PagingQuery, iso } from '@lectern/contracts';
import { AppError, invalid, notFound } from '@lectern/errors';
import {
  boundQuery,
  MEDIA_KINDS,
  MediaSchema,
  newId,
  type EntityManager,
  type Media,
  type MediaKind,
} from '@lectern/db';
import { checkStorageQuota } from '@lectern/plans';
import { errorResponses } from './shared.js';

/** SPEC Limits: a media upload is at most 25 MB (26,214,400 bytes of file). */
export const MEDIA_MAX_BYTES = 25 * 1024 * 1024;
/**
 * What the multipart framing around the file may add (boundaries, part headers, the `kind` field): a declared
 * Content-Length above MEDIA_MAX_BYTES + this is refused before a byte is read.
 */
const MULTIPART_OVERHEAD = 64 * 1024;
/** Lifetime of the `previewUrl` a listing or an upload answers with. */
export const MEDIA_PREVIEW_SECONDS = 5 * 60;

/**
 * The formats a browser plays, by the type the bytes say they are (file-type's names). Anything else — SVG, HTML,
 * PDF, executables, unknown bytes — is refused (docs/media.md "Formats").
 */
const ACCEPTED: Record<MediaKind, readonly string[]> = {
  image: ['image/png', 'image/jpeg', 'image/gif', 'image/webp', 'image/avif'],
  video: ['video/mp4', 'video/webm'],
  audio: ['audio/mpeg', 'audio/mp4', 'audio/x-m4a', 'audio/aac', 'audio/ogg', 'audio/opus', 'audio/wav'],
};

function kindOfMime(mime: string): MediaKind | null {
  for (const kind of MEDIA_KINDS) if (ACCEPTED[kind].includes(mime)) return kind;
  return null;
}

export const mediaKey = (workspaceId: string, id: string) => `media/${workspaceId}/${id}`;

const MediaDto = z
  .object({
    id: z.string(),
    url: z.string().meta({ description: 'Durable, opaque reference for blocks: `media://<id>`' }),
    previewUrl: z.string().meta({
      description: `Presigned GET of the uploaded bytes, valid ${MEDIA_PREVIEW_SECONDS / 60} minutes`,
    }),
    kind: z.enum(MEDIA_KINDS),
    mime: z.string(),
    bytes: z.number().int(),
    status: z.enum(['processing', 'ready', 'failed']),
    error: z.string().nullable(),
    createdAt: z.string(),
  })
  .meta({ id: 'Media' });

async function mediaDto(deps: Pick<RouteDeps, 'storage'>, m: Media): Promise<z.infer<typeof MediaDto>> {
  return {
    id: m.id,
    url: `media://${m.id}`,
    previewUrl: await deps.storage.presignPublicGet(mediaKey(m.workspaceId, m.id), MEDIA_PREVIEW_SECONDS),
    kind: m.kind,
    mime: m.mime,
    bytes: m.bytes,
    status: m.status,
    error: m.error,
    createdAt: iso(m.createdAt)!,
  };
}

function tooLarge(): AppError {
  return new AppError('payload_too_large', `A media file may be at most 25 MiB (26,214,400 bytes)`, {
    details: { limit: MEDIA_MAX_BYTES },
  });
}

interface Received {
  file: { path: string; bytes: number } | null;
  kind: string | undefined;
}

/**
 * Reads the multipart body with busboy as it arrives: the `file` part goes to a temp file under `dir` (memory stays
 * a few chunks whatever its size), counted as it goes; past MEDIA_MAX_BYTES the upload stops at once with a 413.
 * A temp file rather than a stream into the store: the loopback S3 server has no multipart upload and the minio
 * client holds a stream of unknown size in memory up to its part size, while a file of known size goes as one
 * signed PUT (Storage.putFile) — and nothing reaches the store before the bytes are checked.
 */
async function receive(ctx: Context, dir: string): Promise<Received> {
  let bb: busboy.Busboy;
  try {
    bb = busboy({
      headers: ctx.req.headers,
      // busboy reports `limit` once a file reaches fileSize; one byte of slack lets exactly 25 MiB through.
      limits: { files: 1, fileSize: MEDIA_MAX_BYTES + 1, fields: 8, fieldSize: 1024, parts: 16 },
    });
  } catch {
    ctx.req.resume();
    throw invalid('The body is not multipart/form-data with a boundary', [
      { code: 'malformed', path: [], message: 'multipart/form-data with a boundary expected' },
    ]);
  }
  const out: Received = { file: null, kind: undefined };
  const writes: Promise<void>[] = [];
  let failure: AppError | null = null;
  const done = new Promise<void>((resolve, reject) => {
    bb.on('field', (name, value) => {
      if (name === 'kind') out.kind = value;
    });
    bb.on('file', (name, stream) => {
      if (name !== 'file' || out.file) {
        stream.resume();
        return;
      }
      const file = { path: path.join(dir, 'upload'), bytes: 0 };
      out.file = file;
      stream.on('data', (c: Buffer) => (file.bytes += c.length));
      stream.on('limit', () => {
        failure = tooLarge();
        ctx.req.unpipe(bb);
        ctx.req.resume();
        reject(failure);
      });
      const write = pipeline(stream, createWriteStream(file.path));
      // Awaited below on success; on a refusal nobody awaits it, and the temp dir goes anyway.
      write.catch(() => undefined);
      writes.push(write);
    });
    bb.on('close', resolve);
    bb.on('error', (err) =>
      reject(
        failure ??
          invalid('The multipart body is malformed', [
            { code: 'malformed', path: [], message: (err as Error).message },
          ]),
      ),
    );
    ctx.req.on('aborted', () =>
      reject(invalid('The upload was interrupted before the body was complete', [])),
    );
  });
  ctx.req.pipe(bb);
  await done;
  await Promise.all(writes);
  if (out.file && out.file.bytes > MEDIA_MAX_BYTES) throw tooLarge();
  return out;
}

/** Bytes the workspace's media take now (inside `em`'s transaction when there is one). */
export async function storageUsed(em: EntityManager, workspaceId: string): Promise<number> {
  const rows = await boundQuery<{ used: string | number }>(
    em,
    'select coalesce(sum(bytes), 0) as used from media where workspace_id = ?',
    [workspaceId],
  );
  return Number(rows[0]?.used ?? 0);
}

/** Media routes (docs/media.md): upload, list, read, delete. */
export function mediaRoutes(api: ApiRouter, deps: Pick<RouteDeps, 'orm' | 'storage' | 'cfg' | 'log'>) {
  const tags = ['Media'] as const;
  const em = () => deps.orm.em.fork();
  const one = z.object({ data: MediaDto });

  api.route(
    {
      method: 'post',
      path: '/media',
      operationId: 'uploadMedia',
      summary: 'Upload an image, video or audio file',
      description:
        '`multipart/form-data` with `file` (required) and `kind` (`image` default, `video`, `audio`). The bytes decide ' +
        'the type (PNG, JPEG, GIF, WebP, AVIF; MP4, WebM; MP3, M4A/AAC, Ogg, WAV), never the filename or the part’s ' +
        'Content-Type: a file of another kind, SVG, HTML, PDF, executables and empty files are 400. ' +
        'At most 25 MiB (413 payload_too_large, at once when Content-Length says so; nothing is kept). ' +
        'The storage line of the plan counts every media byte (403 plan_required naming the plan that fits). ' +
        '201: `url` (`media://<id>`) is what blocks store; `previewUrl` is a presigned GET valid 5 minutes.',
      tags,
      rawBody: {
        contentType: 'multipart/form-data',
        what: 'the file',
        description: 'Form fields `file` and `kind`',
      },
      responses: {
        201: { description: 'Stored', schema: one },
        ...errorResponses,
        400: {
          description:
            'invalid_request: no `file` (issue at ["file"]), unknown `kind` (["kind"]), a type not accepted or not of `kind`, an empty file',
          schema: ErrorBody,
        },
        403: {
          description: 'plan_required: the upload would cross the plan’s storage line; or insufficient_scope',
          schema: ErrorBody,
        },
        413: { description: 'payload_too_large: file over 25 MiB', schema: ErrorBody },
        415: { description: 'unsupported_media_type: not multipart/form-data', schema: ErrorBody },
      },
    },
    async (ctx) => {
      const ws = ctx.state.auth.workspace;
      const declared = Number(ctx.get('content-length') || NaN);
      if (declared > MEDIA_MAX_BYTES + MULTIPART_OVERHEAD) {
        ctx.req.resume();
        throw tooLarge();
      }
      const limit = deps.cfg.MEDIA_STORAGE_LIMIT_BYTES;
      // Early refusal: a workspace already at its line need not send the bytes (the exact check is below).
      checkStorageQuota(ws.plan, await storageUsed(em(), ws.id), 1, limit);

      const dir = await mkdtemp(path.join(tmpdir(), 'lectern-media-'));
      try {
        const got = await receive(ctx, dir);
        const kind = got.kind === undefined || got.kind === '' ? 'image' : got.kind;
        if (!(MEDIA_KINDS as readonly string[]).includes(kind)) {
          throw invalid('kind must be image, video or audio', [
            { code: 'invalid_enum_value', path: ['kind'], message: `expected image, video or audio` },
          ]);
        }
        if (!got.file) {
          throw invalid('The form has no `file` part', [
            { code: 'required', path: ['file'], message: 'a file part named `file` is required' },
          ]);
        }
        if (got.file.bytes === 0) {
          throw invalid('The file is empty', [
            { code: 'empty', path: ['file'], message: 'the file is empty' },
          ]);
        }
        const sniffed = await fileTypeFromFile(got.file.path);
        const mime = sniffed?.mime ?? 'unknown';
        const sniffedKind = kindOfMime(mime);
        if (!sniffedKind) {
          throw invalid(
            `The file's bytes are ${mime === 'unknown' ? 'of no accepted format' : mime}, which is not accepted`,
            [
              {
                code: 'unsupported_type',
                path: ['file'],
                message: `accepted: ${Object.values(ACCEPTED).flat().join(', ')}`,
              },
            ],
          );
        }
        if (sniffedKind !== kind) {
          throw invalid(`The file is ${mime} (${sniffedKind}), not ${kind}`, [
            {
              code: 'kind_mismatch',
              path: ['file'],
              message: `the file is ${mime}, which is not a ${kind} type`,
            },
          ]);
        }

        const id = newId('med');
        const key = mediaKey(ws.id, id);
        await deps.storage.putFile(key, got.file.path, mime);
        let row: Media;
        try {
          // The exact check, serialized per workspace by its row lock: two uploads at the edge cannot both fit.
          row = await em().transactional(async (tx) => {
            await boundQuery(tx, 'select 1 from workspaces where id = ? for update', [ws.id]);
            checkStorageQuota(ws.plan, await storageUsed(tx, ws.id), got.file!.bytes, limit);
            const m = tx.create(MediaSchema, {
              id,
              workspaceId: ws.id,
              kind: sniffedKind,
              mime,
              bytes: got.file!.bytes,
              status: 'ready',
              error: null,
              createdAt: new Date(),
            });
            return m;
          });
        } catch (err) {
          await deps.storage.remove(key).catch(() => undefined);
          throw err;
        }
        ctx.status = 201;
        ctx.set('Location', `/api/v1/media/${id}`);
        ctx.body = { data: await mediaDto(deps, row) };
      } catch (err) {
        ctx.req.resume();
        throw err;
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    },
  );

  api.route(
    {
      method: 'get',
      path: '/media',
      operationId: 'listMedia',
      summary: 'List media files (newest first, paged)',
      description:
        'Each with its processing state and a fresh `previewUrl`; limit and offset page the result.',
      tags,
      query: PagingQuery,
      responses: {
        200: {
          description: 'A page of media files',
          schema: z.object({ data: z.array(MediaDto), pagination: Pagination }),
        },
        ...errorResponses,
      },
    },
    async (ctx) => {
      const paging = parsePaging(ctx.query);
      const [rows, total] = await em().findAndCount(
        MediaSchema,
        { workspaceId: ctx.state.auth.workspace.id },
        { orderBy: { createdAt: 'desc', id: 'desc' }, limit: paging.limit, offset: paging.offset },
      );
      ctx.body = paged(await Promise.all(rows.map((m) => mediaDto(deps, m))), total, paging);
    },
  );

  api.route(
    {
      method: 'get',
      path: '/media/:id',
      operationId: 'getMedia',
      summary: 'Get a media file',
      description: 'Its record and a fresh `previewUrl`. Another workspace’s id is a 404.',
      tags,
      responses: { 200: { description: 'The media file', schema: one }, ...errorResponses },
    },
    async (ctx) => {
      const m = await em().findOne(MediaSchema, {
        id: ctx.params.id,
        workspaceId: ctx.state.auth.workspace.id,
      });
      if (!m) throw notFound('Media');
      ctx.body = { data: await mediaDto(deps, m) };
    },
  );

  api.route(
    {
      method: 'delete',
      path: '/media/:id',
      operationId: 'deleteMedia',
      summary: 'Delete a media file and free its storage',
      description:
        'The object and its record go; its bytes no longer count against the plan. Blocks that still refer to it ' +
        'render a labelled placeholder.',
      tags,
      responses: { 204: { description: 'Deleted', schema: null }, ...errorResponses },
    },
    async (ctx) => {
      const wsId = ctx.state.auth.workspace.id;
      const e = em();
      const m = await e.findOne(MediaSchema, { id: ctx.params.id, workspaceId: wsId });
      if (!m) throw notFound('Media');
      await e.nativeDelete(MediaSchema, { id: m.id, workspaceId: wsId });
      await deps.storage.remove(mediaKey(wsId, m.id)).catch((err: unknown) => {
        deps.log.warn({ err, mediaId: m.id }, 'media object not removed; the record is gone');
      });
      ctx.status = 204;
    },
  );
}
