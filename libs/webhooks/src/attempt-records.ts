/**
 * Attempt records: each attempt's row in `webhook_attempts` and its delivery's next state, written together and
 * guarded by the claim that made the attempt.
 */
import { sql, type EntityManager } from '@lectern/db';
import { query } from './pg.js';
import type { DeliveryResult } from './deliver.js';
import type { ClaimedDelivery } from './dispatcher.js';
import type { AttemptOutcome } from './outcome.js';
import { cancelPending } from './deliveries.js';

/** PostgreSQL text cannot hold NUL. */
const clean = (s: string | null): string | null => (s === null ? null : s.replace(/\u0000/g, '\uFFFD'));

export interface AttemptRecord {
  cmd: ClaimedDelivery;
  result: DeliveryResult;
  startedAt: Date;
  outcome: AttemptOutcome;
}

/**
 * Records attempts and moves their deliveries, each guarded by its claim: only a row still leased under this
 * claim takes the record, so a worker whose lease was taken over, or a redelivered message whose attempt was
 * already recorded, writes nothing. A delivery cancelled meanwhile stays cancelled unless the attempt
 * succeeded. Returns, per record, whether it was written.
 */
export async function recordAttempts(em: EntityManager, records: AttemptRecord[]): Promise<boolean[]> {
  if (records.length === 0) return [];
  // One row per delivery per statement; a duplicate (two messages of one claim at once) is simply not recorded.
  const first = new Map<string, number>();
  records.forEach((r, i) => {
    if (!first.has(r.cmd.deliveryId)) first.set(r.cmd.deliveryId, i);
  });
  const params: unknown[] = [];
  const tuples = [...first.values()].map((i) => {
    const { cmd, result, startedAt, outcome } = records[i];
    const gone = outcome.status === 'failed' && outcome.gone;
    params.push(
      cmd.deliveryId,
      cmd.claim,
      outcome.status,
      outcome.status === 'pending' ? outcome.delaySec : null,
      result.statusCode,
      clean(gone ? 'HTTP 410 Gone: endpoint disabled' : result.error),
      clean(result.error),
      result.durationMs,
      clean(result.responseBody) ?? '',
      startedAt.toISOString(),
    );
    return '(?::text, ?::int, ?::text, ?::int, ?::int, ?::text, ?::text, ?::int, ?::text, ?::timestamptz)';
  });
  const written = await query<{ delivery_id: string }>(
    em,
    `with v(id, claim, status, delay, code, last_error, error, duration, body, started) as (
       values ${tuples.join(', ')}
     ),
     upd as (
       update webhook_deliveries d set
         attempts = d.attempts + 1,
         status = case when d.status = 'cancelled' and v.status <> 'delivered' then 'cancelled' else v.status end,
         next_attempt_at = case when d.status = 'cancelled' or v.delay is null then null
                                else clock_timestamp() + make_interval(secs => v.delay) end,
         last_status_code = v.code, last_error = v.last_error, locked_until = null, updated_at = now()
        from v
       where d.id = v.id and d.claim_seq = v.claim and d.locked_until is not null
       returning d.id, d.attempts
     )
     insert into webhook_attempts (delivery_id, attempt, status_code, error, duration_ms, response_body, started_at)
     select upd.id, upd.attempts, v.code, v.error, v.duration, v.body, v.started from upd join v on v.id = upd.id
     returning delivery_id`,
    params,
  );
  const ok = new Set(written.map((w) => w.delivery_id));
  return records.map((r, i) => first.get(r.cmd.deliveryId) === i && ok.has(r.cmd.deliveryId));
}

/** A 410: the receiver asked for no more deliveries. Records the attempt, switches the endpoint off, cancels the rest. */
export async function recordGone(em: EntityManager, record: AttemptRecord): Promise<boolean> {
  return em.transactional(async (tx) => {
    const [written] = await recordAttempts(tx, [record]);
    if (!written) return false;
    const reason =
      `The receiver answered 410 Gone at ${new Date().toISOString()} (delivery ${record.cmd.deliveryId}); ` +
      're-enable with isActive: true';
    await sql(
      tx,
      'update webhook_endpoints set is_active = false, disabled_reason = ?, updated_at = now() where id = ?',
      [reason, record.cmd.endpointId],
    );
    await cancelPending(tx, record.cmd.endpointId);
    return true;
  });
}
