/**
 * The dispatcher: turns due rows of `webhook_deliveries` into messages on the DELIVERIES stream.
 *
 * PostgreSQL holds the schedule (`next_attempt_at`), so retries survive restarts of every process; JetStream only
 * carries "attempt this now" messages. A claim leases rows atomically (`FOR UPDATE SKIP LOCKED`, so any number of
 * workers may dispatch at once) and bumps `claim_seq`; the message carries that number. A worker that dies
 * mid-attempt leaves a lease that simply expires, and the row is claimed and published again.
 *
 * Concurrency is bounded in the claim itself, across every worker: at most `perEndpoint` leased rows per endpoint
 * and `maxInFlight` overall, so a dead endpoint (every attempt held for the 5 s timeout) occupies a few slots and
 * never the queue in front of healthy endpoints.
 */
import type { MikroORM } from '@mikro-orm/postgresql';
import { sql, type EntityManager } from '../../db/src/index.js';
import type { Bus } from '../../bus/src/index.js';
import type { Logger } from '../../log/src/index.js';
import type { DeliveryCommand } from '../../contracts/src/index.js';

export interface ClaimLimits {
  /** Leased rows per endpoint, across every worker: deep enough to keep its requests busy while rows travel. */
  perEndpoint: number;
  /**
   * Leased rows per endpoint while it is slow: some row of it has been leased for more than `slowAfterSec`
   * (healthy receivers answer in milliseconds; a dead one holds every request for the full timeout). Set to the
   * requests one worker makes to an endpoint at once, so a dead endpoint holds few slots.
   */
  perSlowEndpoint: number;
  slowAfterSec: number;
  /** Leased rows overall. */
  maxInFlight: number;
  /** Rows claimed per statement. */
  batch: number;
  /** Lease given at claim time: covers the wait in the stream before a worker starts the attempt. */
  leaseSec: number;
}

interface ClaimedRow {
  id: string;
  endpoint_id: string;
  claim_seq: number;
  attempts: number;
  max_attempts: number;
  event_id: string;
  event_type: string;
  payload: string;
  url: string;
}

/**
 * Leases due pending deliveries of active endpoints, oldest due first, within the per-endpoint and overall bounds.
 *
 * The endpoints with pending rows are found with a loose index scan (one probe per endpoint, not per row), and
 * each endpoint contributes at most its free slots: a backlog of thousands of rows for one dead endpoint costs
 * the claim nothing, and a slow endpoint gets fewer slots than a fast one. Two dispatchers racing may both read
 * the same free-slot counts; SKIP LOCKED and the re-check of the lease under the row lock keep them from claiming
 * the same row.
 *
 * Returns, per row, the message that attempts it: everything the POST needs except the signing secret, with the
 * endpoint's URL as of now.
 */
export async function claimDue(em: EntityManager, limits: ClaimLimits): Promise<DeliveryCommand[]> {
  const rows = await sql<ClaimedRow>(
    em,
    `with recursive eps(endpoint_id) as (
       (select endpoint_id from webhook_deliveries where status = 'pending' order by endpoint_id limit 1)
       union all
       (select (select d.endpoint_id from webhook_deliveries d
                 where d.status = 'pending' and d.endpoint_id > eps.endpoint_id order by d.endpoint_id limit 1)
          from eps where eps.endpoint_id is not null)
     ),
     leased as (
       select endpoint_id, count(*)::int as n,
              bool_or(locked_until < now() + make_interval(secs => ?::int - ?::int)) as slow
         from webhook_deliveries
        where status = 'pending' and locked_until > now() group by endpoint_id
     ),
     picked as (
       select c.id, c.next_attempt_at from eps
         join webhook_endpoints e on e.id = eps.endpoint_id and e.is_active
         left join leased l on l.endpoint_id = eps.endpoint_id
         cross join lateral (
           select d.id, d.next_attempt_at from webhook_deliveries d
            where d.endpoint_id = eps.endpoint_id and d.status = 'pending' and d.next_attempt_at <= now()
              and (d.locked_until is null or d.locked_until <= now())
            order by d.next_attempt_at, d.id
            limit greatest(0, (case when l.slow then ?::int else ?::int end) - coalesce(l.n, 0))
         ) c
        order by c.next_attempt_at
        limit greatest(0, least(?::int, ?::int - (select coalesce(sum(n), 0) from leased)))
     ),
     locked as (
       select d.id from webhook_deliveries d
        where d.id = any (array(select id from picked))
          and d.status = 'pending' and (d.locked_until is null or d.locked_until <= now())
          for update skip locked
     )
     update webhook_deliveries d
        set locked_until = now() + make_interval(secs => ?::int), claim_seq = d.claim_seq + 1
       from webhook_endpoints e
      where d.id = any (array(select id from locked)) and e.id = d.endpoint_id
     returning d.id, d.endpoint_id, d.claim_seq, d.attempts, d.max_attempts, d.event_id, d.event_type, d.payload,
               e.url`,
    [
      limits.leaseSec,
      limits.slowAfterSec,
      limits.perSlowEndpoint,
      limits.perEndpoint,
      limits.batch,
      limits.maxInFlight,
      limits.leaseSec,
    ],
  );
  return rows.map((r) => ({
    deliveryId: r.id,
    endpointId: r.endpoint_id,
    claim: Number(r.claim_seq),
    attempt: Number(r.attempts) + 1,
    maxAttempts: Number(r.max_attempts),
    eventId: r.event_id,
    eventType: r.event_type,
    url: r.url,
    payload: r.payload,
  }));
}

