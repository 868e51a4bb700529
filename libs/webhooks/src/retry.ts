/**
 * Retry schedule. A delivery gets MAX_ATTEMPTS attempts in all; the waits before attempts 2..5 come from
 * WEBHOOK_RETRY_DELAYS (seconds, exactly 4 comma-separated values), each with +/-20% jitter. A `Retry-After` on a
 * 429/503 lengthens the next wait up to, but never beyond, the longest scheduled delay.
 */

export const MAX_ATTEMPTS = 5;

/** Default waits before attempts 2, 3, 4 and 5: 1 min, 10 min, 1 h, 6 h (about 7 h 11 min end to end). */
export const DEFAULT_RETRY_DELAYS: readonly number[] = Object.freeze([60, 600, 3600, 21600]);

/** Jitter applied to each scheduled delay: the wait is delay * (1 +/- JITTER_RATIO). */
export const JITTER_RATIO = 0.2;

const MAX_DELAY_SEC = 7 * 24 * 3600;

/**
 * Parses WEBHOOK_RETRY_DELAYS. Unset or blank -> a copy of DEFAULT_RETRY_DELAYS. Otherwise exactly
 * MAX_ATTEMPTS - 1 comma-separated whole numbers of seconds, each 0..604800 (7 days).
 */
export function parseRetryDelays(value?: string): number[] {
  if (value === undefined || value.trim() === '') return [...DEFAULT_RETRY_DELAYS];
  const parts = value.split(',').map((p) => p.trim());
  const expected = MAX_ATTEMPTS - 1;
  if (parts.length !== expected) {
    throw new Error(
      `WEBHOOK_RETRY_DELAYS must list exactly ${expected} delays in seconds, comma-separated ` +
        `(e.g. "${DEFAULT_RETRY_DELAYS.join(',')}"); got ${parts.length} in ${JSON.stringify(value)}`,
    );
  }
  return parts.map((p) => {
    if (!/^[0-9]+$/.test(p) || Number(p) > MAX_DELAY_SEC) {
      throw new Error(
        `WEBHOOK_RETRY_DELAYS values must be whole seconds between 0 and ${MAX_DELAY_SEC}; ` +
          `got ${JSON.stringify(p)} in ${JSON.stringify(value)}`,
      );
    }
    return Number(p);
  });
}

export interface NextDelayOptions {
  /** Seconds from a `Retry-After` header (only meaningful on 429/503). */
  retryAfterSec?: number | null;
  /** Source of uniform numbers in [0, 1); defaults to Math.random. Inject for deterministic tests. */
  random?: () => number;
}

/**
 * Seconds to wait before the next attempt, or null when `attemptJustMade` (1-based) was the last one.
 *
 * wait = round(delays[attemptJustMade - 1] * (1 + (2r - 1) * 0.2)), then
 * wait = max(wait, min(retryAfterSec, max(delays))) when a Retry-After was given.
 */
export function nextDelaySeconds(
  attemptJustMade: number,
  delays: readonly number[],
  opts: NextDelayOptions = {},
): number | null {
  if (!Number.isInteger(attemptJustMade) || attemptJustMade < 1) {
    throw new RangeError(`attemptJustMade must be an integer >= 1, got ${attemptJustMade}`);
  }
  if (delays.length !== MAX_ATTEMPTS - 1) {
    throw new RangeError(`expected ${MAX_ATTEMPTS - 1} retry delays, got ${delays.length}`);
  }
  if (attemptJustMade >= MAX_ATTEMPTS) return null;
  const base = delays[attemptJustMade - 1];
  const r = Math.min(Math.max((opts.random ?? Math.random)(), 0), 1);
  let wait = Math.round(base * (1 + (2 * r - 1) * JITTER_RATIO));
  const retryAfter = opts.retryAfterSec;
  if (typeof retryAfter === 'number' && Number.isFinite(retryAfter) && retryAfter > 0) {
    const cap = Math.max(...delays);
    wait = Math.max(wait, Math.ceil(Math.min(retryAfter, cap)));
  }
  return wait;
}
