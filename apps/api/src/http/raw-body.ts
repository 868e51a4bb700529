import type { Context } from 'koa';
import type { Readable } from 'node:stream';
import zlib from 'node:zlib';
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

function decoderFor(encoding: string): Readable & NodeJS.WritableStream {
  switch (encoding) {
    case 'gzip':
    case 'x-gzip':
      return zlib.createGunzip();
    case 'deflate':
      return zlib.createInflate();
    case 'br':
      return zlib.createBrotliDecompress();
    default:
      throw new AppError(
        'unsupported_media_type',
        `Content-Encoding "${encoding}" is not supported; send identity, gzip, deflate or br`,
      );
  }
}

/**
 * Reads the raw request body of a route that has no parser (non-JSON uploads) with a byte
 * cap counted after decompression. A declared Content-Length over the cap is refused
 * before anything is read. Over the cap → 413 `payload_too_large`; the rest of the upload
 * is discarded by Node (the request is resumed), so the client still reads the answer.
 */
export async function readRawBody(ctx: Context, opts: RawBodyOptions): Promise<Buffer> {
  const req = ctx.req;
  const declared = Number(ctx.get('content-length') || NaN);
  const encoding = (ctx.get('content-encoding') || 'identity').trim().toLowerCase();
  if (encoding === 'identity' && Number.isFinite(declared) && declared > opts.limit) {
    req.resume();
    throw tooLarge(opts);
  }
  let source: Readable = req;
  if (encoding !== 'identity') {
    const decoder = decoderFor(encoding);
    req.pipe(decoder);
    source = decoder;
  }
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of source) {
      const buf = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as Uint8Array);
      size += buf.length;
      if (size > opts.limit) {
        if (source !== req) {
          req.unpipe();
          source.destroy();
        }
        req.resume();
        throw tooLarge(opts);
      }
      chunks.push(buf);
    }
  } catch (err) {
    if (err instanceof AppError) throw err;
    const code = (err as { code?: unknown }).code;
    if (typeof code === 'string' && /^(Z_|ERR__ERROR_|ERR_BROTLI)/.test(code)) {
      const message =
        'The request body could not be decompressed (Content-Encoding does not match the bytes)';
      throw new AppError('invalid_request', message, { issues: [{ code: 'malformed', path: [], message }] });
    }
    if (code === 'ECONNRESET' || code === 'ERR_STREAM_PREMATURE_CLOSE' || req.destroyed) {
      // The client went away mid-upload; nobody reads this answer, but it is not our fault.
      throw new AppError('invalid_request', 'The upload was interrupted before the body was complete');
    }
    throw err;
  }
  return Buffer.concat(chunks, size);
}
