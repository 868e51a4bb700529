import type { Issue } from './issue.js';

/**
 * Rules every value that comes in from outside obeys, whatever the route: JSON bodies, path
 * parameters, query parameters and CSV cells. Checked once, before any schema runs, so no
 * route can forget them (docs: README "Decisions").
 *
 * - No NUL (U+0000) and no lone UTF-16 surrogate in any string or object key. PostgreSQL
 *   cannot store either in text or jsonb (a 500 otherwise), and a lone surrogate would be
 *   echoed back differently from what was stored. Refused, never stripped: silently changing
 *   a caller's text is worse than telling them.
 * - JSON nesting at most `MAX_JSON_DEPTH` levels (the deepest course document is about 8), so
 *   recursive code further on (hashing, serialising) can never run out of stack.
 */
export const MAX_JSON_DEPTH = 64;

/** NUL, a high surrogate not followed by a low one, or a low surrogate not preceded by a high one. */
const BAD_CHARACTER = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** Why `s` cannot be stored, or null when it can. */
export function badTextReason(s: string): string | null {
  const m = BAD_CHARACTER.exec(s);
  if (!m) return null;
  return m[0] === '\u0000'
    ? 'must not contain the NUL character (U+0000)'
    : 'must not contain a lone UTF-16 surrogate (invalid Unicode text)';
}

interface Frame {
  value: unknown;
  key: string | number | null;
  parent: Frame | null;
  depth: number;
}

function pathOf(frame: Frame, prefix: (string | number)[]): (string | number)[] {
  const out: (string | number)[] = [];
  for (let f: Frame | null = frame; f && f.key !== null; f = f.parent) out.push(f.key);
  return [...prefix, ...out.reverse()];
}

/**
 * The first rule `value` breaks, as a validation issue whose path names the field (prefixed with
 * `prefix`), or null. Iterative, so a 10,000-level document cannot overflow the stack here either.
 */
export function inputIssue(
  value: unknown,
  prefix: (string | number)[] = [],
  maxDepth = MAX_JSON_DEPTH,
): Issue | null {
  const stack: Frame[] = [{ value, key: null, parent: null, depth: 0 }];
  while (stack.length > 0) {
    const frame = stack.pop()!;
    const v = frame.value;
    if (typeof v === 'string') {
      const reason = badTextReason(v);
      if (reason) return { code: 'invalid_string', path: pathOf(frame, prefix), message: reason };
      continue;
    }
    if (typeof v !== 'object' || v === null) continue;
    if (frame.depth >= maxDepth) {
      return {
        code: 'too_deep',
        path: pathOf(frame, prefix),
        message: `nesting deeper than ${maxDepth} levels is not accepted`,
      };
    }
    if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--)
        stack.push({ value: v[i], key: i, parent: frame, depth: frame.depth + 1 });
      continue;
    }
    for (const [k, child] of Object.entries(v as Record<string, unknown>)) {
      const reason = badTextReason(k);
      if (reason) {
        return {
          code: 'invalid_string',
          path: pathOf(frame, prefix),
          message: `object keys ${reason}`,
        };
      }
      stack.push({ value: child, key: k, parent: frame, depth: frame.depth + 1 });
    }
  }
  return null;
}
