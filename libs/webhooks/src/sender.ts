/**
 * The delivery consumer's handler: one attempt of one delivery.
 *
 * 1. The message carries what the POST needs (claimed moments ago, with the endpoint's URL of that moment);
 *    only the signing secret comes from PostgreSQL, once per endpoint per process (secrets never change).
 *    When the message waited long for a request slot of its endpoint, or is a redelivery (its first worker may have
 *    died before or after recording), the claim is checked first: still this claim's, still pending, still
 *    leased, endpoint still active; if not, nothing is sent.
 * 2. POST with `deliverOnce` (SSRF check after DNS resolution, pinned address, 5 s deadline, no redirects).
 * 3. Record the attempt and the outcome, guarded by the claim: delivered; pending again with `next_attempt_at`
 *    from the retry schedule (honouring Retry-After); failed after the last allowed attempt; or, on 410, failed
 *    with the endpoint switched off and its other pending deliveries cancelled.
 *
 * A worker that dies mid-attempt leaves its message unacknowledged: JetStream hands it to another worker after
 * AckWait, and the row's lease is the backstop. Checks and records of concurrent attempts are grouped into one
 * statement each (`Batcher`).
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

/**
 * For each message: the endpoint's current URL when the message may still make its attempt (the row is pending,
 * carries this claim and has not recorded this attempt, and the endpoint is active), else null.
 */
export async function recheckClaims(em: EntityManager, cmds: DeliveryCommand[]): Promise<(string | null)[]> {
  if (cmds.length === 0) return [];
  const rows = await sql<{
    id: string;
    claim_seq: number;
    attempts: number;
    leased: boolean;
    url: string;
    is_active: boolean;
  }>(
    em,
    `select d.id, d.claim_seq, d.attempts, d.locked_until is not null as leased, e.url, e.is_active
       from webhook_deliveries d join webhook_endpoints e on e.id = d.endpoint_id
      where d.id in (?) and d.status = 'pending'`,
    [[...new Set(cmds.map((c) => c.deliveryId))]],
  );
  const byId = new Map(rows.map((r) => [r.id, r]));
  return cmds.map((c) => {
    const r = byId.get(c.deliveryId);
    const current =
      r && r.is_active && r.leased && Number(r.claim_seq) === c.claim && Number(r.attempts) + 1 === c.attempt;
    return current ? r.url : null;
  });
}

/**
 * A message that waited longer than this for a request slot (its endpoint is slow) checks its claim again before
 * sending: the delivery may have been cancelled or its endpoint changed meanwhile. Shorter waits are the normal
 * queueing of a busy healthy endpoint, not worth a read each.
 */
const RECHECK_AFTER_WAIT_MS = 1000;

/** Group commit settings: one statement in flight at a time, so concurrent attempts share it. */
const BATCH = { maxBatch: 256, parallel: 1, lingerMs: 5 };

/** Encrypted signing secrets by endpoint id, loaded in batches and kept (a secret never changes). */
class SigningSecrets {
  private cache = new Map<string, string>();
  private loads: Batcher<string, string | null>;

  constructor(
    orm: MikroORM,
    private readonly key: Buffer,
    private readonly max = 10_000,
  ) {
    this.loads = new Batcher(async (ids: string[]) => {
      const rows = await sql<{ id: string; secret_encrypted: string }>(
        orm.em.fork(),
        'select id, secret_encrypted from webhook_endpoints where id in (?)',
        [[...new Set(ids)]],
      );
      const byId = new Map(rows.map((r) => [r.id, r.secret_encrypted]));
      return ids.map((id) => byId.get(id) ?? null);
    }, BATCH);
  }

