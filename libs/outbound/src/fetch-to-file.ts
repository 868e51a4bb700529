import { createHash } from 'node:crypto';
import { createWriteStream, type WriteStream } from 'node:fs';
import { once } from 'node:events';
import { rm } from 'node:fs/promises';
import { guardedGet, type OutboundRequestOptions } from './request.js';

export interface FetchToFileOptions extends OutboundRequestOptions {
  /** Cap of this one file. */
  maxBytes: number;
  /** For the whole fetch, redirects included. */
  timeoutMs: number;
  /** Where the body goes as it arrives; removed by the fetcher when the fetch fails. */
  file: string;
  /** Shared by the fetches of one package: each byte received is taken from it, and given back on failure. */
  budget?: { remaining: number };
  /**
   * The type check by first bytes: called once with the first `HEAD_BYTES` (or the whole body when shorter);
   * a returned reason refuses the file there, before the rest is downloaded. Null accepts it.
   */
  check?: (head: Buffer) => string | null;
}

/** `head`: the first bytes of the body, enough to tell the format by; `sha256`: hex digest of the whole body. */
export type FetchedFile =
  { ok: true; file: string; bytes: number; sha256: string; head: Buffer } | { ok: false; reason: string };

/** How much of the body `head` and `check` see. */
export const HEAD_BYTES = 4096;

/**
 * Fetches a customer's URL into `file`: a SCORM package's fonts and media, a certificate template's logo. The URL
 * is the customer's, so the fetch is held to the SSRF policy (`openGuarded`: no loopback, private, link-local or
 * metadata address unless allowed, on every redirect hop), connects to exactly the address that was checked,
 * stops at `maxBytes` (and at what is left of the package's `budget`) and gives up after `timeoutMs` in all.
 * The body is streamed to disk, so a 50 MB video is never held in memory. Never throws: a file that cannot be had
 * is `{ok: false, reason}` for the caller's log.
 */
export function fetchToFile(url: string, opts: FetchToFileOptions): Promise<FetchedFile> {
  let out: WriteStream | undefined;
  let taken = 0;
  const tooBig = (): FetchedFile =>
    opts.budget && opts.budget.remaining < 0
      ? { ok: false, reason: 'the package media cap is reached' }
      : { ok: false, reason: `larger than ${opts.maxBytes} bytes` };
  // A failed fetch gives its bytes back to the package's budget and leaves no partial file behind.
  const cleanUp = async (r: FetchedFile) => {
    if (r.ok) return;
    if (opts.budget) opts.budget.remaining += taken;
    if (out && !out.closed) {
      const closed = once(out, 'close');
      out.destroy();
      await closed;
    }
    await rm(opts.file, { force: true });
  };
  return guardedGet<FetchedFile>(
    url,
    opts,
    ({ res, finish, settled }) => {
      const declared = Number(res.headers['content-length'] ?? NaN);
      if (declared > opts.maxBytes)
        return finish({ ok: false, reason: `larger than ${opts.maxBytes} bytes` });
      if (opts.budget && declared > opts.budget.remaining)
        return finish({ ok: false, reason: 'the package media cap is reached' });
      const hash = createHash('sha256');
      const head: Buffer[] = [];
      let headSize = 0;
      let checked = !opts.check;
      // False when the type check refused the file (finish was called).
      const checkHead = (): boolean => {
        if (checked) return true;
        checked = true;
        const reason = opts.check?.(Buffer.concat(head)) ?? null;
        if (reason !== null) finish({ ok: false, reason });
        return reason === null;
      };
      let size = 0;
      const file = createWriteStream(opts.file);
      out = file;
      file.on('error', (err) => finish({ ok: false, reason: err.message }));
      res.on('data', (chunk: Buffer) => {
        // Chunks already in flight when the fetch ended: not counted, or they would be taken from the budget
        // after the failure gave it back.
        if (settled()) return;
        size += chunk.length;
        taken += chunk.length;
        if (opts.budget) opts.budget.remaining -= chunk.length;
        if (size > opts.maxBytes || (opts.budget && opts.budget.remaining < 0)) return finish(tooBig());
        hash.update(chunk);
        if (headSize < HEAD_BYTES) {
          head.push(chunk.subarray(0, HEAD_BYTES - headSize));
          headSize += Math.min(chunk.length, HEAD_BYTES - headSize);
          if (headSize >= HEAD_BYTES && !checkHead()) return;
        }
        // Back-pressure: a slow disk pauses the download instead of buffering it.
        if (!file.write(chunk)) {
          res.pause();
          file.once('drain', () => res.resume());
        }
      });
      res.on('end', () => {
        if (settled() || !checkHead()) return;
        file.end(() =>
          finish({
            ok: true,
            file: opts.file,
            bytes: size,
            sha256: hash.digest('hex'),
            head: Buffer.concat(head),
          }),
        );
      });
    },
    cleanUp,
  );
}
