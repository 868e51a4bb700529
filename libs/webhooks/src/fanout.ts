/**
 * Fan-out: one delivery row per active endpoint of the event's workspace subscribed to its type.
 *
 * Idempotent on (event id, endpoint): JetStream redelivers an event after a crash, the relay may publish it twice,
 * and two workers may see it; `INSERT … ON CONFLICT DO NOTHING` makes every repeat a no-op, with no
 * check-then-insert race. Endpoints created after the event do not receive it. Events are fanned out in batches
 * (two statements per batch), see `Batcher`.
 */
import { newId, sql, type EntityManager } from '../../db/src/index.js';
import type { EventEnvelope } from '../../contracts/src/index.js';
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

/** Creates the deliveries of these events; returns, per event, how many were new. */
export async function fanOutEvents(em: EntityManager, envs: EventEnvelope[]): Promise<number[]> {
  if (envs.length === 0) return [];
  const params: unknown[] = [];
  const tuples = envs.map((env, i) => {
    params.push(i, env.workspaceId, env.type, env.createdAt);
    return '(?::int, ?::text, ?::text, ?::timestamptz)';
  });
  const targets = await sql<{ idx: number; endpoint_id: string }>(
    em,
    `select v.idx, e.id as endpoint_id
       from (values ${tuples.join(', ')}) as v(idx, workspace_id, type, created_at)
       join webhook_endpoints e
         on e.workspace_id = v.workspace_id and e.is_active and v.type = any (e.event_types)
        and e.created_at <= v.created_at`,
    params,
  );
  const created = envs.map(() => 0);
  if (targets.length === 0) return created;
  const bodies = new Map<number, string>();
  const insertParams: unknown[] = [MAX_ATTEMPTS];
  const rows = targets.map((t) => {
    const env = envs[t.idx];
    if (!bodies.has(t.idx)) bodies.set(t.idx, envelopeBody(env));
    insertParams.push(newId('whd'), t.endpoint_id, env.id, env.type, bodies.get(t.idx));
    return '(?::text, ?::text, ?::text, ?::text, ?::text)';
  });
  const inserted = await sql<{ event_id: string }>(
    em,
    `insert into webhook_deliveries
       (id, workspace_id, endpoint_id, event_id, event_type, payload, status, attempts, max_attempts,
        next_attempt_at, created_at, updated_at)
     select v.id, e.workspace_id, e.id, v.event_id, v.event_type, v.payload, 'pending', 0, x.max_attempts,
            now(), now(), now()
       from (select ?::int as max_attempts) x
       cross join (values ${rows.join(', ')}) as v(id, endpoint_id, event_id, event_type, payload)
       join webhook_endpoints e on e.id = v.endpoint_id and e.is_active
     on conflict (event_id, endpoint_id) do nothing
     returning event_id`,
    insertParams,
  );
  const index = new Map(envs.map((e, i) => [e.id, i]));
  for (const r of inserted) created[index.get(r.event_id)!]++;
  return created;
}

/** Creates the deliveries of one event; returns how many were new. */
export async function fanOutEvent(em: EntityManager, env: EventEnvelope): Promise<number> {
  return (await fanOutEvents(em, [env]))[0];
}
