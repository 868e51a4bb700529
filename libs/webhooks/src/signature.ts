/**
 * Delivery headers and the two signature schemes.
 *
 * 1. `X-Service-Signature: sha256=<hex>`: HMAC-SHA256 over the raw request body, keyed with the FULL secret string
 *    as UTF-8 bytes, prefix included (`whsec_...`).
 * 2. Standard Webhooks (https://www.standardwebhooks.com): `webhook-signature: v1,<base64>`: HMAC-SHA256 over
 *    `${webhook-id}.${webhook-timestamp}.${body}`, keyed with the base64-DECODED part of the secret after `whsec_`
 *    (32 bytes for secrets from `generateSigningSecret`).
 *
 * Both verifiers compare in constant time and are what subscribers (and the tests and docs) use.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { SECRET_PREFIX } from './secrets.js';

export const USER_AGENT = 'Lectern-Webhooks/1.0 (+https://lectern.dev/docs/webhooks)';
export const DEFAULT_SIGNATURE_TOLERANCE_SEC = 300;

export interface SignatureInput {
  secret: string;
  eventId: string;
  eventType: string;
  /** The exact bytes that are sent (the JSON envelope). */
  body: string | Buffer;
  /** Unix seconds; defaults to now. */
  timestamp?: number;
}

function toBuffer(body: string | Buffer): Buffer {
  return typeof body === 'string' ? Buffer.from(body, 'utf8') : body;
}

/**
 * The Standard Webhooks HMAC key: the base64-decoded secret after the `whsec_` prefix (the prefix is optional).
 * Returns null when that part is not valid base64.
 */
export function standardSigningKey(secret: string): Buffer | null {
  if (typeof secret !== 'string') return null;
  const encoded = secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret;
  if (encoded.length === 0 || encoded.length % 4 !== 0 || !/^[A-Za-z0-9+/]+={0,2}$/.test(encoded))
    return null;
  const key = Buffer.from(encoded, 'base64');
  return key.length > 0 ? key : null;
}

/** Hex HMAC-SHA256 of the raw body keyed with the full secret string (the `X-Service-Signature` value minus `sha256=`). */
export function serviceSignature(secret: string, body: string | Buffer): string {
  return createHmac('sha256', Buffer.from(secret, 'utf8')).update(toBuffer(body)).digest('hex');
}

/** Base64 HMAC-SHA256 of `${id}.${timestamp}.${body}` with the decoded secret (the `webhook-signature` value minus `v1,`). */
export function standardSignature(
  secret: string,
  id: string,
  timestamp: number | string,
  body: string | Buffer,
): string {
  const key = standardSigningKey(secret);
  if (!key) throw new Error('signing secret must be "whsec_" followed by base64 (Standard Webhooks format)');
  return createHmac('sha256', key)
    .update(Buffer.from(`${id}.${timestamp}.`, 'utf8'))
    .update(toBuffer(body))
    .digest('base64');
}

/**
 * Every header of one delivery POST (Content-Length is added by the sender). Throws when the secret is not
 * `whsec_<base64>`, which never happens for secrets from `generateSigningSecret`.
 */
export function signatureHeaders(input: SignatureInput): Record<string, string> {
  const timestamp = input.timestamp ?? Math.floor(Date.now() / 1000);
  if (!Number.isSafeInteger(timestamp) || timestamp < 0) {
    throw new Error('timestamp must be a non-negative integer number of unix seconds');
  }
  return {
    'Content-Type': 'application/json',
    'User-Agent': USER_AGENT,
    'X-Service-Event': input.eventType,
    'X-Service-Delivery': input.eventId,
    'X-Service-Signature': `sha256=${serviceSignature(input.secret, input.body)}`,
    'webhook-id': input.eventId,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': `v1,${standardSignature(input.secret, input.eventId, timestamp, input.body)}`,
  };
}

function safeEqual(a: Buffer, b: Buffer): boolean {
  return a.length === b.length && timingSafeEqual(a, b);
}

/** Verifies `X-Service-Signature: sha256=<hex>` against the raw body. Constant-time; false on any malformed input. */
export function verifyServiceSignature(
  secret: string,
  body: string | Buffer,
  header: string | null | undefined,
): boolean {
  if (typeof secret !== 'string' || secret === '' || typeof header !== 'string') return false;
  const match = /^sha256=([0-9a-fA-F]{64})$/.exec(header.trim());
  if (!match) return false;
  const expected = Buffer.from(serviceSignature(secret, body), 'hex');
  return safeEqual(expected, Buffer.from(match[1], 'hex'));
}

export interface StandardSignedContent {
  /** `webhook-id` header. */
  id: string;
  /** `webhook-timestamp` header (unix seconds). */
  timestamp: string | number;
  /** Raw request body. */
  body: string | Buffer;
}

/**
 * Verifies `webhook-signature` (space-separated list of `v1,<base64>`; any match passes) and that the timestamp
 * is within `toleranceSec` of `now` (unix seconds, default the current time). Constant-time; false on any
 * malformed input.
 */
export function verifyStandardSignature(
  secret: string,
  content: StandardSignedContent,
  header: string | null | undefined,
  toleranceSec: number = DEFAULT_SIGNATURE_TOLERANCE_SEC,
  now: number = Math.floor(Date.now() / 1000),
): boolean {
  if (typeof header !== 'string' || typeof content.id !== 'string' || content.id === '') return false;
  const key = standardSigningKey(secret);
  if (!key) return false;
  const ts = String(content.timestamp);
  if (!/^[0-9]{1,12}$/.test(ts)) return false;
  if (Math.abs(now - Number(ts)) > toleranceSec) return false;
  const expected = createHmac('sha256', key)
    .update(Buffer.from(`${content.id}.${ts}.`, 'utf8'))
    .update(toBuffer(content.body))
    .digest();
  let ok = false;
  for (const entry of header.trim().split(/\s+/)) {
    const comma = entry.indexOf(',');
    if (comma < 0 || entry.slice(0, comma) !== 'v1') continue;
    const sig = entry.slice(comma + 1);
    if (!/^[A-Za-z0-9+/]+={0,2}$/.test(sig)) continue;
    // Check every entry (no early exit) so timing does not reveal which one matched.
    if (safeEqual(expected, Buffer.from(sig, 'base64'))) ok = true;
  }
  return ok;
}
