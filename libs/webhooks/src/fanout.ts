/**
 * Fan-out: one delivery row per active endpoint of the event's workspace subscribed to its type.
 *
 * Idempotent on (event id, endpoint): JetStream redelivers an event after a crash, the relay may publish it twice,
 * and two workers may see it; `INSERT … ON CONFLICT DO NOTHING` makes every repeat a no-op, with no
 * check-then-insert race. Endpoints created after the event do not receive it. Events are fanned out in batches
 * (two statements per batch), see `Batcher`.
 */
import { boundQuery, newId, type EntityManager } from '@lectern/db';
import type { EventEnvelope } from '@lectern/contracts';
import { MAX_ATTEMPTS } from './retry.js';

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

/** Creates the deliveries of these events; returns, per event, how many were new. */
export async function fanOutEvents(em: EntityManager, envs: EventEnvelope[]): Promise<number[]> {
  if (envs.length === 0) return [];
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
    { prepared: true },
  );
  const created = envs.map(() => 0);
  if (targets.length === 0) return created;
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
      const env = envs[t.idx];
      events.id.push(env.id);
      events.type.push(env.type);
      events.body.push(envelopeBody(env));
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
  const index = new Map(envs.map((e, i) => [e.id, i]));
  for (const r of inserted) created[index.get(r.event_id)!]++;
  return created;
}

/** Creates the deliveries of one event; returns how many were new. */
export async function fanOutEvent(em: EntityManager, env: EventEnvelope): Promise<number> {
  return (await fanOutEvents(em, [env]))[0];
}
