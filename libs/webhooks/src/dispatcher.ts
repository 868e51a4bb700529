/**
 * The dispatcher: claims due rows of `webhook_deliveries` and hands them to this worker's sender, in-process.
 *
 * PostgreSQL holds the schedule (`next_attempt_at`), so retries survive restarts of every process; nothing waits
 * in a timer in memory. A claim leases rows atomically (`FOR UPDATE SKIP LOCKED`, so any number of workers may
 * claim at once) for a short lease (the request deadline plus a margin) and bumps `claim_seq`; only the holder of
 * the current claim may record an attempt. A worker that dies mid-attempt leaves a lease that simply expires
 * within seconds, and the row is claimed again (by any worker). The sender renews the leases of rows it still
 * holds (waiting for a request slot of their endpoint), so a live worker's rows are never taken over.
 *
 * Concurrency is bounded by each worker for itself, in the claim: it claims no more than its free slots, and of each
 * endpoint no more than the room it has for it (`EndpointRoom`: its bound less the rows of it the worker holds, a
 * low bound while the endpoint is slow), so a dead endpoint (every attempt held for the 5 s timeout) occupies a few
 * of its slots and never the queue in front of healthy endpoints. The worker knows what it holds; nothing in the
 * table counts leases, so a lease changes only columns no index holds and is written heap-only (see
 * Migration20261202000100_claims_hot).
 */
import type { MikroORM } from '@mikro-orm/postgresql';
import type { EntityManager } from '@lectern/db';
import { boundQuery } from '@lectern/db';
import type { Bus } from '@lectern/bus';
import type { Logger } from '@lectern/log';
import { startPoller } from '@lectern/poller';
import { BY_KEY, STILL_PENDING } from './plan-guards.js';

export interface ClaimLimits {
  /**
   * Rows one worker holds per endpoint (claimed and not yet recorded): deep enough to keep its requests busy
   * between claims. An endpoint the worker holds rows of claims only up to its `EndpointRoom`.
   */
  perEndpoint: number;
  /** Rows claimed per statement (at most; a worker claims no more than its free slots). */
  batch: number;
  /**
   * Lease given at claim time (and when an attempt starts): covers the attempt's deadline and its recording with
   * a margin. Rows that wait longer for a request slot have their lease renewed by the sender.
   */
  leaseSec: number;
}

/**
 * Per endpoint this worker holds rows of or has found slow, how many more it may claim now (its bound less what it
 * holds; a slow endpoint's bound is lower: see `Sender.endpointRoom`). Endpoints not listed may take `perEndpoint`.
 */
export type EndpointRoom = ReadonlyMap<string, number>;

