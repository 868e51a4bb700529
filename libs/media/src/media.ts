import { fileTypeFromBuffer } from 'file-type';
import { createHash } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import type { Readable } from 'node:stream';
import { AppError } from '@lectern/errors';
import {
  boundQuery,
  newId,
  type EntityManager,
  type Media,
  type MediaKind,
  type MikroORM,
} from '@lectern/db';
import { MEDIA_KINDS } from '@lectern/db';
import type { Bus } from '@lectern/bus';
import type { Logger } from '@lectern/log';
import type { Storage } from '@lectern/storage';
import type { PlanName } from '@lectern/plans';
import { iso, type MediaDto } from '@lectern/contracts';
import { jobKindSpec, jobSubject, recordJob } from '@lectern/jobs';
import { MEDIA_MAX_BYTES, SNIFF_BYTES, checkSniffed } from './formats.js';
import { receiveUpload, type ReceivedUpload } from './receive.js';
import { freeStorage, reserveStorage, settleStorage, type StorageLimits } from './quota.js';

/** The durable reference a block stores: `media://<id>` (docs/media.md "References"). */
export const MEDIA_SCHEME = 'media://';
export const mediaRef = (id: string) => `${MEDIA_SCHEME}${id}`;
/** The id in a `media://` reference, or null when `url` is not one (an https URL, say). */
export function mediaIdOf(url: unknown): string | null {
  if (typeof url !== 'string' || !url.startsWith(MEDIA_SCHEME)) return null;
  const id = url.slice(MEDIA_SCHEME.length);
  return /^med_[A-Za-z0-9]{1,64}$/.test(id) ? id : '';
}

export interface MediaVariantRecord {
  role: 'variant' | 'poster';
  key: string;
  width: number;
  height: number;
  contentType: string;
  bytes: number;
}

/** The poster frame processing made of a video (docs/media.md "Processing"), if it made one. */
export function posterFrameOf(m: Pick<Media, 'variants'>): MediaVariantRecord | undefined {
  return (m.variants as MediaVariantRecord[]).find((v) => v.role === 'poster');
}

/** Slack over the file limit a declared Content-Length may carry for the multipart framing (boundaries, part headers). */
export const MULTIPART_SLACK = 64 * 1024;

export interface UploadDeps {
  orm: MikroORM;
  bus: Bus;
  log: Logger;
  storage: Pick<Storage, 'putStream' | 'remove' | 'presignGet'>;
}

const tooLarge = () =>
  new AppError(
    'payload_too_large',
    `A media upload may be at most ${MEDIA_MAX_BYTES.toLocaleString('en-US')} bytes (25 MB)`,
    {
      details: { limit: MEDIA_MAX_BYTES },
    },
  );

function rowToMedia(r: Record<string, unknown>): Media {
  return {
    id: r.id as string,
    workspaceId: r.workspace_id as string,
    kind: r.kind as MediaKind,
    contentType: r.content_type as string,
    bytes: String(r.bytes),
    objectKey: r.object_key as string,
    status: r.status as Media['status'],
    width: (r.width as number | null) ?? null,
    height: (r.height as number | null) ?? null,
    durationSeconds:
      r.duration_seconds === null || r.duration_seconds === undefined ? null : Number(r.duration_seconds),
    variants: (r.variants as unknown[]) ?? [],
    placeholder: (r.placeholder as string | null) ?? null,
    error: (r.error as string | null) ?? null,
    createdAt: new Date(r.created_at as string),
    updatedAt: new Date(r.updated_at as string),
  };
}

const COLUMNS =
  'id, workspace_id, kind, content_type, bytes, object_key, status, width, height, duration_seconds, variants, placeholder, error, created_at, updated_at';

/**
 * POST /media (docs/media.md "Upload"): 413 at once on a declared length over the limit; storage reserved before
 * the body is read (403 plan_required past the plan's line); the file spooled and sniffed; the object written; the
 * row, the settled bytes and the `media.process` job committed together; the job published. Any refusal keeps
 * nothing: no object, no row, no bytes counted.
 */
