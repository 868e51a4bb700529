/**
 * The sender: attempts the deliveries this worker claimed, in-process, one attempt each.
 *
 * 1. A claimed row carries what the POST needs (claimed moments ago, with the endpoint's URL of that moment);
 *    only the signing secret comes from PostgreSQL, once per endpoint per process (secrets never change).
 * 2. It waits for a request slot of its endpoint (at most `perEndpoint` requests at once per endpoint in this
 *    process). When it waited longer than a moment, the claim is renewed and checked first in the same statement
 *    (`renewClaims`): still this claim's, still pending, endpoint still active; if not, nothing is sent. Either way
 *    the attempt starts with most of a lease ahead of it (the request deadline plus a margin).
 * 3. POST with `deliverOnce` (SSRF check after DNS resolution, pinned address, 5 s deadline, no redirects).
 * 4. Record the attempt and the outcome, guarded by the claim: delivered; pending again with `next_attempt_at`
 *    from the retry schedule (honouring Retry-After); failed after the last allowed attempt; or, on 410, failed
 *    with the endpoint switched off and its other pending deliveries cancelled.
 *
 * While rows wait for a slot (a slow endpoint), their leases are renewed every few seconds, so a live worker's
 * rows are not claimed by another; renewed leases read as "leased a while ago", which marks the endpoint slow in
 * the claim. A worker that dies mid-attempt stops renewing: its leases run out within the lease time and the rows
 * are claimed again. Renewals, checks and records of concurrent attempts are grouped into one statement each
 * (`Batcher`).
 */
import type { MikroORM } from '@mikro-orm/postgresql';
import { boundQuery, type EntityManager } from '@lectern/db';
import type { Logger } from '@lectern/log';
import { decryptSecret } from './secrets.js';
import { signatureHeaders } from './signature.js';
import { deliverOnce, type DeliveryResult } from './deliver.js';
import { MAX_ATTEMPTS, nextDelaySeconds } from './retry.js';
import { cancelPending } from './deliveries.js';
import { Batcher } from './batcher.js';
import { releaseClaims, renewClaims, type ClaimedDelivery } from './dispatcher.js';
import type { HostResolver } from './ssrf.js';

/**
 * A claim whose lease was given longer ago than this (it waited for a request slot: its endpoint is slow) is
 * renewed and checked again before sending: the delivery may have been cancelled or its endpoint changed
 * meanwhile. Shorter waits are the normal queueing of a busy healthy endpoint, not worth a statement each.
 */
const RECHECK_AFTER_MS = 1000;
/** Held claims whose lease was given longer ago than this are renewed; checked every RENEW_EVERY_MS. */
const RENEW_AFTER_MS = 4000;
const RENEW_EVERY_MS = 2000;

/** Group commit settings: one statement in flight at a time, so concurrent attempts share it. */
const BATCH = { maxBatch: 256, parallel: 1, lingerMs: 5 };

/**
 * Signing secrets by endpoint id, loaded in batches, decrypted once and kept (a secret never changes; decrypting
 * per attempt was a measured share of the worker's CPU). They stay in this process's memory only.
 */
class SigningSecrets {
  private cache = new Map<string, string>();
  private loads: Batcher<string, string | null>;

  constructor(
    orm: MikroORM,
    private readonly key: Buffer,
    private readonly max = 10_000,
  ) {
    this.loads = new Batcher(async (ids: string[]) => {
      const rows = await boundQuery<{ id: string; secret_encrypted: string }>(
        orm.em.fork(),
        'select id, secret_encrypted from webhook_endpoints where id = any (?::text[])',
        [[...new Set(ids)]],
      );
      const byId = new Map(rows.map((r) => [r.id, r.secret_encrypted]));
      return ids.map((id) => byId.get(id) ?? null);
    }, BATCH);
  }