  /** The plain secret, or null when the endpoint is gone. Throws when it cannot be decrypted. */
  async get(endpointId: string): Promise<string | null> {
    let stored = this.cache.get(endpointId);
    if (stored === undefined) {
      const loaded = await this.loads.add(endpointId);
      if (loaded === null) return null;
      stored = loaded;
      if (this.cache.size >= this.max) this.cache.delete(this.cache.keys().next().value!);
      this.cache.set(endpointId, stored);
    }
    return decryptSecret(stored, this.key, endpointId);
  }
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
  cmd: DeliveryCommand;
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
async function recordGone(em: EntityManager, record: AttemptRecord): Promise<boolean> {
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

/** Bounds concurrent requests per key in this process; waiters are served in arrival order. */
export class KeyedLimiter {
  private active = new Map<string, number>();
  private waiting = new Map<string, (() => void)[]>();

  constructor(private readonly limit: number) {}

  /** Resolves when a slot is held, with how long it waited for it (ms; 0 when one was free). */
  async acquire(key: string): Promise<number> {
    const n = this.active.get(key) ?? 0;
    if (n < this.limit) {
      this.active.set(key, n + 1);
      return 0;
    }
    const since = performance.now();
    await new Promise<void>((resolve) => {
      const queue = this.waiting.get(key) ?? [];
      queue.push(resolve);
      this.waiting.set(key, queue);
    });
    return performance.now() - since;
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

export function createSender(
  deps: SenderDeps,
): (cmd: DeliveryCommand, ctx: { deliveryCount: number }) => Promise<void> {
  const limiter = new KeyedLimiter(deps.perEndpoint);
  const secrets = new SigningSecrets(deps.orm, deps.key);
  const rechecks = new Batcher((cmds: DeliveryCommand[]) => recheckClaims(deps.orm.em.fork(), cmds), BATCH);
  const records = new Batcher((recs: AttemptRecord[]) => recordAttempts(deps.orm.em.fork(), recs), BATCH);

  async function attempt(cmd: DeliveryCommand, url: string): Promise<DeliveryResult | null> {
    let secret: string | null;
    try {
      secret = await secrets.get(cmd.endpointId);
    } catch (err) {
      deps.log.error(
        { err, endpointId: cmd.endpointId },
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
    if (secret === null) return null; // the endpoint was deleted, and its deliveries with it
    const headers = signatureHeaders({
      secret,
      eventId: cmd.eventId,
      eventType: cmd.eventType,
      body: cmd.payload,
    });
    return deliverOnce({
      url,
      body: cmd.payload,
      headers,
      timeoutMs: deps.timeoutMs,
      allowPrivate: deps.allowPrivate,
      lookup: deps.lookup,
    });
  }

  return async (cmd, ctx) => {
    // The per-endpoint slot is taken first, so time spent waiting for it never eats into the 5 s deadline. It is
    // given back as soon as the response is in: recording does not hold up the next request to that endpoint.
    const waitedMs = await limiter.acquire(cmd.endpointId);
    let held = true;
    const release = () => {
      if (held) limiter.release(cmd.endpointId);
      held = false;
    };
    try {
      let url: string | null = cmd.url;
      if (waitedMs > RECHECK_AFTER_WAIT_MS || ctx.deliveryCount > 1) url = await rechecks.add(cmd);
      if (url === null) return;
      const startedAt = new Date();
      const result = await attempt(cmd, url);
      release();
      if (result === null) return;
      const outcome = decideOutcome(result, cmd.attempt, cmd.maxAttempts, deps.delays);
      const record: AttemptRecord = { cmd, result, startedAt, outcome };
      const written =
        outcome.status === 'failed' && outcome.gone
          ? await recordGone(deps.orm.em.fork(), record)
          : await records.add(record);
      if (!written) {
        deps.log.warn(
          { deliveryId: cmd.deliveryId, attempt: cmd.attempt },
          'webhook attempt not recorded: the delivery was claimed again or already recorded',
        );
      } else if (outcome.status !== 'delivered') {
        deps.log.info(
          {
            deliveryId: cmd.deliveryId,
            endpointId: cmd.endpointId,
            attempt: cmd.attempt,
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
