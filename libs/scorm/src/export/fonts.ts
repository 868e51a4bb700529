import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import { checkUrlResolved, type HostResolver } from '@lectern/webhooks';

export interface FontFetchOptions {
  /** WEBHOOK_ALLOW_PRIVATE_NETWORKS: the same outbound policy as webhook deliveries and certificate logos. */
  allowPrivate: boolean;
  maxBytes: number;
  timeoutMs: number;
  lookup?: HostResolver;
}

export type FontFetch = { ok: true; bytes: Buffer; ext: FontExt } | { ok: false; reason: string };
export type FontExt = 'woff2' | 'woff' | 'ttf' | 'otf';

/** The font format by its magic bytes: whatever the URL says, only a font file goes into the package. */
export function fontKind(bytes: Buffer): FontExt | null {
  if (bytes.length < 4) return null;
  const tag = bytes.subarray(0, 4).toString('latin1');
  if (tag === 'wOF2') return 'woff2';
  if (tag === 'wOFF') return 'woff';
  if (tag === 'OTTO') return 'otf';
  if (tag === 'true' || bytes.readUInt32BE(0) === 0x00010000) return 'ttf';
  return null;
}

/**
 * Fetches a custom font for a package. The URL is the customer's, so the fetch is held to the webhook SSRF
 * policy (`checkUrlResolved`: no loopback, private, link-local or metadata address unless allowed), connects to
 * exactly the address that was checked, follows no redirect, stops at `maxBytes` and gives up after
 * `timeoutMs` in all. Never throws: a font that cannot be had keeps its URL in the package, with the reason.
 */
export function fetchFont(url: string, opts: FontFetchOptions): Promise<FontFetch> {
  return new Promise<FontFetch>((resolve) => {
    let settled = false;
    let req: http.ClientRequest | undefined;
    const finish = (r: FontFetch) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      req?.destroy();
      resolve(r);
    };
    const timer = setTimeout(
      () => finish({ ok: false, reason: `timed out after ${opts.timeoutMs} ms` }),
      opts.timeoutMs,
    );
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
        headers: { accept: 'font/woff2, font/woff, font/ttf, font/otf, */*', 'user-agent': 'Lectern-SCORM' },
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
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > opts.maxBytes)
            return finish({ ok: false, reason: `larger than ${opts.maxBytes} bytes` });
          chunks.push(chunk);
        });
        res.on('end', () => {
          const bytes = Buffer.concat(chunks);
          const ext = fontKind(bytes);
          if (!ext) return finish({ ok: false, reason: 'not a WOFF2, WOFF, TrueType or OpenType font' });
          finish({ ok: true, bytes, ext });
        });
        res.on('error', (err) => finish({ ok: false, reason: err.message }));
      });
    };
    start().catch((err: unknown) => finish({ ok: false, reason: (err as Error).message }));
  });
}
