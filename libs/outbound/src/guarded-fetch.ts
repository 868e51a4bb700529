import { guardedGet, type OutboundRequestOptions } from './request.js';

export interface GuardedFetchOptions extends OutboundRequestOptions {
  /** Cap of the body, held in memory: keep it to what a JSON document or an HTML page needs. */
  maxBytes: number;
  /** For the whole fetch, redirects included. */
  timeoutMs: number;
}

/** `url`: where the body came from after redirects; `contentType`: as the server declared it (may be absent). */
export type GuardedResponse =
  | { ok: true; url: string; status: number; contentType: string | undefined; body: Buffer }
  | { ok: false; reason: string };

/**
 * A small GET of a customer's URL held in memory (a JSON document, an HTML page to read text from) under the same
 * rules as `fetchToFile`: the SSRF policy on every hop, the connection pinned to the checked address, `maxBytes`
 * and `timeoutMs` in all. Never throws.
 */
export function guardedFetch(url: string, opts: GuardedFetchOptions): Promise<GuardedResponse> {
  const tooBig: GuardedResponse = { ok: false, reason: `larger than ${opts.maxBytes} bytes` };
  return guardedGet<GuardedResponse>(url, opts, ({ res, url: final, finish, settled }) => {
    if (Number(res.headers['content-length'] ?? NaN) > opts.maxBytes) return finish(tooBig);
    const chunks: Buffer[] = [];
    let size = 0;
    res.on('data', (chunk: Buffer) => {
      if (settled()) return;
      size += chunk.length;
      if (size > opts.maxBytes) return finish(tooBig);
      chunks.push(chunk);
    });
    res.on('end', () =>
      finish({
        ok: true,
        url: final.href,
        status: res.statusCode ?? 200,
        contentType: res.headers['content-type'],
        body: Buffer.concat(chunks),
      }),
    );
  });
}
