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
 * The events with deliveries, as one `json` value: `[{"i": index, "id", "type", "body": <the body itself>}]`.
 *
 * Each body is spliced in as the JSON text it is, not as a string: bound as a text array instead, every body had
 * its quotes escaped by the driver (a measured share of the worker's CPU) and unescaped again by PostgreSQL. A
 * `json` value (not `jsonb`) keeps its text as written, so `body::text` is these exact bytes, the ones signed and
 * sent. The exception is a body with a `\u` escape, which `JSON.stringify` writes only for control characters and
 * lone surrogates: PostgreSQL refuses to read `\u0000` or a lone surrogate into a record, and one such body would
 * fail its whole batch, so such a body goes as a JSON string (escaped here, unescaped there), the old way.
 */
function eventsJson(envs: EventEnvelope[], bodies: Map<number, string>): string {
  const parts: string[] = [];
  for (const [i, body] of bodies) {
    const env = envs[i];
    const value = body.includes('\\u') ? JSON.stringify(body) : body;
    parts.push(
      `{"i":${i},"id":${JSON.stringify(env.id)},"type":${JSON.stringify(env.type)},"body":${value}}`,
    );
  }
  return `[${parts.join(',')}]`;
}

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
  // Per delivery only its id, endpoint and event (short, plain strings); the bodies go once per event in one json
  // document, each embedded as the JSON it already is.
  const cols = { id: [] as string[], endpoint: [] as string[], idx: [] as number[] };
  const bodies = new Map<number, string>();
  for (const t of targets) {
    if (!bodies.has(t.idx)) bodies.set(t.idx, envelopeBody(envs[t.idx]));
    cols.id.push(newId('whd'));
    cols.endpoint.push(t.endpoint_id);
    cols.idx.push(t.idx);
  }
  const inserted = await boundQuery<{ event_id: string }>(
    em,
    `insert into webhook_deliveries
       (id, workspace_id, endpoint_id, event_id, event_type, payload, status, attempts, max_attempts,
        next_attempt_at, created_at, updated_at)
     select t.id, e.workspace_id, e.id, v.id, v.type,
            case when json_typeof(v.body) = 'string' then v.body #>> '{}' else v.body::text end,
            'pending', 0, ?::int, now(), now(), now()
       from unnest(?::text[], ?::text[], ?::int[]) as t(id, endpoint_id, idx)
       join json_to_recordset(?::json) as v(i int, id text, type text, body json) on v.i = t.idx
       join webhook_endpoints e on e.id = t.endpoint_id and e.is_active
     on conflict (event_id, endpoint_id) do nothing
     returning event_id`,
    [MAX_ATTEMPTS, cols.id, cols.endpoint, cols.idx, eventsJson(envs, bodies)],
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
