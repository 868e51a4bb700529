import type { Context } from 'koa';
import type { Readable } from 'node:stream';
import getRawBody from 'raw-body';
import inflate from 'inflation';
import { AppError } from '@lectern/errors';

export interface RawBodyOptions {
  /** Largest body accepted, in bytes after decompression. */
  limit: number;
  /** Words for the 413 message, e.g. "A CSV import". */
  what: string;
}

const MiB = 1024 * 1024;

function formatBytes(n: number): string {
  return n % MiB === 0 ? `${n / MiB} MiB` : `${n.toLocaleString('en-US')} bytes`;
}

function tooLarge(opts: RawBodyOptions): AppError {
  return new AppError('payload_too_large', `${opts.what} body may be at most ${formatBytes(opts.limit)}`, {
    details: { limit: opts.limit },
  });
}

/** What `inflation` reads: its published types name the option `gzip`, the code reads `encoding`. */
type InflateOptions = inflate.Options & { encoding: string };

/**
 * Reads the raw request body of a route that has no parser (non-JSON uploads) with a byte cap counted after
 * decompression: `inflation` decodes gzip, deflate and br, and `raw-body` (the pair koa-body's JSON parser uses)
 * collects it. A declared Content-Length over the cap is refused before anything is read. Over the cap → 413
 * `payload_too_large`; the rest of the upload is discarded by Node (the request is resumed), so the client still
 * reads the answer.
 *
 * Measured against the hand-written stream reader it replaced (4 MiB CSV over loopback keep-alive, 4 interleaved
 * rounds of 40 uploads, 2 shared cores at load ~17): identity 8.3 vs 15.0 ms per upload (CPU 4.6 vs 7.0 ms), gzip
 * 21.0 vs 21.6 ms (CPU 11.6 vs 13.4 ms). No reason to keep our own.
 */
export async function readRawBody(ctx: Context, opts: RawBodyOptions): Promise<Buffer> {
  const req = ctx.req;
  const encoding = (ctx.get('content-encoding') || 'identity').trim().toLowerCase();
  let source: Readable;
  try {
    const options: InflateOptions = { encoding: encoding === 'x-gzip' ? 'gzip' : encoding };
    source = inflate(req, options);
  } catch {
    req.resume();
    throw new AppError(
      'unsupported_media_type',
      `Content-Encoding "${encoding}" is not supported; send identity, gzip, deflate or br`,
    );
  }
  try {
    return await getRawBody(source, {
      limit: opts.limit,
      // Only an identity body's declared length is the length that counts against the cap.
      length: source === req ? ctx.get('content-length') || null : null,
    });
  } catch (err) {
    if (source !== req) {
      req.unpipe();
      source.destroy();
    }
    req.resume();
    const { type, code } = err as { type?: unknown; code?: unknown };
    if (type === 'entity.too.large') throw tooLarge(opts);
    if (typeof code === 'string' && /^(Z_|ERR__ERROR_|ERR_BROTLI)/.test(code)) {
      const message =
        'The request body could not be decompressed (Content-Encoding does not match the bytes)';
      throw new AppError('invalid_request', message, { issues: [{ code: 'malformed', path: [], message }] });
    }
    if (type === 'request.aborted' || code === 'ECONNRESET' || req.destroyed) {
      // The client went away mid-upload; nobody reads this answer, but it is not our fault.
      throw new AppError('invalid_request', 'The upload was interrupted before the body was complete');
    }
    throw err;
  }
}

export interface RawBodyStream {
  /** The body, decompressed; count it against `limit` as it is read. */
  stream: Readable;
  limit: number;
  /** The 413 to throw when the count passes the limit. */
  tooLarge: () => AppError;
  /** An error met while reading the stream, as the API answers it. */
  mapError(err: unknown): unknown;
}

/**
 * The raw request body as a stream, for uploads too large to hold (SCORM packages): the caller counts bytes as
 * they go (`runSyncJob`'s stream blob). A declared Content-Length over the cap is a 413 at once, before anything
 * is read; a chunked or compressed body is counted after decompression and stopped as soon as it passes the cap.
 */
export function rawBodyStream(ctx: Context, opts: RawBodyOptions): RawBodyStream {
  const req = ctx.req;
  const encoding = (ctx.get('content-encoding') || 'identity').trim().toLowerCase();
  const declared = Number(ctx.get('content-length') || NaN);
  if (encoding === 'identity' && Number.isFinite(declared) && declared > opts.limit) {
    req.resume();
    throw tooLarge(opts);
  }
  let stream: Readable;
  try {
    const options: InflateOptions = { encoding: encoding === 'x-gzip' ? 'gzip' : encoding };
    stream = inflate(req, options);
  } catch {
    req.resume();
    throw new AppError(
      'unsupported_media_type',
      `Content-Encoding "${encoding}" is not supported; send identity, gzip, deflate or br`,
    );
  }
  return {
    stream,
    limit: opts.limit,
    tooLarge: () => tooLarge(opts),
    mapError(err) {
      if (stream !== req) {
        req.unpipe();
        stream.destroy();
      }
      if (err instanceof AppError) return err;
      const { code } = err as { code?: unknown };
      if (typeof code === 'string' && /^(Z_|ERR__ERROR_|ERR_BROTLI)/.test(code)) {
        const message =
          'The request body could not be decompressed (Content-Encoding does not match the bytes)';
        return new AppError('invalid_request', message, {
          issues: [{ code: 'malformed', path: [], message }],
        });
      }
      if (code === 'ECONNRESET' || code === 'ECONNABORTED' || req.destroyed)
        return new AppError('invalid_request', 'The upload was interrupted before the body was complete');
      return err;
    },
  };
}
