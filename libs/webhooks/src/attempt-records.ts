/**
 * Attempt records: each attempt's row in `webhook_attempts` and its delivery's next state, written together and
 * guarded by the claim that made the attempt.
 */
import type { EntityManager } from '@lectern/db';
import { boundQuery } from '@lectern/db';
import type { DeliveryResult } from './deliver.js';
import type { ClaimedDelivery } from './dispatcher.js';
import type { AttemptOutcome } from './outcome.js';
import { BY_KEY } from './plan-guards.js';

/**
 * PostgreSQL text cannot hold NUL, and a json string's escaped lone surrogate does not convert to text: both
 * become U+FFFD (a lone surrogate did so before too, in the driver's UTF-8 encoding).
 */
const clean = (s: string | null): string | null =>
  s === null
    ? null
    : s.replace(/\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, '\uFFFD');

export interface AttemptRecord {
  cmd: ClaimedDelivery;
  result: DeliveryResult;
  startedAt: Date;
  outcome: AttemptOutcome;
}

export interface RecordedAttempts {
  /** Per record, whether it was written. */
  written: boolean[];
  /** The `failing_since` of each endpoint with a written record, as the statement found it. */
  failingSince: Map<string, Date | null>;
}

/** The record statement for `records` (the first record of each delivery), and which records those are. */
export function recordAttemptsStatement(records: AttemptRecord[]): {
  sql: string;
  params: unknown[];
  first: Map<string, number>;
} {
  // One row per delivery per statement; a duplicate (two messages of one claim at once) is simply not recorded.
  const first = new Map<string, number>();
  records.forEach((r, i) => {
    if (!first.has(r.cmd.deliveryId)) first.set(r.cmd.deliveryId, i);
  });
  // All rows as ONE json parameter: a fixed statement text (prepared once per connection) and no per-value
  // serialisation in the driver, where nine bound values per row were a measured share of the worker's CPU.
  const rowsJson = JSON.stringify(
    [...first.values()].map((i) => {
      const { cmd, result, startedAt, outcome } = records[i];
      return {
        id: cmd.deliveryId,
        claim: cmd.claim,
        status: outcome.status,
        delay: outcome.status === 'pending' ? outcome.delaySec : null,
        code: result.statusCode,
        error: clean(result.error),
        duration: result.durationMs,
        body: clean(result.responseBody) ?? '',
        started: startedAt.toISOString(),
      };
    }),
  );
  // The endpoint's failing_since rides along (read, not locked): the caller needs it only to tell whether the
  // endpoint's health changed, which is rare, and writes that in a statement of its own. The update returns what
  // the attempt row needs, so no step joins two row sets the planner guesses at one row each (they were compared
  // every row with every row: 128 x 128 per batch). The insert runs to completion whether or not the final select
  // reads it, and writes exactly the updated rows.
  return {
    sql: `with v as (
       select * from json_to_recordset(?::json)
         as r(id text, claim int, status text, delay int, code int, error text, duration int, body text,
              started timestamptz)
     ),
     upd as (
       update webhook_deliveries d set
         attempts = d.attempts + 1,
         status = case when d.status = 'cancelled' and v.status <> 'delivered' then 'cancelled' else v.status end,
         next_attempt_at = case when d.status = 'cancelled' or v.delay is null then null
                                else clock_timestamp() + make_interval(secs => v.delay) end,
         last_status_code = v.code, last_error = v.error, locked_until = null, updated_at = now()
        from v
       where ${BY_KEY} and d.id = v.id and d.claim_seq = v.claim and d.locked_until is not null
       returning d.id, d.attempts, d.endpoint_id, v.code, v.error, v.duration, v.body, v.started
     ),
     ins as (
       insert into webhook_attempts (delivery_id, attempt, status_code, error, duration_ms, response_body, started_at)
       select id, attempts, code, error, duration, body, started from upd
     )
     select upd.id as delivery_id, upd.endpoint_id, e.failing_since
       from upd join webhook_endpoints e on e.id = upd.endpoint_id`,
    params: [rowsJson],
    first,
  };
}

/**
 * Records attempts and moves their deliveries, each guarded by its claim: only a row still leased under this
 * claim takes the record, so a worker whose lease was taken over, or a redelivered message whose attempt was
 * already recorded, writes nothing. A delivery cancelled meanwhile stays cancelled unless the attempt
 * succeeded.
 */
export async function recordAttempts(em: EntityManager, records: AttemptRecord[]): Promise<RecordedAttempts> {
  if (records.length === 0) return { written: [], failingSince: new Map() };
  const { sql, params, first } = recordAttemptsStatement(records);
  const rows = await boundQuery<{ delivery_id: string; endpoint_id: string; failing_since: Date | null }>(
    em,
    sql,
    params,
    { prepared: true },
  );
  const ok = new Set(rows.map((w) => w.delivery_id));
  return {
    written: records.map((r, i) => first.get(r.cmd.deliveryId) === i && ok.has(r.cmd.deliveryId)),
    failingSince: new Map(
      rows.map((r) => [r.endpoint_id, r.failing_since === null ? null : new Date(r.failing_since)]),
    ),
  };
}
