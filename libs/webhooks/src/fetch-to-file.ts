import { createHash } from 'node:crypto';
import { createWriteStream, type WriteStream } from 'node:fs';
import { rm } from 'node:fs/promises';
import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import { checkUrlResolved, type HostResolver } from './ssrf.js';

export interface GuardedFetchOptions {
  /** WEBHOOK_ALLOW_PRIVATE_NETWORKS: the same outbound policy as webhook deliveries and certificate logos. */
  allowPrivate: boolean;
  /** Cap of this one file. */
  maxBytes: number;
  timeoutMs: number;
  /** Where the body goes as it arrives; removed by the fetcher when the fetch fails. */
  file: string;
  /** Shared by the fetches of one package: each byte received is taken from it, and given back on failure. */
  budget?: { remaining: number };
  accept?: string;
  /** Names the feature in the customer's logs, e.g. `Lectern-SCORM`. */
  userAgent?: string;
  lookup?: HostResolver;
}

/** `head`: the first bytes of the body, enough to tell the format by; `sha256`: hex digest of the whole body. */
export type GuardedFetch =
  { ok: true; file: string; bytes: number; sha256: string; head: Buffer } | { ok: false; reason: string };

const HEAD_BYTES = 4096;

/**
 * Fetches a customer's URL into `file`: a SCORM package's fonts and media, a certificate template's logo. The one
 * way the service downloads what a customer points it at. The URL is the
 * customer's, so the fetch is held to the webhook SSRF policy (`checkUrlResolved`: no loopback, private,
 * link-local or metadata address unless allowed), connects to exactly the address that was checked, follows no
 * redirect, stops at `maxBytes` (and at what is left of the package's `budget`) and gives up after `timeoutMs`
 * in all. The body is streamed to disk, so a 50 MB video is never held in memory; what it is gets decided by
 * the caller from `head`. Never throws: a file that cannot be had is `{ok: false, reason}` for the caller's log.
 */
export function fetchToFile(url: string, opts: GuardedFetchOptions): Promise<GuardedFetch> {
  return new Promise<GuardedFetch>((resolve) => {
    let settled = false;
    let req: http.ClientRequest | undefined;
    let out: WriteStream | undefined;
    let taken = 0;
    const finish = (r: GuardedFetch) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      req?.destroy();
      if (r.ok) return resolve(r);
      if (opts.budget) opts.budget.remaining += taken;
      const done = () => void rm(opts.file, { force: true }).finally(() => resolve(r));
      if (out && !out.closed) out.destroy();
      if (out && !out.closed) out.once('close', done);
      else done();
    };
    const timer = setTimeout(
      () => finish({ ok: false, reason: `timed out after ${opts.timeoutMs} ms` }),
      opts.timeoutMs,
    );
    const tooBig = (): GuardedFetch =>
      opts.budget && opts.budget.remaining < 0
        ? { ok: false, reason: 'the package media cap is reached' }
        : { ok: false, reason: `larger than ${opts.maxBytes} bytes` };
    const start = async () => {
      const target = await checkUrlResolved(url, { allowPrivate: opts.allowPrivate, lookup: opts.lookup });
      if (settled) return;
      if (!target.ok) return finish({ ok: false, reason: `refused: ${target.reason}` });
      const { url: u, hostname, address, family } = target;
      const pinned: LookupFunction = (_host, options, cb) => {
        if ((options as { all?: boolean }).all) cb(null, [{ address, family }]);
        else cb(null, address, family);
      };
      const client = u.protocol === 'https:' ? https : http;
      req = client.get({
        protocol: u.protocol,
        hostname,
        port: u.port === '' ? undefined : Number(u.port),
        path: `${u.pathname}${u.search}`,
        headers: { accept: opts.accept ?? '*/*', 'user-agent': opts.userAgent ?? 'Lectern' },
        lookup: pinned,
        agent: false,
        ...(u.protocol === 'https:' ? { servername: hostname } : {}),
      });
      req.on('error', (err) => finish({ ok: false, reason: err.message }));
      req.on('response', (res) => {
        const status = res.statusCode ?? 0;
        if (status < 200 || status >= 300) {
          res.resume();
          return finish({
            ok: false,
            reason: `HTTP ${status}${status >= 300 && status < 400 ? ' (redirects are not followed)' : ''}`,
          });
        }
        const declared = Number(res.headers['content-length'] ?? NaN);
        if (declared > opts.maxBytes)
          return finish({ ok: false, reason: `larger than ${opts.maxBytes} bytes` });
        if (opts.budget && declared > opts.budget.remaining)
          return finish({ ok: false, reason: 'the package media cap is reached' });
        const hash = createHash('sha256');
        const head: Buffer[] = [];
        let headSize = 0;
        let size = 0;
        const file = createWriteStream(opts.file);
        out = file;
        file.on('error', (err) => finish({ ok: false, reason: err.message }));
        res.on('data', (chunk: Buffer) => {
          // Chunks already in flight when the fetch ended: not counted, or they would be taken from the budget
          // after the failure gave it back.
          if (settled) return;
          size += chunk.length;
          taken += chunk.length;
          if (opts.budget) opts.budget.remaining -= chunk.length;
          if (size > opts.maxBytes || (opts.budget && opts.budget.remaining < 0)) return finish(tooBig());
          hash.update(chunk);
          if (headSize < HEAD_BYTES) {
            head.push(chunk.subarray(0, HEAD_BYTES - headSize));
            headSize += Math.min(chunk.length, HEAD_BYTES - headSize);
          }
          // Back-pressure: a slow disk pauses the download instead of buffering it.
          if (!file.write(chunk)) {
            res.pause();
            file.once('drain', () => res.resume());
          }
        });
        res.on('end', () => {
          if (settled) return;
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
        res.on('error', (err) => finish({ ok: false, reason: err.message }));
      });
    };
    start().catch((err: unknown) => finish({ ok: false, reason: (err as Error).message }));
  });
}
