/**
 * The delivery consumer's handler: one attempt of one delivery.
 *
 * 1. Load the delivery and its endpoint, but only if the message carries the row's current `claim_seq` and the
 *    delivery is still pending: a stale message (its lease expired and the row was claimed again), a redelivery
 *    after the attempt was recorded, or a cancelled delivery does nothing. A read, not a write: the lease taken
 *    by the claim covers the attempt, and a worker that dies mid-attempt leaves its message unacknowledged, so
 *    JetStream hands it to another worker after AckWait (or the lease expires and the row is claimed again).
 * 2. POST with `deliverOnce` (SSRF check after DNS resolution, pinned address, 5 s deadline, no redirects).
 * 3. Record the attempt and the outcome: delivered; pending again with `next_attempt_at` from the retry schedule
 *    (honouring Retry-After); failed after the last allowed attempt; or, on 410, failed with the endpoint
 *    switched off and its other pending deliveries cancelled.
 *
 * Loads and records of concurrent attempts are grouped into one statement each (`Batcher`).
 */
import type { MikroORM } from '@mikro-orm/postgresql';
import { sql, type EntityManager } from '../../db/src/index.js';
import type { Logger } from '../../log/src/index.js';
import type { DeliveryCommand } from '../../contracts/src/index.js';
import { decryptSecret } from './secrets.js';
import { signatureHeaders } from './signature.js';
import { deliverOnce, type DeliveryResult } from './deliver.js';
import { nextDelaySeconds } from './retry.js';
import { cancelPending } from './deliveries.js';
import { Batcher } from './batcher.js';
import type { HostResolver } from './ssrf.js';

export interface AttemptRow {
  id: string;
  endpoint_id: string;
  event_id: string;
  event_type: string;
  payload: string;
  attempts: number;
  max_attempts: number;
  claim_seq: number;
  url: string;
  secret_encrypted: string;
  is_active: boolean;
}

/** For each message, the delivery and endpoint it may attempt, or null when it may not (see above). */
export async function loadAttempts(
  em: EntityManager,
  cmds: DeliveryCommand[],
): Promise<(AttemptRow | null)[]> {
  if (cmds.length === 0) return [];
  const rows = await sql<AttemptRow>(
    em,
    `select d.id, d.endpoint_id, d.event_id, d.event_type, d.payload, d.attempts, d.max_attempts, d.claim_seq,
            e.url, e.secret_encrypted, e.is_active
       from webhook_deliveries d join webhook_endpoints e on e.id = d.endpoint_id
      where d.id in (?) and d.status = 'pending'`,
    [[...new Set(cmds.map((c) => c.deliveryId))]],
  );
  const byId = new Map(rows.map((r) => [r.id, r]));
  return cmds.map((c) => {
    const row = byId.get(c.deliveryId);
    return row && Number(row.claim_seq) === c.claim && row.is_active ? row : null;
  });
}

export type AttemptOutcome =
  { status: 'delivered' } | { status: 'pending'; delaySec: number } | { status: 'failed'; gone: boolean };

/** What an attempt's result means for the delivery. `attemptNo` is 1-based. */
export function decideOutcome(
  result: Pick<DeliveryResult, 'outcome' | 'retryAfterSec'>,
  attemptNo: number,
  maxAttempts: number,
  delays: readonly number[],
): AttemptOutcome {
  if (result.outcome === 'delivered') return { status: 'delivered' };
  if (result.outcome === 'gone') return { status: 'failed', gone: true };
  if (attemptNo >= maxAttempts) return { status: 'failed', gone: false };
  const delaySec = nextDelaySeconds(attemptNo, delays, { retryAfterSec: result.retryAfterSec });
  return delaySec === null ? { status: 'failed', gone: false } : { status: 'pending', delaySec };
}

/** PostgreSQL text cannot hold NUL. */
const clean = (s: string | null): string | null => (s === null ? null : s.replace(/\u0000/g, '\uFFFD'));

export interface AttemptRecord {
  row: AttemptRow;
  claim: number;
  result: DeliveryResult;
  startedAt: Date;
  outcome: AttemptOutcome;
}

/**
 * Records attempts and moves their deliveries, each guarded by its claim: a worker whose lease was taken over
 * records nothing (the new holder makes its own attempt). A delivery cancelled meanwhile stays cancelled unless
 * the attempt succeeded. Returns, per record, whether it was written.
 */