export async function uploadMedia(
  deps: UploadDeps,
  ws: { id: string; plan: PlanName },
  req: Readable,
  headers: IncomingHttpHeaders,
  opts: {
    storageLimits?: StorageLimits;
    urlTtlSeconds: number;
    /** Told the upload's fingerprint (`fingerprintOf`) once the body is in: an Idempotency-Key records it. */
    fingerprint?: (fingerprint: string) => void;
  },
): Promise<MediaDto> {
  const declared = Number(headers['content-length'] ?? NaN);
  if (Number.isFinite(declared) && declared > MEDIA_MAX_BYTES + MULTIPART_SLACK) {
    req.resume();
    throw tooLarge();
  }
  // The reservation: what the body can hold at most (its declared length, else the upload limit).
  const reserved = Number.isFinite(declared) ? Math.min(declared, MEDIA_MAX_BYTES) : MEDIA_MAX_BYTES;
  try {
    await reserveStorage(deps.orm.em.fork(), ws, reserved, opts.storageLimits);
  } catch (err) {
    req.resume();
    throw err;
  }
  let settled = false;
  const id = newId('med');
  const objectKey = `media/${ws.id}/${id}`;
  let stored = false;
  try {
    const upload = await receiveUpload(req, headers, {
      limit: MEDIA_MAX_BYTES,
      tooLarge,
      digest: opts.fingerprint !== undefined,
      // The bytes go to the store as they arrive; the first ones decide the type before anything is written.
      store: async ({ chunks, kindSoFar, expectedBytes }) => {
        if (kindSoFar !== undefined) kindOf(kindSoFar);
        const { head, rest } = await headOf(chunks, SNIFF_BYTES);
        const sniffed = head.length === 0 ? undefined : await fileTypeFromBuffer(head);
        const format = checkSniffed(
          kindSoFar === undefined ? 'any' : kindOf(kindSoFar),
          head.length,
          sniffed,
        );
        try {
          await deps.storage.putStream(objectKey, rest, format.mime, { expectedBytes });
        } catch (err) {
          if (err instanceof AppError) throw err;
          // The form's length promised more file than came: something besides `kind` and one file followed it.
          if ((err as { code?: string }).code === 'short_source')
            throw new AppError(
              'invalid_request',
              'The form carries more than `kind` and one `file`: send those parts only',
              { issues: [{ code: 'malformed', path: ['file'], message: 'Only `kind` and one `file` part' }] },
            );
          throw new AppError('unavailable', 'The object store is unreachable; retry shortly', {
            cause: err,
            retryAfter: 2,
          });
        }
        stored = true;
        return { mime: format.mime };
      },
    });
    if (opts.fingerprint) opts.fingerprint(fingerprintOf(upload));
    const kind = kindOf(upload.kind ?? 'image');
    if (!upload.file) {
      const message = 'A multipart part named "file" is required';
      throw new AppError('invalid_request', message, {
        issues: [{ code: 'required', path: ['file'], message }],
      });
    }
    const { size } = upload.file;
    // The kind may have come after the file: the type sniffed from its first bytes is checked against it now.
    const format = checkSniffed(kind, size, { mime: upload.file.stored.mime });
    const spec = jobKindSpec('media.process');
    if (spec.mode !== 'async') throw new AppError('internal_error', 'media.process must be asynchronous');
    const { media, jobId } = await deps.orm.em.fork().transactional(async (em) => {
      const [row] = await boundQuery<Record<string, unknown>>(
        em,
        `insert into media (id, workspace_id, kind, content_type, bytes, object_key, status)
         values (?, ?, ?, ?, ?::bigint, ?, 'processing') returning ${COLUMNS}`,
        [id, ws.id, format.kind, format.mime, size, objectKey],
      );
      await settleStorage(em, ws.id, reserved, size);
      const job = await recordJob(em, spec, { workspaceId: ws.id, input: { mediaId: id } });
      return { media: rowToMedia(row!), jobId: job.id };
    });
    settled = true;
    try {
      await deps.bus.publish(
        jobSubject(deps.bus.names, 'media.process'),
        { jobId, workspaceId: ws.id, kind: 'media.process' },
        { msgId: jobId },
      );
    } catch (err) {
      deps.log.warn({ err, jobId }, 'media.process publish failed; the sweeper will publish it');
    }
    return mediaDto(deps.storage, media, opts.urlTtlSeconds);
  } catch (err) {
    if (stored) await deps.storage.remove(objectKey).catch(() => undefined);
    throw err;
  } finally {
    if (!settled) await settleStorage(deps.orm.em.fork(), ws.id, reserved, 0).catch(() => undefined);
  }
}

/** The `kind` field checked (400 at `["kind"]` when it is none of `MEDIA_KINDS`). */
function kindOf(text: string): MediaKind {
  if ((MEDIA_KINDS as readonly string[]).includes(text)) return text as MediaKind;
  const message = `kind must be one of ${MEDIA_KINDS.join(', ')} (got "${text.slice(0, 40)}")`;
  throw new AppError('invalid_request', message, {
    issues: [{ code: 'invalid_value', path: ['kind'], message }],
  });
}

/**
 * The first `bytes` bytes of a stream (fewer when it is shorter), and the whole stream again from its start: the
 * chunks read to find the head are replayed before the rest.
 */
async function headOf(
  chunks: AsyncIterable<Buffer>,
  bytes: number,
): Promise<{ head: Buffer; rest: AsyncIterable<Buffer> }> {
  const it = chunks[Symbol.asyncIterator]();
  const first: Buffer[] = [];
  let got = 0;
  let ended = false;
  while (got < bytes) {
    const next = await it.next();
    if (next.done) {
      ended = true;
      break;
    }
    first.push(next.value);
    got += next.value.length;
  }
  async function* rest(): AsyncGenerator<Buffer> {
    yield* first;
    if (!ended) yield* { [Symbol.asyncIterator]: () => it };
  }
  return { head: Buffer.concat(first).subarray(0, bytes), rest: rest() };
}

