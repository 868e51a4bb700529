/**
 * Host name resolutions kept for a short while, for a process that makes many requests to the same hosts (the
 * webhook worker: thousands of deliveries a second to a few hundred endpoints).
 *
 * Without it every request resolves its host afresh: one getaddrinfo call on libuv's thread pool (four threads,
 * shared with file, zlib and crypto work), which in a cluster resolver with `ndots: 5` is several DNS round trips
 * before the answer. That bounds a process to a few thousand requests a second whatever else it could do, and adds
 * the round trips to each request's latency.
 *
 * - An answer is kept for `ttlMs` (the system resolver does not report the records' TTLs; 30 s, the JVM's default,
 *   is the worker's choice), so a customer's DNS change reaches us within that time.
 * - Concurrent resolutions of one name share one call.
 * - A failure is kept for `failureTtlMs`, so a name that does not resolve is not asked again by every request of a
 *   burst; it is asked again after that.
 * - At most `max` names are kept; past that the name resolved longest ago goes.
 * - Only the resolution is kept: every request still checks the addresses against the policy
 *   (`checkUrlResolved`) and connects to exactly the address it checked.
 */
import type { HostResolver, ResolvedAddress } from './ssrf.js';

export interface ResolverCacheOptions {
  /** How long an answer is used. 0: no cache (every call resolves). */
  ttlMs: number;
  /** How long a failure is returned without asking again. Default 1000. */
  failureTtlMs?: number;
  /** Names kept at most. Default 4096. */
  max?: number;
  /** Monotonic clock in ms (tests). Default `performance.now`. */
  now?: () => number;
}

interface Entry {
  /** Until when the entry answers; Infinity while its resolution is under way. */
  until: number;
  answer: Promise<ResolvedAddress[]>;
}

export function cachedResolver(resolve: HostResolver, opts: ResolverCacheOptions): HostResolver {
  if (opts.ttlMs <= 0) return resolve;
  const failureTtlMs = opts.failureTtlMs ?? 1000;
  const max = opts.max ?? 4096;
  const now = opts.now ?? (() => performance.now());
  const entries = new Map<string, Entry>();

  return (hostname) => {
    const hit = entries.get(hostname);
    if (hit && hit.until > now()) return hit.answer;
    entries.delete(hostname);
    const entry: Entry = { until: Infinity, answer: Promise.resolve().then(() => resolve(hostname)) };
    entry.answer.then(
      () => (entry.until = now() + opts.ttlMs),
      () => (entry.until = now() + failureTtlMs),
    );
    entries.set(hostname, entry);
    if (entries.size > max) entries.delete(entries.keys().next().value!);
    return entry.answer;
  };
}
