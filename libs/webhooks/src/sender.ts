/**
 * The sender: attempts the deliveries this worker claimed, in-process, one attempt each.
 *
 * 1. A claimed row carries what the POST needs (claimed moments ago, with the endpoint's URL of that moment);
 *    only the signing secret comes from PostgreSQL, once per endpoint per process (`SigningSecrets`).
 * 2. It waits for a request slot of its endpoint (`KeyedLimiter`: at most `perEndpoint` requests at once per
 *    endpoint in this process). When it waited longer than a moment, the claim is renewed and checked first in the
 *    same statement (`renewClaims`): still this claim's, still pending, endpoint still active; if not, nothing is
 *    sent. Either way the attempt starts with most of a lease ahead of it (the request deadline plus a margin).
 *    Meanwhile the leases of waiting rows are renewed (`startLeaseRenewal`).
 * 3. POST with `deliverOnce` (SSRF check after DNS resolution, pinned address, 5 s deadline, no redirects).
 * 4. The result decides the delivery's next state (`decideOutcome`), recorded with the attempt and guarded by the
 *    claim (`recordAttempts`); a change in the endpoint's health is written after it, and an endpoint whose
 *    deliveries have all failed for days is switched off (`trackEndpointHealth`).
 *
 * Re-checks and records of concurrent attempts are grouped into one statement each (`Batcher`).
 */
import type { MikroORM } from '@mikro-orm/postgresql';
import type { Logger } from '@lectern/log';
import { signatureHeaders } from './signature.js';
import { deliverOnce, type DeliveryResult } from './deliver.js';
import { Batcher } from '@lectern/db';
import { GROUP_COMMIT, RECORD_GROUP_COMMIT } from './group-commit.js';
import { releaseClaims, renewClaims, type ClaimedDelivery } from './dispatcher.js';
import type { HostResolver } from '@lectern/outbound';
import { SigningSecrets } from './signing-secrets.js';
import { KeyedLimiter } from './keyed-limiter.js';
import { decideOutcome } from './outcome.js';
import { recordAttempts, type AttemptRecord } from './attempt-records.js';
import { SWITCH_OFF_AFTER_DAYS, trackEndpointHealth } from './endpoint-health.js';
import { startLeaseRenewal, type HeldClaim } from './lease-renewal.js';

/**
 * A claim whose lease was given longer ago than this (it waited for a request slot: its endpoint is slow) is
 * renewed and checked again before sending: the delivery may have been cancelled or its endpoint changed
 * meanwhile. Shorter waits are the normal queueing of a busy healthy endpoint, not worth a statement each.
 */
const RECHECK_AFTER_MS = 1000;
/** How long an endpoint counts as slow after its last slow request (`endpointRoom`) when no quicker one follows. */
const SLOW_REMEMBERED_MS = 60_000;

export interface SenderDeps {
  orm: MikroORM;
  log: Logger;
  key: Buffer;
  delays: readonly number[];
  allowPrivate: boolean;
  lookup?: HostResolver;
  timeoutMs: number;
  /** Concurrent POSTs per endpoint in this process. */
  perEndpoint: number;
  /** The claim lease (seconds): an attempt starts with at least this much less a second ahead of it. */
  leaseSec: number;
  /** An endpoint with a row held here longer than this (seconds) is slow: see `holdPerSlowEndpoint`. */
  slowAfterSec: number;
  /** Rows held per endpoint at most (claimed and not yet recorded here): see `endpointRoom`. */
  holdPerEndpoint: number;
  /** The same for an endpoint that is slow: see `Sender.endpointRoom`. */
  holdPerSlowEndpoint: number;
  /** How long an endpoint stays slow after a slow request when no quicker one follows. Default 60 s. */
  slowRememberedMs?: number;
  /**
   * Called when an attempt settles and its endpoint has fewer than `refillBelow` claimed rows left waiting for a
   * request slot here: the dispatcher may claim more. While more are waiting, the endpoint's requests stay busy
   * from what this process holds, and a claim would take only the few leases freed since the last one.
   */
  onRefill?: (endpointId: string) => void;
  /** See `onRefill`. Default: called after every attempt. */
  refillBelow?: number;
  /** Called with each attempt's result as it comes in (metrics). */
  onAttempt?: (result: DeliveryResult) => void;
}

