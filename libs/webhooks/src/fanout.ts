/**
 * Fan-out: one delivery row per active endpoint of the event's workspace subscribed to its type.
 *
 * Idempotent on (event id, endpoint): JetStream redelivers an event after a crash, the relay may publish it twice,
 * and two workers may see it; `INSERT … ON CONFLICT DO NOTHING` makes every repeat a no-op, with no
 * check-then-insert race. Endpoints created after the event do not receive it.
 *
 * The outbox relay fans out each batch it publishes, in the transaction that marks the batch sent
 * (`relayFanOut`): the deliveries exist exactly when their events count as sent, and no process has to read the
 * events back from NATS to write them. Two statements per batch: the targets, then the rows.
 */
import { boundQuery, newId, type EntityManager } from '@lectern/db';
import type { EventEnvelope } from '@lectern/contracts';
import type { Bus } from '@lectern/bus';
import type { RelayFanOut, RelayedEvent } from '@lectern/events';
import { MAX_ATTEMPTS } from './retry.js';
import { kickDispatchers } from './dispatcher.js';

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
 * Separates the bodies in the one text parameter that carries them all. `JSON.stringify` writes every control
 * character inside a string as an escape, so a body never holds this one itself.
 */
const SEPARATOR = '\u001e';

/** One delivery to write: the event at `idx` of the batch, to this endpoint. */
interface Target {
  idx: number;
  endpoint_id: string;
}

/**
 * The deliveries to write: each event (by its index in `events`) with every active endpoint of its workspace that
 * subscribes to its type and existed when it happened.
 */
function targetsOf(
  em: EntityManager,
  events: { workspaceId: string; type: string; createdAt: string }[],
): Promise<Target[]> {
  return boundQuery<Target>(
    em,
    `select v.idx, e.id as endpoint_id
       from unnest(?::int[], ?::text[], ?::text[], ?::timestamptz[]) as v(idx, workspace_id, type, created_at)
       join webhook_endpoints e
         on e.workspace_id = v.workspace_id and e.is_active and v.type = any (e.event_types)
        and e.created_at <= v.created_at`,
    [
      events.map((_, i) => i),
      events.map((e) => e.workspaceId),
      events.map((e) => e.type),
      events.map((e) => e.createdAt),
    ],
    { prepared: true },
  );
}

/** Writes the deliveries of `targets` (each event's fields from `eventAt`); returns the event id of each new row. */
async function insertDeliveries(
  em: EntityManager,
  targets: Target[],
  eventAt: (idx: number) => { id: string; type: string; body: string },
): Promise<string[]> {
  if (targets.length === 0) return [];
  // Per delivery only its id, endpoint and the event's place among the bodies (short, plain strings). The bodies go
  // once per event, as one text joined by SEPARATOR and split by PostgreSQL: no escaping in the driver (a text
  // array escaped every quote of every body) and no parsing in PostgreSQL (a json document was parsed whole), and
  // the stored payload is these exact bytes, the ones signed and sent.
  const cols = { id: [] as string[], endpoint: [] as string[], n: [] as number[] };
  const events = { id: [] as string[], type: [] as string[], body: [] as string[] };
  const place = new Map<number, number>();
  for (const t of targets) {
    let n = place.get(t.idx);
    if (n === undefined) {
      const ev = eventAt(t.idx);
      events.id.push(ev.id);
      events.type.push(ev.type);
      events.body.push(ev.body);
      n = events.body.length;
      place.set(t.idx, n);
    }
    cols.id.push(newId('whd'));
    cols.endpoint.push(t.endpoint_id);
    cols.n.push(n);
  }
  const inserted = await boundQuery<{ event_id: string }>(
    em,
    `insert into webhook_deliveries
       (id, workspace_id, endpoint_id, event_id, event_type, payload, status, attempts, max_attempts,
        next_attempt_at, created_at, updated_at)
     select t.id, e.workspace_id, e.id, v.id, v.type, v.body, 'pending', 0, ?::int, now(), now(), now()
       from unnest(?::text[], ?::text[], ?::int[]) as t(id, endpoint_id, n)
       join unnest(?::text[], ?::text[], string_to_array(?::text, chr(30))) with ordinality as v(id, type, body, n)
         on v.n = t.n
       join webhook_endpoints e on e.id = t.endpoint_id and e.is_active
     on conflict (event_id, endpoint_id) do nothing
     returning event_id`,
    [MAX_ATTEMPTS, cols.id, cols.endpoint, cols.n, events.id, events.type, events.body.join(SEPARATOR)],
    { prepared: true },
  );
  return inserted.map((r) => r.event_id);
}

/**
 * Creates the deliveries of envelopes already in hand; returns, per event, how many were new. The service writes
 * deliveries through the relay (`fanOutRelayed`); this serves the statement tests, with bodies no outbox row could
 * hold (`\u0000`, lone surrogates).
 */
export async function fanOutEvents(em: EntityManager, envs: EventEnvelope[]): Promise<number[]> {
  if (envs.length === 0) return [];
  const targets = await targetsOf(em, envs);
  const created = envs.map(() => 0);
  const index = new Map(envs.map((e, i) => [e.id, i]));
  const inserted = await insertDeliveries(em, targets, (idx) => ({
    id: envs[idx].id,
    type: envs[idx].type,
    body: envelopeBody(envs[idx]),
  }));
  for (const eventId of inserted) created[index.get(eventId)!]++;
  return created;
}

/**
 * Creates the deliveries of events the relay has just published, in its transaction; returns how many were new.
 * The targets come from the fields the relay read with the rows, so only an event with a subscribed endpoint has
 * its envelope decoded, to be written as its body in the same encoding as every other body (`envelopeBody`).
 */
export async function fanOutRelayed(em: EntityManager, sent: RelayedEvent[]): Promise<number> {
  if (sent.length === 0) return 0;
  const targets = await targetsOf(em, sent);
  const inserted = await insertDeliveries(em, targets, (idx) => ({
    id: sent[idx].id,
    type: sent[idx].type,
    body: envelopeBody(JSON.parse(sent[idx].envelope) as EventEnvelope),
  }));
  return inserted.length;
}

/**
 * The relay's fan-out: deliveries written in the transaction that marks the batch sent, then every dispatcher
 * woken (core NATS) once they are committed.
 */
export function relayFanOut(bus: Bus): RelayFanOut {
  return {
    inTransaction: async (tx, sent) => (await fanOutRelayed(tx, sent)) > 0,
    afterCommit: () => kickDispatchers(bus),
  };
}
