import { createHash } from 'node:crypto';
import { randomBase62 } from '@lectern/db/ids';

/** `lk_` + 40 base62 characters (~238 bits). The first 12 after the prefix are an indexed lookup. */
export const KEY_PREFIX = 'lk_';
const SECRET_LENGTH = 40;
const LOOKUP_LENGTH = 12;

export function generateKey(): { key: string; lookup: string; hash: string } {
  const key = KEY_PREFIX + randomBase62(SECRET_LENGTH);
  return { key, lookup: key.slice(KEY_PREFIX.length, KEY_PREFIX.length + LOOKUP_LENGTH), hash: hashKey(key) };
}

/** Keys are high-entropy random strings, so one SHA-256 suffices (no password stretching needed). */
export function hashKey(key: string): string {
  return createHash('sha256').update(key).digest('hex');
}

export function parseKey(raw: string): { key: string; lookup: string } | null {
  if (!/^lk_[A-Za-z0-9]{32,128}$/.test(raw)) return null;
  return { key: raw, lookup: raw.slice(KEY_PREFIX.length, KEY_PREFIX.length + LOOKUP_LENGTH) };
}