  /** The plain secret, or null when the endpoint is gone. Throws when it cannot be decrypted. */
  async get(endpointId: string): Promise<string | null> {
    const cached = this.cache.get(endpointId);
    if (cached !== undefined) return cached;
    const stored = await this.loads.add(endpointId);
    if (stored === null) return null;
    const plain = decryptSecret(stored, this.key, endpointId);
    if (this.cache.size >= this.max) this.cache.delete(this.cache.keys().next().value!);
    this.cache.set(endpointId, plain);
    return plain;
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
  // Manual resends of a pending delivery raised maxAttempts one each; they do not move it along the schedule.
  const automaticNo = attemptNo - Math.max(0, maxAttempts - MAX_ATTEMPTS);
  const delaySec = nextDelaySeconds(Math.max(1, automaticNo), delays, {
    retryAfterSec: result.retryAfterSec,
  });
  return delaySec === null ? { status: 'failed', gone: false } : { status: 'pending', delaySec };
}

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
  const written = await boundQuery<{ delivery_id: string }>(
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
    await boundQuery(
      tx,
      'update webhook_endpoints set is_active = false, disabled_reason = ?, updated_at = now() where id = ?',
      [reason, record.cmd.endpointId],
    );
    await cancelPending(tx, record.cmd.endpointId);
    return true;
  });
}

/**
 * Bounds concurrent requests per key in this process; waiters are served in arrival order. `abortWaiting`
 * hands every waiter -1 instead of a slot (a worker stopping).
 */
export class KeyedLimiter {
  private active = new Map<string, number>();
  private waiting = new Map<string, ((granted: boolean) => void)[]>();

  constructor(private readonly limit: number) {}

  /** Resolves when a slot is held, with how long it waited for it (ms; 0 when one was free), or -1 if aborted. */
  async acquire(key: string): Promise<number> {
    const n = this.active.get(key) ?? 0;
    if (n < this.limit) {
      this.active.set(key, n + 1);
      return 0;
    }
    const since = performance.now();
    const granted = await new Promise<boolean>((resolve) => {
      const queue = this.waiting.get(key) ?? [];
      queue.push(resolve);
      this.waiting.set(key, queue);
    });
    return granted ? performance.now() - since : -1;
  }

  release(key: string): void {
    const queue = this.waiting.get(key);
    const next = queue?.shift();
    if (next) {
      // The slot passes straight to the next waiter; the active count is unchanged.
      if (queue!.length === 0) this.waiting.delete(key);
      next(true);
      return;
    }
    const n = (this.active.get(key) ?? 1) - 1;
    if (n <= 0) this.active.delete(key);
    else this.active.set(key, n);
  }