/** Gives a lease back (the publish failed) so the next pass claims the row again. */
async function releaseClaims(em: EntityManager, claims: DeliveryCommand[]): Promise<void> {
  for (const c of claims) {
    await sql(
      em,
      `update webhook_deliveries set locked_until = null where id = ? and claim_seq = ? and status = 'pending'`,
      [c.deliveryId, c.claim],
    );
  }
}

export function deliverySubject(bus: Bus): string {
  return bus.names.subject('deliveries', 'send');
}

/** Core-NATS subject that wakes every dispatcher (after a resend or a test send from the API). */
export function dispatchKickSubject(bus: Bus): string {
  return bus.names.subject('webhooks', 'kick');
}

/** Asks every running dispatcher to look for due rows now; the periodic poll finds them anyway. */
export function kickDispatchers(bus: Bus): void {
  if (!bus.nc.isClosed()) bus.nc.publish(dispatchKickSubject(bus));
}

export interface Dispatcher {
  kick(): void;
  /** One claim-and-publish pass; returns how many rows were published. */
  passOnce(): Promise<number>;
  stop(): Promise<void>;
}

export function startDispatcher(deps: {
  orm: MikroORM;
  bus: Bus;
  log: Logger;
  limits: ClaimLimits;
  /** Poll for rows that became due (retries) at this interval. */
  pollMs: number;
}): Dispatcher {
  const { orm, bus, log, limits } = deps;
  const subject = deliverySubject(bus);
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | null = null;
  let again = false;

  const passOnce = async (): Promise<number> => {
    const em = orm.em.fork();
    const claimed = await claimDue(em, limits);
    if (claimed.length === 0) return 0;
    const results = await Promise.allSettled(
      claimed.map((cmd) =>
        bus.publish(subject, cmd, { msgId: `${cmd.deliveryId}:${cmd.claim}`, timeoutMs: 5000 }),
      ),
    );
    const failed = claimed.filter((_, i) => results[i].status === 'rejected');
    if (failed.length) {
      const reason = (results.find((r) => r.status === 'rejected') as PromiseRejectedResult).reason;
      log.warn(
        { err: reason, failed: failed.length },
        'webhook dispatcher: publish failed; releasing the claims',
      );
      await releaseClaims(em, failed);
    }
    return claimed.length - failed.length;
  };

  const pass = async (): Promise<void> => {
    try {
      let n: number;
      do {
        again = false;
        n = await passOnce();
      } while ((n >= limits.batch || again) && !stopped);
    } catch (err) {
      log.warn({ err }, 'webhook dispatcher pass failed; will retry');
    }
  };

  const schedule = (delay: number): void => {
    if (stopped) return;
    clearTimeout(timer);
    timer = setTimeout(tick, delay);
  };

  const tick = (): void => {
    if (running) {
      again = true;
      return;
    }
    running = pass().finally(() => {
      running = null;
      schedule(deps.pollMs);
    });
  };

  schedule(0);
  return {
    kick() {
      if (stopped) return;
      if (running) again = true;
      else schedule(0);
    },
    passOnce,
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await running;
    },
  };
}
