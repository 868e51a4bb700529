/**
 * Fan-out: one delivery row per active endpoint of the event's workspace subscribed to its type.
 *
 * Idempotent on (event id, endpoint): JetStream redelivers an event after a crash, the relay may publish it twice,
 * and two workers may see it; `INSERT … ON CONFLICT DO NOTHING` makes every repeat a no-op, with no
 * check-then-insert race. Endpoints created after the event do not receive it. Events are fanned out in batches
 * (two statements per batch), see `Batcher`; the second also leases new rows to the fan-out worker (`FanOutLease`).
 */
import { boundQuery, newId, type EntityManager } from '@lectern/db';
import type { EventEnvelope } from '@lectern/contracts';
import { MAX_ATTEMPTS } from './retry.js';
import type { ClaimedDelivery, ClaimLimits } from './dispatcher.js';

/** The exact request body of every delivery of this event. */
export function envelopeBody(env: EventEnvelope): string {
  return JSON.stringify({
    id: env.id,
    type: env.type,
    createdAt: env.createdAt,
    workspaceId: env.workspaceId,
    data: env.data,
  });
}

/**
 * Leasing new deliveries as they are written: the fan-out worker attempts them itself, so a fresh delivery costs
 * no claim statement (and no second update of its row) on its way to its first attempt.
 */
export interface FanOutLease {
  /** The claim's bounds; new rows are leased only within them, exactly as `claimDue` would lease them. */
  limits: Omit<ClaimLimits, 'batch'>;
  /** Rows this worker can take now (its free local slots); 0 leases nothing. */
  room: number;
}

export interface FanOut {
  /** Per event, how many deliveries were new. */
  created: number[];
  /** The new deliveries leased to the caller (first attempt, `claim` 1), to be attempted like claimed rows. */
  claimed: ClaimedDelivery[];
}

/**
 * Creates the deliveries of these events; with `lease`, leases new ones to the caller in the same statement.
 *
 * The lease follows the claim's rules (`claimDue`): per endpoint at most its free slots (fewer while it is slow),
 * overall at most `maxInFlight` leased and `room` rows; the rest are written unleased and claimed later by any
 * dispatcher. A repeat of an event (already fanned out) inserts nothing and so leases nothing: a redelivered
 * message never causes a second attempt. A worker that dies before attempting its leased rows leaves leases that
 * run out within `leaseSec`, like a claim's.
 */
export async function fanOutEvents(em: EntityManager, envs: EventEnvelope[]): Promise<number[]>;
export async function fanOutEvents(
  em: EntityManager,
  envs: EventEnvelope[],
  lease: FanOutLease,
): Promise<FanOut>;
export async function fanOutEvents(
  em: EntityManager,
  envs: EventEnvelope[],
  lease?: FanOutLease,
): Promise<number[] | FanOut> {
  const out = await fanOut(em, envs, lease ?? null);
  return lease ? out : out.created;
}

