import busboy from 'busboy';
import { createWriteStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import type { IncomingHttpHeaders } from 'node:http';
import os from 'node:os';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { AppError } from '@lectern/errors';
import { SNIFF_BYTES } from './formats.js';

export interface ReceivedUpload {
  /** The temp folder holding the file; the caller removes it (`discard`). */
  dir: string;
  /** The `kind` field as sent (undefined: not sent). */
  kind: string | undefined;
  /** The first `file` part, spooled to disk; undefined when the form had none. */
  file?: { path: string; size: number; head: Buffer };
  discard(): Promise<void>;
}

export interface ReceiveOptions {
  /** Largest file accepted, in bytes; one byte more is a 413 at once. */
  limit: number;
  tooLarge: () => Error;
}

const bad = (message: string, pathName: string = 'file') =>
  new AppError('invalid_request', message, { issues: [{ code: 'malformed', path: [pathName], message }] });

/**
 * Reads a `multipart/form-data` upload with busboy as it arrives: the `file` part goes to a temp file (counted,
 * never held in memory; its first bytes kept for sniffing), `kind` is read as a short field, every other part is
 * skipped. Past `limit` bytes of file the read stops at once (the request is left paused; the caller drains it
 * once its answer is out, `drainAfterAnswer`) and the temp folder is removed.
 *
 * Why a temp file and not a PUT straight from the request: an S3 PUT needs its length up front, and the loopback
 * store has no multipart upload; spooling keeps memory to a few 64 KiB chunks whatever the file size, then
 * `Storage.putFile` sends one PUT with a known Content-Length (docs/media.md "Upload").
 */
export async function receiveUpload(
  req: Readable,
  headers: IncomingHttpHeaders,
  opts: ReceiveOptions,
): Promise<ReceivedUpload> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'lectern-media-'));
  const discard = () => rm(dir, { recursive: true, force: true });
  let bb: busboy.Busboy;
  try {
    bb = busboy({
      headers,
      limits: { files: 1, fileSize: opts.limit, fields: 8, fieldSize: 1024, parts: 16, headerPairs: 32 },
    });
  } catch {
    await discard();
    req.resume();
    throw bad('The body is not multipart/form-data with a boundary', 'file');
  }
  let kind: string | undefined;
  let file: ReceivedUpload['file'];
  try {
    await new Promise<void>((resolve, reject) => {
      let writing: Promise<void> = Promise.resolve();
      let failed = false;
      const fail = (err: Error) => {
        if (failed) return;
        failed = true;
        req.unpipe(bb);
        // Not drained here: reading the rest at full speed while the refusal is prepared would take in most of a
        // large body before the 413 leaves. Paused, TCP holds the client back; `drainAfterAnswer` reads and
        // drops the rest once the answer is out, so the client still gets it and the connection ends cleanly.
        req.pause();
        reject(err);
      };
      bb.on('field', (name, value) => {
        if (name === 'kind' && kind === undefined) kind = value;
      });
      bb.on('file', (name, stream) => {
        if (name !== 'file' || file) {
          stream.resume();
          return;
        }
        const target = path.join(dir, 'upload');
        const entry = { path: target, size: 0, head: Buffer.alloc(0) };
        file = entry;
        const heads: Buffer[] = [];
        let headBytes = 0;
        const out = createWriteStream(target);
        stream.on('data', (chunk: Buffer) => {
          entry.size += chunk.length;
          if (headBytes < SNIFF_BYTES) {
            heads.push(chunk.subarray(0, SNIFF_BYTES - headBytes));
            headBytes += Math.min(chunk.length, SNIFF_BYTES - headBytes);
          }
        });
        stream.on('limit', () => {
          stream.unpipe(out);
          out.destroy();
          fail(opts.tooLarge());
        });
        stream.pipe(out);
        writing = new Promise<void>((res, rej) => {
          out.on('finish', () => {
            entry.head = Buffer.concat(heads);
            res();
          });
          out.on('error', rej);
          out.on('close', () => res());
        });
      });
      bb.on('error', (err: Error) => fail(bad(`The multipart body is malformed: ${err.message}`)));
      bb.on('close', () => {
        if (!failed) writing.then(resolve, (err: Error) => fail(err));
      });
      req.on('aborted', () =>
        fail(new AppError('invalid_request', 'The upload was interrupted before the body was complete')),
      );
      req.on('error', (err) => fail(err));
      req.pipe(bb);
    });
  } catch (err) {
    await discard();
    throw err;
  }
  return { dir, kind, file, discard };
}

/**
 * Reads and drops whatever of the request is left once the response has gone (or the connection closed): after a
 * refusal mid-body `receiveUpload` leaves the request paused, so the answer goes out while the client is held back
 * by TCP instead of after the rest of its body. Harmless when the body was read whole.
 */
export function drainAfterAnswer(
  req: Readable,
  res: { once(event: 'close', cb: () => void): unknown },
): void {
  res.once('close', () => {
    if (!req.readableEnded && !req.destroyed) req.resume();
  });
}
