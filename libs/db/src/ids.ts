import { randomBytes } from 'node:crypto';

const ALPHABET = '0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ';

/**
 * Bytes from the system CSPRNG, drawn 4 KiB at a time and handed out once each (as `crypto.randomUUID` does):
 * one `randomBytes` call per id was a measured share of a learner batch's CPU (a batch makes an id per event).
 */
const POOL = 4096;
let pool = Buffer.alloc(0);
let at = 0;
function randomByte(): number {
  if (at === pool.length) {
    pool = randomBytes(POOL);
    at = 0;
  }
  return pool[at++];
}

/** Random base62 string; rejection sampling keeps every character equally likely. */
export function randomBase62(length: number): string {
  let out = '';
  while (out.length < length) {
    const b = randomByte();
    if (b < 248) out += ALPHABET[b % 62];
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