export async function recordAttempts(em: EntityManager, records: AttemptRecord[]): Promise<boolean[]> {
  if (records.length === 0) return [];
  // One row per delivery per statement; a duplicate (two messages of one claim at once) is simply not recorded.
  const first = new Map<string, number>();
  records.forEach((r, i) => {
    if (!first.has(r.row.id)) first.set(r.row.id, i);
  });
  const params: unknown[] = [];
  const tuples = [...first.values()].map((i) => {
    const { row, claim, result, startedAt, outcome } = records[i];
    const gone = outcome.status === 'failed' && outcome.gone;
    params.push(
      row.id,
      claim,
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
  const written = await sql<{ delivery_id: string }>(
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
       where d.id = v.id and d.claim_seq = v.claim
       returning d.id, d.attempts
     )
     insert into webhook_attempts (delivery_id, attempt, status_code, error, duration_ms, response_body, started_at)
     select upd.id, upd.attempts, v.code, v.error, v.duration, v.body, v.started from upd join v on v.id = upd.id
     returning delivery_id`,
    params,
  );
  const ok = new Set(written.map((w) => w.delivery_id));
  return records.map((r, i) => first.get(r.row.id) === i && ok.has(r.row.id));
}

/** A 410: the receiver asked for no more deliveries. Records the attempt, switches the endpoint off, cancels the rest. */
async function recordGone(em: EntityManager, record: AttemptRecord): Promise<boolean> {
  return em.transactional(async (tx) => {
    const [written] = await recordAttempts(tx, [record]);
    if (!written) return false;
    const reason =
      `The receiver answered 410 Gone at ${new Date().toISOString()} (delivery ${record.row.id}); ` +
      're-enable with isActive: true';
    await sql(
      tx,
      `update webhook_endpoints set is_active = false, disabled_reason = ?, updated_at = now() where id = ?`,
      [reason, record.row.endpoint_id],
    );
    await cancelPending(tx, record.row.endpoint_id);
    return true;
  });
}

/** Bounds concurrent requests per key in this process; waiters are served in arrival order. */
export class KeyedLimiter {
  private active = new Map<string, number>();
  private waiting = new Map<string, (() => void)[]>();

  constructor(private readonly limit: number) {}

  async acquire(key: string): Promise<void> {
    const n = this.active.get(key) ?? 0;
    if (n < this.limit) {
      this.active.set(key, n + 1);
      return;
    }
    await new Promise<void>((resolve) => {
      const queue = this.waiting.get(key) ?? [];
      queue.push(resolve);
      this.waiting.set(key, queue);
    });
  }

  release(key: string): void {
    const queue = this.waiting.get(key);
    const next = queue?.shift();
    if (next) {
      // The slot passes straight to the next waiter; the active count is unchanged.
      if (queue!.length === 0) this.waiting.delete(key);
      next();
      return;
    }
    const n = (this.active.get(key) ?? 1) - 1;
    if (n <= 0) this.active.delete(key);
    else this.active.set(key, n);
  }
}

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
  /** Called after every attempt (a slot freed up: the dispatcher may claim more). */
  onSettled?: () => void;
}

const BATCH = { maxBatch: 256, parallel: 2 };

export function createSender(deps: SenderDeps): (cmd: DeliveryCommand) => Promise<void> {
  const limiter = new KeyedLimiter(deps.perEndpoint);
  const loads = new Batcher((cmds: DeliveryCommand[]) => loadAttempts(deps.orm.em.fork(), cmds), BATCH);
  const records = new Batcher((recs: AttemptRecord[]) => recordAttempts(deps.orm.em.fork(), recs), BATCH);

  async function attempt(row: AttemptRow): Promise<DeliveryResult> {
    let secret: string;
    try {
      secret = decryptSecret(row.secret_encrypted, deps.key, row.endpoint_id);
    } catch (err) {
      deps.log.error(
        { err, endpointId: row.endpoint_id },
        'webhook signing secret cannot be decrypted: was WEBHOOK_SECRET_KEY changed?',
      );
      return {
        statusCode: null,
        error: 'signing secret could not be decrypted (WEBHOOK_SECRET_KEY changed?); not sent',
        durationMs: 0,
        responseBody: '',
        retryAfterSec: null,
        outcome: 'retry',
      };
    }
    const headers = signatureHeaders({
      secret,
      eventId: row.event_id,
      eventType: row.event_type,
      body: row.payload,
    });
    return deliverOnce({
      url: row.url,
      body: row.payload,
      headers,
      timeoutMs: deps.timeoutMs,
      allowPrivate: deps.allowPrivate,
      lookup: deps.lookup,
    });
  }

  return async (cmd) => {
    // The per-endpoint slot is taken before the row is read, so time spent waiting for it never eats into the
    // 5 s deadline, and the claim is checked right before the POST. It is given back as soon as the response is
    // in: recording the attempt does not hold up the next request to the same endpoint.
    await limiter.acquire(cmd.endpointId);
    let held = true;
    const release = () => {
      if (held) limiter.release(cmd.endpointId);
      held = false;
    };
    try {
      const row = await loads.add(cmd);
      if (!row) return;
      const attemptNo = Number(row.attempts) + 1;
      const startedAt = new Date();
      const result = await attempt(row);
      release();
      const outcome = decideOutcome(result, attemptNo, Number(row.max_attempts), deps.delays);
      const record: AttemptRecord = { row, claim: cmd.claim, result, startedAt, outcome };
      const written =
        outcome.status === 'failed' && outcome.gone
          ? await recordGone(deps.orm.em.fork(), record)
          : await records.add(record);
      if (!written) {
        deps.log.warn(
          { deliveryId: row.id, attempt: attemptNo },
          'webhook attempt not recorded: the delivery was claimed again meanwhile',
        );
      } else if (outcome.status !== 'delivered') {
        deps.log.info(
          {
            deliveryId: row.id,
            endpointId: row.endpoint_id,
            attempt: attemptNo,
            error: result.error,
            next: outcome.status,
          },
          'webhook attempt failed',
        );
      }
    } finally {
      release();
      deps.onSettled?.();
    }
  };
}