/** One claimed delivery: everything its attempt needs except the signing secret. */
export interface ClaimedDelivery {
  deliveryId: string;
  endpointId: string;
  /** The row's `claim_seq` after this claim: only its holder may record the attempt. */
  claim: number;
  /** 1-based number of the attempt this claim makes. */
  attempt: number;
  maxAttempts: number;
  eventId: string;
  eventType: string;
  /** The endpoint's URL when the row was claimed. */
  url: string;
  /** The exact request body. */
  payload: string;
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

/** The claim's statement and its parameters (also read by the plan checks of the tests). */
export function claimDueStatement(
  limits: ClaimLimits,
  room: EndpointRoom = new Map(),
): { sql: string; params: unknown[] } {
  return {
    sql: `with recursive eps(endpoint_id) as (
         (select endpoint_id from webhook_deliveries where status = 'pending' order by endpoint_id limit 1)
         union all
         (select (select d.endpoint_id from webhook_deliveries d
                   where d.status = 'pending' and d.endpoint_id > eps.endpoint_id order by d.endpoint_id limit 1)
            from eps where eps.endpoint_id is not null)
       ),
       room(endpoint_id, n) as (select * from unnest(?::text[], ?::int[])),
       picked as (
         select c.id, c.next_attempt_at from eps
           join webhook_endpoints e on e.id = eps.endpoint_id and e.is_active
           left join room r on r.endpoint_id = eps.endpoint_id
           cross join lateral (
             select d.id, d.next_attempt_at from webhook_deliveries d
              where d.endpoint_id = eps.endpoint_id and d.status = 'pending' and d.next_attempt_at <= now()
                and (d.locked_until is null or d.locked_until <= now())
              order by d.next_attempt_at, d.id
              limit greatest(0, coalesce(r.n, ?::int))
           ) c
          order by c.next_attempt_at
          limit ?::int
       ),
       locked as (
         select d.id from webhook_deliveries d
          where d.id = any (array(select id from picked))
            and ${STILL_PENDING} and (d.locked_until is null or d.locked_until <= now())
            for update skip locked
       )
       update webhook_deliveries d
          set locked_until = now() + make_interval(secs => ?::int), claim_seq = d.claim_seq + 1
         from webhook_endpoints e
        where d.id = any (array(select id from locked)) and e.id = d.endpoint_id
       returning d.id, d.endpoint_id, d.claim_seq, d.attempts, d.max_attempts, d.event_id, d.event_type, d.payload,
                 e.url`,
    params: [[...room.keys()], [...room.values()], limits.perEndpoint, limits.batch, limits.leaseSec],
  };
}

/**
 * Leases due pending deliveries of active endpoints, oldest due first, within the worker's room: `limits.batch` rows
 * at most, and per endpoint its `room` (`limits.perEndpoint` for an endpoint not listed there).
 *
 * The endpoints with pending rows are found with a loose index scan (one probe per endpoint, not per row), and
 * each endpoint contributes at most its room: a backlog of thousands of rows for one dead endpoint costs the claim
 * nothing, and a slow endpoint gets fewer slots than a fast one. Rows another worker holds are skipped (their lease
 * is live). Two dispatchers racing may pick the same rows; SKIP LOCKED and the re-check of the lease under the row
 * lock keep them from claiming the same row.
 *
 * Returns the claimed rows with the endpoint's URL as of now.
 */
export async function claimDue(
  em: EntityManager,
  limits: ClaimLimits,
  room: EndpointRoom = new Map(),
): Promise<ClaimedDelivery[]> {
  const { sql, params } = claimDueStatement(limits, room);
  const rows = await boundQuery<ClaimedRow>(
    em,
    sql,
    params,
    // The same text on every pass: parsed and planned once per connection rather than on each of the hundreds of
    // claims a burst makes.
    { prepared: true },
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

type ClaimRef = Pick<ClaimedDelivery, 'deliveryId' | 'claim' | 'attempt'>;

const claimTuples = (claims: ClaimRef[], params: unknown[]): string =>
  claims
    .map((c) => {
      params.push(c.deliveryId, c.claim, c.attempt);
      return '(?::text, ?::int, ?::int)';
    })
    .join(', ');

/**
 * Renews claims for `leaseSec` from now, for each one that may still make its attempt: the row is pending,
 * carries this claim (nobody claimed it since, even if the lease ran out meanwhile), has not recorded this
 * attempt and has not been released, and its endpoint is active. Returns, per claim, the endpoint's current URL,
 * or null when the claim is no longer good (nothing must be sent for it).
 */
export async function renewClaims(
  em: EntityManager,
  claims: ClaimRef[],
  leaseSec: number,
): Promise<(string | null)[]> {
  if (claims.length === 0) return [];
  const { sql, params } = renewClaimsStatement(claims, leaseSec);
  const rows = await boundQuery<{ id: string; claim_seq: number; url: string }>(em, sql, params);
  const urls = new Map(rows.map((r) => [`${r.id}:${Number(r.claim_seq)}`, r.url]));
  return claims.map((c) => urls.get(`${c.deliveryId}:${c.claim}`) ?? null);
}

/** `renewClaims`' statement (also read by the plan checks of the tests). */
export function renewClaimsStatement(
  claims: ClaimRef[],
  leaseSec: number,
): { sql: string; params: unknown[] } {
  const params: unknown[] = [leaseSec];
  const values = claimTuples(claims, params);
  return {
    sql: `with lease(secs) as (select ?::int), v(id, claim, attempt) as (values ${values})
     update webhook_deliveries d set locked_until = now() + make_interval(secs => lease.secs)
       from v, lease, webhook_endpoints e
      where ${BY_KEY} and d.id = v.id and d.claim_seq = v.claim and d.attempts + 1 = v.attempt and ${STILL_PENDING}
        and d.locked_until is not null and e.id = d.endpoint_id and e.is_active
     returning d.id, d.claim_seq, e.url`,
    params,
  };
}

/** Gives leases back (a worker stopping before their attempts started) so the next claim takes the rows at once. */
export async function releaseClaims(em: EntityManager, claims: ClaimRef[]): Promise<void> {
  if (claims.length === 0) return;
  const { sql, params } = releaseClaimsStatement(claims);
  await boundQuery(em, sql, params);
}

/** `releaseClaims`' statement (also read by the plan checks of the tests). */
export function releaseClaimsStatement(claims: ClaimRef[]): { sql: string; params: unknown[] } {
  const params: unknown[] = [];
  const values = claimTuples(claims, params);
  return {
    sql: `with v(id, claim, attempt) as (values ${values})
     update webhook_deliveries d set locked_until = null
       from v where ${BY_KEY} and d.id = v.id and d.claim_seq = v.claim and d.attempts + 1 = v.attempt
        and ${STILL_PENDING}`,
    params,
  };
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
  /** One claim pass; returns how many rows were claimed and handed over. */
  passOnce(): Promise<number>;
  stop(): Promise<void>;
}

export function startDispatcher(deps: {
  orm: MikroORM;
  log: Logger;
  limits: ClaimLimits;
  /** Poll for rows that became due (retries) at this interval. */
  pollMs: number;
  /** The least time between the end of a pass and a pass started by a kick (`startPoller`'s `kickGapMs`). */
  kickGapMs?: number;
  /** Free local slots: rows this worker can take now. */
  room(): number;
  /** Per endpoint this worker holds rows of or has found slow, how many more it may take now. */
  endpointRoom(): EndpointRoom;
  /** Takes the claimed rows (starts their attempts), leased at `leasedAt` (performance.now()); must not throw. */
  hand(rows: ClaimedDelivery[], leasedAt: number): void;
}): Dispatcher {
  const { orm, log, limits } = deps;
  let stopped = false;

  const passOnce = async (): Promise<number> => {
    const batch = Math.min(limits.batch, deps.room());
    if (batch <= 0 || stopped) return 0;
    const leasedAt = performance.now();
    const claimed = await claimDue(orm.em.fork(), { ...limits, batch }, deps.endpointRoom());
    if (claimed.length) deps.hand(claimed, leasedAt);
    return claimed.length;
  };

  const poller = startPoller({
    // As many rows as there was room for: more may be due, and there is room again once some were handed over.
    step: async () => {
      const want = Math.min(limits.batch, deps.room());
      const n = await passOnce();
      return want > 0 && n >= want && deps.room() > 0;
    },
    intervalMs: deps.pollMs,
    kickGapMs: deps.kickGapMs,
    onError: (err) => log.warn({ err }, 'webhook dispatcher pass failed; will retry'),
  });
  return {
    kick: () => poller.kick(),
    passOnce,
    async stop() {
      stopped = true;
      await poller.stop();
    },
  };
}