async function fanOut(em: EntityManager, envs: EventEnvelope[], lease: FanOutLease | null): Promise<FanOut> {
  const created = envs.map(() => 0);
  if (envs.length === 0) return { created, claimed: [] };
  const targets = await boundQuery<{ idx: number; endpoint_id: string }>(
    em,
    `select v.idx, e.id as endpoint_id
       from unnest(?::int[], ?::text[], ?::text[], ?::timestamptz[]) as v(idx, workspace_id, type, created_at)
       join webhook_endpoints e
         on e.workspace_id = v.workspace_id and e.is_active and v.type = any (e.event_types)
        and e.created_at <= v.created_at`,
    [
      envs.map((_, i) => i),
      envs.map((e) => e.workspaceId),
      envs.map((e) => e.type),
      envs.map((e) => e.createdAt),
    ],
  );
  if (targets.length === 0) return { created, claimed: [] };
  // One array per column (unnest): a handful of bound values whatever the number of rows.
  const cols = { id: [] as string[], endpoint: [] as string[], event: [] as string[], type: [] as string[] };
  const payloads: string[] = [];
  const bodies = new Map<string, string>();
  for (const t of targets) {
    const env = envs[t.idx];
    let body = bodies.get(env.id);
    if (body === undefined) bodies.set(env.id, (body = envelopeBody(env)));
    cols.id.push(newId('whd'));
    cols.endpoint.push(t.endpoint_id);
    cols.event.push(env.id);
    cols.type.push(env.type);
    payloads.push(body);
  }
  const l = lease?.limits;
  // Leased rows: within their endpoint's free slots (as the claim counts them), then within the overall bounds,
  // in the order of the batch. Unleased rows wait for a claim.
  const inserted = await boundQuery<{
    id: string;
    endpoint_id: string;
    event_id: string;
    event_type: string;
    max_attempts: number;
    leased: boolean;
    url: string;
  }>(
    em,
    `with v as (
       select v.*, e.workspace_id, e.url
         from unnest(?::text[], ?::text[], ?::text[], ?::text[], ?::text[]) with ordinality
                as v(id, endpoint_id, event_id, event_type, payload, ord)
         join webhook_endpoints e on e.id = v.endpoint_id and e.is_active
     ),
     leased as (
       select endpoint_id, count(*)::int as n,
              bool_or(locked_until < now() + make_interval(secs => ?::int - ?::int)) as slow
         from webhook_deliveries
        where status = 'pending' and locked_until > now() and ?::int > 0
          and endpoint_id in (select endpoint_id from v)
        group by endpoint_id
     ),
     ranked as (
       select v.*, row_number() over (partition by v.endpoint_id order by v.ord)
                     <= (case when l.slow then ?::int else ?::int end) - coalesce(l.n, 0) as fits
         from v left join leased l on l.endpoint_id = v.endpoint_id
     ),
     picked as (
       select r.*, r.fits and row_number() over (partition by r.fits order by r.ord)
                     <= least(?::int, ?::int - (select count(*) from webhook_deliveries
                                                 where status = 'pending' and locked_until > now() and ?::int > 0))
                   as lease
         from ranked r
     ),
     ins as (
       insert into webhook_deliveries
         (id, workspace_id, endpoint_id, event_id, event_type, payload, status, attempts, max_attempts,
          next_attempt_at, locked_until, claim_seq, created_at, updated_at)
       select p.id, p.workspace_id, p.endpoint_id, p.event_id, p.event_type, p.payload, 'pending', 0, ?::int,
              now(), case when p.lease then now() + make_interval(secs => ?::int) end,
              case when p.lease then 1 else 0 end, now(), now()
         from picked p
       on conflict (event_id, endpoint_id) do nothing
       returning id, endpoint_id, event_id, event_type, max_attempts, locked_until is not null as leased
     )
     select ins.*, e.url from ins join webhook_endpoints e on e.id = ins.endpoint_id`,
    [
      cols.id,
      cols.endpoint,
      cols.event,
      cols.type,
      payloads,
      l?.leaseSec ?? 0,
      l?.slowAfterSec ?? 0,
      lease?.room ?? 0,
      l?.perSlowEndpoint ?? 0,
      l?.perEndpoint ?? 0,
      lease?.room ?? 0,
      l?.maxInFlight ?? 0,
      lease?.room ?? 0,
      MAX_ATTEMPTS,
      l?.leaseSec ?? 0,
    ],
  );
  const index = new Map(envs.map((e, i) => [e.id, i]));
  const claimed: ClaimedDelivery[] = [];
  for (const r of inserted) {
    created[index.get(r.event_id)!]++;
    if (r.leased)
      claimed.push({
        deliveryId: r.id,
        endpointId: r.endpoint_id,
        claim: 1,
        attempt: 1,
        maxAttempts: Number(r.max_attempts),
        eventId: r.event_id,
        eventType: r.event_type,
        url: r.url,
        payload: bodies.get(r.event_id)!,
      });
  }
  return { created, claimed };
}

/** Creates the deliveries of one event; returns how many were new. */
export async function fanOutEvent(em: EntityManager, env: EventEnvelope): Promise<number> {
  return (await fanOutEvents(em, [env]))[0];
}