  /** Every waiter gets -1 from `acquire` and holds no slot. */
  abortWaiting(): void {
    const queues = [...this.waiting.values()];
    this.waiting.clear();
    for (const queue of queues) for (const w of queue) w(false);
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
  /** The claim lease (seconds): an attempt starts with at least this much less a second ahead of it. */
  leaseSec: number;
  /** The claim's "slow endpoint" age (seconds): renewed leases of waiting rows are made to read older than it. */
  slowAfterSec: number;
  /** Called after every attempt (a slot freed up: the dispatcher may claim more). */
  onSettled?: () => void;
  /** Called with each attempt's result as it comes in (metrics). */
  onAttempt?: (result: DeliveryResult) => void;
}

export interface Sender {
  /** Attempts a claimed row whose lease was given at `leasedAt` (performance.now()); never rejects. */
  take(row: ClaimedDelivery, leasedAt: number): Promise<void>;
  /** Rows held: waiting for a request slot, being attempted or being recorded. */
  held(): number;
  /** Gives back the leases of rows still waiting for a slot; lets attempts under way finish and record. */
  stop(): Promise<void>;
}

interface Held {
  row: ClaimedDelivery;
  /** performance.now() just before the statement that last leased it. */
  leasedAt: number;
  /** Past its wait for a request slot. */
  started: boolean;
  /** A renewal found the claim no longer good: send nothing. */
  lost: boolean;
}

export function createSender(deps: SenderDeps): Sender {
  const limiter = new KeyedLimiter(deps.perEndpoint);
  const secrets = new SigningSecrets(deps.orm, deps.key);
  const rechecks = new Batcher(
    (rows: ClaimedDelivery[]) => renewClaims(deps.orm.em.fork(), rows, deps.leaseSec),
    BATCH,
  );
  const records = new Batcher((recs: AttemptRecord[]) => recordAttempts(deps.orm.em.fork(), recs), BATCH);
  const held = new Set<Held>();
  const running = new Set<Promise<void>>();
  let stopping = false;

  // Waiting rows' leases are renewed to less than the claim lease, so that they read as leased more than
  // slowAfterSec ago: a row that waits seconds for a slot means its endpoint is slow.
  const waitingLeaseSec = Math.max(
    Math.ceil((RENEW_AFTER_MS + 2 * RENEW_EVERY_MS) / 1000),
    deps.leaseSec - deps.slowAfterSec - 1,
  );
  let renewing = false;
  const renew = async (): Promise<void> => {
    if (renewing || stopping) return;
    renewing = true;
    try {
      const now = performance.now();
      const due = [...held].filter((h) => !h.lost && now - h.leasedAt > RENEW_AFTER_MS);
      for (let i = 0; i < due.length; i += 500) {
        const chunk = due.slice(i, i + 500);
        const at = performance.now();
        const urls = await renewClaims(
          deps.orm.em.fork(),
          chunk.map((h) => h.row),
          waitingLeaseSec,
        );
        chunk.forEach((h, k) => {
          if (urls[k] === null) h.lost = true;
          else h.leasedAt = at;
        });
      }
    } catch (err) {
      deps.log.warn({ err }, 'webhook lease renewal failed; will retry');
    } finally {
      renewing = false;
    }
  };
  const renewer = setInterval(() => void renew(), RENEW_EVERY_MS);
  renewer.unref();

  async function attempt(cmd: ClaimedDelivery, url: string): Promise<DeliveryResult | null> {
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
        error: 'signing secret cannot be decrypted (WEBHOOK_SECRET_KEY changed?)',
        durationMs: 0,
        responseBody: '',
        retryAfterSec: null,
        outcome: 'retry',
      };
    }
    if (secret === null) return null; // the endpoint was deleted, and its deliveries with it
    // Encoded once: both signatures and the request use these exact bytes.
    const body = Buffer.from(cmd.payload, 'utf8');
    const headers = signatureHeaders({ secret, eventId: cmd.eventId, eventType: cmd.eventType, body });
    return deliverOnce({
      url,
      body,
      headers,
      timeoutMs: deps.timeoutMs,
      allowPrivate: deps.allowPrivate,
      lookup: deps.lookup,
    });
  }

  async function run(h: Held): Promise<void> {
    const cmd = h.row;
    // The per-endpoint slot is taken first, so time spent waiting for it never eats into the 5 s deadline. It is
    // given back as soon as the response is in: recording does not hold up the next request to that endpoint.
    const waited = await limiter.acquire(cmd.endpointId);
    if (waited < 0) return; // stopping: the lease is given back by stop()
    h.started = true;
    let slot = true;
    const release = () => {
      if (slot) limiter.release(cmd.endpointId);
      slot = false;
    };
    try {
      if (h.lost) return;
      let url: string | null = cmd.url;
      if (performance.now() - h.leasedAt > RECHECK_AFTER_MS) {
        const at = performance.now();
        url = await rechecks.add(cmd);
        h.leasedAt = at;
      }
      if (url === null) return;
      const startedAt = new Date();
      const result = await attempt(cmd, url);
      release();
      if (result === null) return;
      deps.onAttempt?.(result);
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
    }
  }

  return {
    take(row, leasedAt) {
      const h: Held = { row, leasedAt, started: false, lost: false };
      held.add(h);
      const p = run(h)
        .catch((err: unknown) => {
          // The database failed under a check or a record: the lease runs out and the row is claimed again.
          deps.log.warn(
            { err, deliveryId: row.deliveryId },
            'webhook attempt failed to complete; will retry',
          );
        })
        .finally(() => {
          held.delete(h);
          running.delete(p);
          deps.onSettled?.();
        });
      running.add(p);
      return p;
    },
    held: () => held.size,
    async stop() {
      stopping = true;
      clearInterval(renewer);
      const waiting = [...held].filter((h) => !h.started).map((h) => h.row);
      limiter.abortWaiting();
      try {
        await releaseClaims(deps.orm.em.fork(), waiting);
      } catch (err) {
        deps.log.warn({ err }, 'webhook worker: leases not given back; they run out on their own');
      }
      await Promise.allSettled([...running]);
    },
  };
}
