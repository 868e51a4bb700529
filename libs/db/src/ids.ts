import { randomBytes } from 'node:crypto';

const ALPHABET = '0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ';

/** Random base62 string; rejection sampling keeps every character equally likely. */
export function randomBase62(length: number): string {
  let out = '';
  while (out.length < length) {
    for (const b of randomBytes(length * 2)) {
      if (b < 248 && out.length < length) out += ALPHABET[b % 62];
    }
  }
  return out;
}

/**
 * Opaque ids with a type prefix (`crs_…`). The first 8 characters after the prefix
 * are time-ordered (base36 milliseconds), so ids sort roughly by creation and
 * btree inserts stay local; the rest is random.
 */
export function newId(prefix: string): string {
  const t = Date.now().toString(36).padStart(9, '0');
  return `${prefix}_${t}${randomBase62(14)}`;
}