export interface Sender {
  /** Attempts a claimed row whose lease was given at `leasedAt` (performance.now()); never rejects. */
  take(row: ClaimedDelivery, leasedAt: number): Promise<void>;
  /** Rows held: waiting for a request slot, being attempted or being recorded. */
  held(): number;
  /** Rows of this endpoint held and still waiting for a request slot. */
  waiting(endpointId: string): number;
  /**
   * Per endpoint with rows held here, or slow lately, how many more this worker may claim: its bound less the rows
   * held. The bound is `holdPerSlowEndpoint` while the endpoint is slow, `holdPerEndpoint` otherwise; it is slow
   * while a row of it has been held longer than `slowAfterSec`, and after a request to it took that long until one
   * answers sooner (or `slowRememberedMs` passes without such a request): healthy receivers answer in
   * milliseconds, a dead one holds every request for the full timeout, and once its held rows have all timed out
   * it would otherwise take the full bound again.
   */
  endpointRoom(): Map<string, number>;
  /** Gives back the leases of rows still waiting for a slot; lets attempts under way finish and record. */
  stop(): Promise<void>;
}

interface Held extends HeldClaim {
  /** Past its wait for a request slot. */
  started: boolean;
  /** performance.now() when this worker took it. */
  takenAt: number;
}

export function createSender(deps: SenderDeps): Sender {
  const limiter = new KeyedLimiter(deps.perEndpoint);
  const secrets = new SigningSecrets(deps.orm, deps.key);
  const rechecks = new Batcher(
    (rows: ClaimedDelivery[]) => renewClaims(deps.orm.em.fork(), rows, deps.leaseSec),
    GROUP_COMMIT,
  );
  const records = new Batcher(async (recs: AttemptRecord[]) => {
    const recorded = await recordAttempts(deps.orm.em.fork(), recs);
    try {
      const off = await trackEndpointHealth(deps.orm, recs, recorded);
      if (off.length)
        deps.log.warn(
          { endpointIds: off, days: SWITCH_OFF_AFTER_DAYS },
          'webhook endpoints switched off: every delivery failed for days',
        );
    } catch (err) {
      // The attempts are recorded; the next change of health (a 2xx, a failure) writes it again.
      deps.log.warn({ err }, 'webhook endpoint health not updated');
    }
    return recorded.written;
  }, RECORD_GROUP_COMMIT);
  const held = new Set<Held>();
  const running = new Set<Promise<void>>();
  /** Per endpoint: held rows not yet past their wait for a request slot. */
  const waiting = new Map<string, number>();
  const waitingOf = (endpointId: string) => waiting.get(endpointId) ?? 0;
  const wait = (endpointId: string, by: 1 | -1) => {
    const n = waitingOf(endpointId) + by;
    if (n > 0) waiting.set(endpointId, n);
    else waiting.delete(endpointId);
  };
  const refillBelow = deps.refillBelow ?? Infinity;
  /** Per endpoint: the rows held, in the order taken (a Set iterates in insertion order: the first is the oldest). */
  const byEndpoint = new Map<string, Set<Held>>();
  const slowAfterMs = deps.slowAfterSec * 1000;
  /** Per endpoint: when (performance.now()) its last request that took longer than slowAfterMs ended. */
  const slowAt = new Map<string, number>();
  const slowRememberedMs = deps.slowRememberedMs ?? SLOW_REMEMBERED_MS;

  const renewal = startLeaseRenewal({
    orm: deps.orm,
    log: deps.log,
    held: () => held,
    leaseSec: deps.leaseSec,
  });

  async function attempt(cmd: ClaimedDelivery, url: string): Promise<DeliveryResult | null> {
    let secret: string | null;
    try {
      secret = await secrets.get(cmd.endpointId);
    } catch (err) {
      deps.log.error(
        { err, endpointId: cmd.endpointId },
        'webhook signing secret cannot be decrypted: was WEBHOOK_SECRET_KEY changed?',
      );
      return {
        statusCode: null,
        error: 'signing secret cannot be decrypted (WEBHOOK_SECRET_KEY changed?)',
        durationMs: 0,
        responseBody: '',
        retryAfterSec: null,
        outcome: 'retry',
      };
    }
    if (secret === null) return null; // the endpoint was deleted, and its deliveries with it
    // Encoded once: both signatures and the request use these exact bytes.
    const body = Buffer.from(cmd.payload, 'utf8');
    const headers = signatureHeaders({ secret, eventId: cmd.eventId, eventType: cmd.eventType, body });
    return deliverOnce({
      url,
      body,
      headers,
      timeoutMs: deps.timeoutMs,
      allowPrivate: deps.allowPrivate,
      lookup: deps.lookup,
    });
  }

  async function run(h: Held): Promise<void> {
    const cmd = h.row;
    // The per-endpoint slot is taken first, so time spent waiting for it never eats into the 5 s deadline. It is
    // given back as soon as the response is in: recording does not hold up the next request to that endpoint.
    const waited = await limiter.acquire(cmd.endpointId);
    if (waited < 0) return; // stopping: the lease is given back by stop()
    h.started = true;
    wait(cmd.endpointId, -1);
    let slot = true;
    const release = () => {
      if (slot) limiter.release(cmd.endpointId);
      slot = false;
    };
    try {
      if (h.lost) return;
      let url: string | null = cmd.url;
      if (performance.now() - h.leasedAt > RECHECK_AFTER_MS) {
        const at = performance.now();
        url = await rechecks.add(cmd);
        h.leasedAt = at;
      }
      if (url === null) return;
      const startedAt = new Date();
      const result = await attempt(cmd, url);
      release();
      if (result === null) return;
      deps.onAttempt?.(result);
      if (result.durationMs > slowAfterMs) slowAt.set(cmd.endpointId, performance.now());
      else slowAt.delete(cmd.endpointId);
      const outcome = decideOutcome(result, cmd.attempt, cmd.maxAttempts, deps.delays);
      const record: AttemptRecord = { cmd, result, startedAt, outcome };
      const written = await records.add(record);
      if (!written) {
        deps.log.warn(
          { deliveryId: cmd.deliveryId, attempt: cmd.attempt },
          'webhook attempt not recorded: the delivery was claimed again or already recorded',
        );
      } else if (outcome.status !== 'delivered') {
        deps.log.info(
          {
            deliveryId: cmd.deliveryId,
            endpointId: cmd.endpointId,
            attempt: cmd.attempt,
            error: result.error,
            next: outcome.status,
          },
          'webhook attempt failed',
        );
      }
    } finally {
      release();
    }
  }

  return {
    take(row, leasedAt) {
      const h: Held = { row, leasedAt, started: false, lost: false, takenAt: performance.now() };
      held.add(h);
      let mine = byEndpoint.get(row.endpointId);
      if (!mine) byEndpoint.set(row.endpointId, (mine = new Set()));
      mine.add(h);
      wait(row.endpointId, 1);
      const p = run(h)
        .catch((err: unknown) => {
          // The database failed under a check or a record: the lease runs out and the row is claimed again.
          deps.log.warn(
            { err, deliveryId: row.deliveryId },
            'webhook attempt failed to complete; will retry',
          );
        })
        .finally(() => {
          held.delete(h);
          mine.delete(h);
          if (mine.size === 0) byEndpoint.delete(row.endpointId);
          running.delete(p);
          if (!h.started) wait(row.endpointId, -1);
          if (waitingOf(row.endpointId) < refillBelow) deps.onRefill?.(row.endpointId);
        });
      running.add(p);
      return p;
    },
    held: () => held.size,
    waiting: waitingOf,
    endpointRoom() {
      const now = performance.now();
      const room = new Map<string, number>();
      for (const [endpointId, at] of slowAt) {
        if (now - at > slowRememberedMs) slowAt.delete(endpointId);
        else room.set(endpointId, deps.holdPerSlowEndpoint);
      }
      for (const [endpointId, rows] of byEndpoint) {
        const oldest = rows.values().next().value as Held;
        const slow = slowAt.has(endpointId) || now - oldest.takenAt > slowAfterMs;
        room.set(
          endpointId,
          Math.max(0, (slow ? deps.holdPerSlowEndpoint : deps.holdPerEndpoint) - rows.size),
        );
      }
      return room;
    },
    async stop() {
      renewal.stop();
      const notStarted = [...held].filter((h) => !h.started).map((h) => h.row);
      limiter.abortWaiting();
      try {
        await releaseClaims(deps.orm.em.fork(), notStarted);
      } catch (err) {
        deps.log.warn({ err }, 'webhook worker: leases not given back; they run out on their own');
      }
      await Promise.allSettled([...running]);
    },
  };
}
