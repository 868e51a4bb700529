import { randomInt } from 'node:crypto';

/** The fixed letter prefix of every serial ("Lectern Certificate"). */
export const SERIAL_PREFIX = 'LC';

/**
 * 31 characters: digits and uppercase letters without the look-alikes 0/O and 1/I/L, so
 * a serial read off paper or a phone screen is typed right the first time. 31^12 ≈ 7.9e17
 * serials: a collision is astronomically rare, and the unique index plus a retry turns it
 * into a non-event.
 */
export const SERIAL_ALPHABET = '23456789ABCDEFGHJKMNPQRSTUVWXYZ';

const GROUPS = 3;
const GROUP_LENGTH = 4;
const BODY = new RegExp(`^${SERIAL_PREFIX}[${SERIAL_ALPHABET}]{${GROUPS * GROUP_LENGTH}}$`);

/** A fresh random serial, e.g. `LC-7KQM-W3XD-9TPA` (uniform over the alphabet: crypto randomInt). */
export function generateSerial(): string {
  const groups: string[] = [];
  for (let g = 0; g < GROUPS; g++) {
    let group = '';
    for (let i = 0; i < GROUP_LENGTH; i++) group += SERIAL_ALPHABET[randomInt(SERIAL_ALPHABET.length)];
    groups.push(group);
  }
  return [SERIAL_PREFIX, ...groups].join('-');
}

/**
 * A serial as someone typed it → its printed form, or null when it cannot be a serial.
 * Case, dashes and white space are ignored (SPEC.md: "Serial lookup ignores case and
 * dashes"), so `lc7kqmw3xd9tpa`, `LC-7KQM-W3XD-9TPA` and `lc 7kqm-w3xd 9tpa` are one
 * serial. A string that can never match (a character outside the alphabet, wrong length)
 * is null, so lookups of garbage never reach the database.
 */
export function normaliseSerial(input: string): string | null {
  if (input.length > 64) return null;
  const compact = input.replace(/[\s\-‐‑‒–—]/g, '').toUpperCase();
  if (!BODY.test(compact)) return null;
  const body = compact.slice(SERIAL_PREFIX.length);
  const groups = Array.from({ length: GROUPS }, (_, i) =>
    body.slice(i * GROUP_LENGTH, (i + 1) * GROUP_LENGTH),
  );
  return [SERIAL_PREFIX, ...groups].join('-');
}

/** True for a serial in its printed form. */
export function isSerial(value: string): boolean {
  return normaliseSerial(value) === value;
}
