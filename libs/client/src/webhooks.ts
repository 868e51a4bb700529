/**
 * Verifying Lectern's webhook signatures in a receiver (docs/webhooks.md "Verifying signatures"), Node only:
 * `import { verifyWebhook } from '@lectern/client/webhooks'`.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

export interface VerifyOptions {
  /** Largest distance between `webhook-timestamp` and now, in seconds (default 300: replays are refused). */
  toleranceSeconds?: number;
  /** Now, in milliseconds (tests). */
  now?: number;
}

const same = (a: string, b: string) => {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
};

type HeaderBag = Headers | Record<string, string | string[] | undefined>;

function header(headers: HeaderBag, name: string): string {
  if (headers instanceof Headers) return headers.get(name) ?? '';
  const v = headers[name] ?? headers[name.toLowerCase()];
  return (Array.isArray(v) ? v[0] : v) ?? '';
}

/**
 * True when either scheme's signature matches the raw body: `X-Service-Signature` (HMAC keyed with the whole
 * `whsec_…` string) or Standard Webhooks' `webhook-signature` (keyed with the decoded secret, over
 * `id.timestamp.body`, with a timestamp within the tolerance). Pass the body exactly as received.
 */
export function verifyWebhook(
  secret: string,
  rawBody: string | Uint8Array,
  headers: HeaderBag,
  opts: VerifyOptions = {},
): boolean {
  const body = typeof rawBody === 'string' ? Buffer.from(rawBody) : Buffer.from(rawBody);
  const hex = createHmac('sha256', secret).update(body).digest('hex');
  if (same(`sha256=${hex}`, header(headers, 'x-service-signature'))) return true;
  const id = header(headers, 'webhook-id');
  const ts = header(headers, 'webhook-timestamp');
  const now = (opts.now ?? Date.now()) / 1000;
  if (!id || !/^\d+$/.test(ts) || Math.abs(now - Number(ts)) > (opts.toleranceSeconds ?? 300)) return false;
  if (!secret.startsWith('whsec_')) return false;
  const key = Buffer.from(secret.slice('whsec_'.length), 'base64');
  const sig = createHmac('sha256', key).update(`${id}.${ts}.`).update(body).digest('base64');
  return header(headers, 'webhook-signature')
    .split(' ')
    .some((s) => same(s, `v1,${sig}`));
}
