import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import { checkUrlResolved, type HostResolver } from '@lectern/webhooks';

export interface LogoFetchOptions {
  /** WEBHOOK_ALLOW_PRIVATE_NETWORKS: the same policy as webhook deliveries. */
  allowPrivate: boolean;
  maxBytes: number;
  timeoutMs: number;
  lookup?: HostResolver;
}

export type LogoFetch = { ok: true; bytes: Buffer } | { ok: false; reason: string };

const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/** PNG or JPEG by their magic bytes: a `.png` URL serving SVG or WebP must not reach pdfkit. */
export function imageKind(bytes: Buffer): 'png' | 'jpeg' | null {
  if (bytes.length >= 8 && bytes.subarray(0, 8).equals(PNG)) return 'png';
  if (bytes.length >= 3 && bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff) return 'jpeg';
  return null;
}

/**
 * Fetches a template logo for the PDF. The URL is the customer's, so the fetch is held to
 * the webhook SSRF policy (libs/webhooks `checkUrlResolved`: no loopback, private,
 * link-local or metadata addresses unless WEBHOOK_ALLOW_PRIVATE_NETWORKS), connects to
 * exactly the address that was checked, follows no redirect, stops at `maxBytes` and
 * gives up after `timeoutMs` in all. Never throws: a logo that cannot be had is left out
 * of the certificate and the reason is returned for the log.
 */
export function fetchLogo(url: string, opts: LogoFetchOptions): Promise<LogoFetch> {
  return new Promise<LogoFetch>((resolve) => {
    let settled = false;
    let req: http.ClientRequest | undefined;
    const finish = (r: LogoFetch) => {
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
        headers: { accept: 'image/png, image/jpeg', 'user-agent': 'Lectern-Certificates' },
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
          if (imageKind(bytes) === null)
            return finish({
              ok: false,
              reason: 'not a PNG or JPEG image (SVG, WebP and others cannot be embedded)',
            });
          finish({ ok: true, bytes });
        });
        res.on('error', (err) => finish({ ok: false, reason: err.message }));
      });
    };
    start().catch((err: unknown) => finish({ ok: false, reason: (err as Error).message }));
  });
}
