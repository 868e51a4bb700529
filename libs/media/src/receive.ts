import busboy from 'busboy';
import { createHash } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import type { Readable } from 'node:stream';
import { AppError } from '@lectern/errors';

/** The `file` part as it arrives, handed to the caller's `store` while the body is still being read. */
export interface IncomingFile {
  /** The file's bytes in order, back-pressured: the request is read no faster than this is consumed. */
  chunks: AsyncIterable<Buffer>;
  /** The `kind` field, when the form sent it before the file (undefined: not yet, or not at all). */
  kindSoFar: string | undefined;
  /**
   * How many bytes the file should hold at least, from the declared Content-Length less what was read before the
   * file began and a margin for the framing after it (0 without a Content-Length). A hint: a body that lies is
   * still cut at the limit and stored as it is.
   */
  expectedBytes: number;
}

export interface ReceivedUpload<T> {
  /** The `kind` field as sent (undefined: not sent). */
  kind: string | undefined;
  /**
   * The first `file` part: its size, the SHA-256 of its bytes (when `digest` was asked for) and what `store` made of
   * them; undefined when the form had none.
   */
  file?: { size: number; sha256?: string; stored: T };
}

export interface ReceiveOptions<T> {
  /** Largest file accepted, in bytes; one byte more is a 413 at once. */
  limit: number;
  tooLarge: () => Error;
  /** Hash the file's bytes as they pass (`file.sha256`): only when asked, it costs a core ~3 ms per MB. */
  digest?: boolean;
  /**
   * Consumes the file's bytes (writes them to the store as they arrive); its answer is kept as `file.stored`.
   * When it throws, the read stops and the upload fails with its error; when the upload fails otherwise (over the
   * limit, a broken body), the bytes it iterates end in that error, so it can undo what it began.
   */
  store: (file: IncomingFile) => Promise<T>;
}

/** busboy's limits on what a form may carry besides its file (more is a 400, `refuseExtras`). */
const FORM_LIMITS = { files: 1, fields: 8, fieldSize: 1024, parts: 16, headerPairs: 32 } as const;

/**
 * The most a form within `FORM_LIMITS` can carry after its file part: every other part's headers (busboy reads at
 * most 16 KiB of them), its value and its boundary line. The file is then at least the declared length less what
 * came before it and this, so that many bytes can go to the store as they arrive (`Storage.putStream`).
 */
const FRAMING_AFTER_FILE = FORM_LIMITS.parts * (16 * 1024 + FORM_LIMITS.fieldSize + 128);

const bad = (message: string, pathName: string = 'file') =>
  new AppError('invalid_request', message, { issues: [{ code: 'malformed', path: [pathName], message }] });

/**
 * Reads a `multipart/form-data` upload with busboy as it arrives: the `file` part is handed to `store` as a stream
 * of chunks (counted, hashed, never held whole: busboy waits while `store` is busy, and TCP holds the client back),
 * `kind` is read as a short field, other short fields are skipped, and a form carrying more than `FORM_LIMITS`
 * (a second file, a longer field, more fields or parts) is refused at once. Past `limit` bytes of file the read
 * stops at once (the request is left paused; the caller drains it once its answer is out, `drainAfterAnswer`), and
 * `store`'s iteration ends in the 413 so it can abort what it began. Resolves once the body is read and `store` has
 * finished.
 */
export async function receiveUpload<T>(
  req: Readable,
  headers: IncomingHttpHeaders,
  opts: ReceiveOptions<T>,
): Promise<ReceivedUpload<T>> {
  let bb: busboy.Busboy;
  try {
    bb = busboy({
      headers,
      limits: { ...FORM_LIMITS, fileSize: opts.limit },
      // The file's bytes may run ahead of the store by this much before busboy (and TCP) hold the client back.
      fileHwm: 1024 * 1024,
    });
  } catch {
    req.resume();
    throw bad('The body is not multipart/form-data with a boundary', 'file');
  }
  let kind: string | undefined;
  let file: ReceivedUpload<T>['file'];
  const declared = Number(headers['content-length'] ?? NaN);
  let readSoFar = 0;
  req.on('data', (chunk: Buffer) => (readSoFar += chunk.length));
  let storing: Promise<void> | undefined;
  await new Promise<void>((resolve, reject) => {
    let failed = false;
    let fileStream: (Readable & { truncated?: boolean }) | undefined;
    const fail = (err: Error) => {
      if (failed) return;
      failed = true;
      req.unpipe(bb);
      // Not drained here: reading the rest at full speed while the refusal is prepared would take in most of a
      // large body before the 413 leaves. Paused, TCP holds the client back; `drainAfterAnswer` reads and
      // drops the rest once the answer is out, so the client still gets it and the connection ends cleanly.
      req.pause();
      // What `store` is iterating ends in the same error, so it aborts its write; the refusal waits for that.
      fileStream?.destroy(err);
      const refuse = () => reject(err);
      (storing ?? Promise.resolve()).then(refuse, refuse);
    };
    bb.on('field', (name, value, info) => {
      if (info.nameTruncated || info.valueTruncated)
        fail(bad(`A form field holds at most ${FORM_LIMITS.fieldSize} bytes`, name.slice(0, 64)));
      else if (name === 'kind' && kind === undefined) kind = value;
    });
    // One file and a few short fields: a form carrying more is refused, not read past (docs/media.md "Upload").
    bb.on('filesLimit', () => fail(bad('An upload carries one file: send `kind` and one `file` part')));
    bb.on('fieldsLimit', () => fail(bad(`A form carries at most ${FORM_LIMITS.fields} fields`)));
    bb.on('partsLimit', () => fail(bad(`A form carries at most ${FORM_LIMITS.parts} parts`)));
    bb.on('file', (name, stream: Readable & { truncated?: boolean }) => {
      // After a refusal busboy may still parse what it had buffered: nothing more is stored.
      if (name !== 'file' || fileStream || failed) {
        stream.resume();
        return;
      }
      fileStream = stream;
      // Destroyed with the refusal when the read stops; whoever iterates it gets that error, nobody else needs it.
      stream.on('error', () => undefined);
      const hash = opts.digest ? createHash('sha256') : undefined;
      let size = 0;
      stream.on('limit', () => fail(opts.tooLarge()));
      async function* chunks(): AsyncGenerator<Buffer> {
        for await (const chunk of stream as AsyncIterable<Buffer>) {
          size += chunk.length;
          hash?.update(chunk);
          yield chunk;
        }
        if (stream.truncated) throw opts.tooLarge();
      }
      const expectedBytes = Number.isFinite(declared)
        ? Math.max(0, Math.min(opts.limit, declared - readSoFar - FRAMING_AFTER_FILE))
        : 0;
      storing = opts.store({ chunks: chunks(), kindSoFar: kind, expectedBytes }).then(
        (stored) => {
          file = { size, ...(hash ? { sha256: hash.digest('hex') } : {}), stored };
        },
        (err: Error) => {
          // Unread bytes would hold busboy (and the request) forever: the read stops with this error.
          fail(err);
          throw err;
        },
      );
      storing.catch(() => undefined);
    });
    bb.on('error', (err: Error) => fail(bad(`The multipart body is malformed: ${err.message}`)));
    bb.on('close', () => {
      if (!failed) (storing ?? Promise.resolve()).then(resolve, (err: Error) => fail(err));
    });
    req.on('aborted', () =>
      fail(new AppError('invalid_request', 'The upload was interrupted before the body was complete')),
    );
    req.on('error', (err) => fail(err));
    req.pipe(bb);
  });
  return { kind, file };
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