export async function mediaDto(
  storage: Pick<Storage, 'presignGet'>,
  m: Media,
  ttlSeconds: number,
): Promise<MediaDto> {
  const variants = (m.variants as MediaVariantRecord[]).map(
    ({ role, width, height, contentType, bytes }) => ({
      role,
      width,
      height,
      contentType,
      bytes,
    }),
  );
  return {
    id: m.id,
    url: mediaRef(m.id),
    previewUrl: await storage.presignGet(m.objectKey, ttlSeconds),
    kind: m.kind,
    bytes: Number(m.bytes),
    contentType: m.contentType,
    status: m.status,
    width: m.width,
    height: m.height,
    durationSeconds: m.durationSeconds,
    placeholder: m.placeholder,
    variants,
    error: m.error,
    createdAt: iso(m.createdAt)!,
  };
}

export async function listMedia(
  em: EntityManager,
  workspaceId: string,
  paging: { limit: number; offset: number },
): Promise<{ rows: Media[]; total: number }> {
  const rows = await boundQuery<Record<string, unknown>>(
    em,
    `select ${COLUMNS} from media where workspace_id = ? order by created_at desc, id desc limit ? offset ?`,
    [workspaceId, paging.limit, paging.offset],
  );
  const [count] = await boundQuery<{ n: string }>(
    em,
    'select count(*) as n from media where workspace_id = ?',
    [workspaceId],
  );
  return { rows: rows.map(rowToMedia), total: Number(count?.n ?? 0) };
}

/** Media of these ids that belong to the workspace (others, and deleted ones, are simply absent). */
export async function findMedia(
  em: EntityManager,
  workspaceId: string,
  ids: string[],
): Promise<Map<string, Media>> {
  if (ids.length === 0) return new Map();
  const rows = await boundQuery<Record<string, unknown>>(
    em,
    `select ${COLUMNS} from media where workspace_id = ? and id = any (?::text[])`,
    [workspaceId, ids],
  );
  return new Map(rows.map((r) => [r.id as string, rowToMedia(r)]));
}

export async function getMedia(em: EntityManager, workspaceId: string, id: string): Promise<Media> {
  const m = (await findMedia(em, workspaceId, [id])).get(id);
  if (!m) throw new AppError('not_found', `Media ${id} not found`);
  return m;
}

/** Deletes the row, frees its bytes and removes its objects (the original and every derived file). */
export async function deleteMedia(
  deps: { orm: MikroORM; storage: Pick<Storage, 'remove'>; log: Logger },
  workspaceId: string,
  id: string,
): Promise<void> {
  const removed = await deps.orm.em.fork().transactional(async (em) => {
    const [row] = await boundQuery<Record<string, unknown>>(
      em,
      `delete from media where id = ? and workspace_id = ? returning ${COLUMNS}`,
      [id, workspaceId],
    );
    if (!row) throw new AppError('not_found', `Media ${id} not found`);
    const m = rowToMedia(row);
    await freeStorage(em, workspaceId, Number(m.bytes));
    return m;
  });
  for (const key of [removed.objectKey, ...(removed.variants as MediaVariantRecord[]).map((v) => v.key)]) {
    await deps.storage
      .remove(key)
      .catch((err: unknown) => deps.log.warn({ err, key }, 'media object not removed'));
  }
}

/**
 * What identifies an upload for `Idempotency-Key` (docs/generation.md "Idempotency"): the `kind` field and the
 * file's bytes (their SHA-256, taken as they arrived), not the multipart framing (a client sending the same file
 * again draws a new boundary).
 */
export function fingerprintOf(upload: ReceivedUpload<unknown>): string {
  return createHash('sha256')
    .update(upload.kind ?? '')
    .update('\0')
    .update(upload.file ? (upload.file.sha256 ?? '') : '\0no-file')
    .digest('hex');
}

/** A repeated upload under a used key: the body is received (with the same cap) only to compute its fingerprint. */
export async function fingerprintUpload(req: Readable, headers: IncomingHttpHeaders): Promise<string> {
  const declared = Number(headers['content-length'] ?? NaN);
  if (Number.isFinite(declared) && declared > MEDIA_MAX_BYTES + MULTIPART_SLACK) {
    req.resume();
    throw tooLarge();
  }
  const upload = await receiveUpload(req, headers, {
    limit: MEDIA_MAX_BYTES,
    tooLarge,
    digest: true,
    store: async ({ chunks }) => {
      for await (const _chunk of chunks) void _chunk;
    },
  });
  return fingerprintOf(upload);
}
