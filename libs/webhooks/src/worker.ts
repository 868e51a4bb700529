/**
 * The webhook worker: the dispatcher (claims due rows from PostgreSQL) and the sender (attempts the claimed rows in
 * this process). The delivery rows are written by the outbox relay, with the mark of the events they come from
 * (`relayFanOut`), which then wakes the dispatchers. Run any number of copies; they claim rows with SKIP LOCKED,
 * under short leases that a dead worker's rows outlive by seconds only.
 */
import type { Bus } from '@lectern/bus';
import type { MikroORM } from '@lectern/db';
import type { Logger } from '@lectern/log';
import type { Metrics } from '@lectern/metrics';
import type { WebhookConfig } from './env.js';
import { installationSecretKey } from '@lectern/secrets';
import { parseRetryDelays } from './retry.js';
import { DEFAULT_TIMEOUT_MS, SOCKETS_PER_ORIGIN } from './deliver.js';
import { dispatchKickSubject, startDispatcher } from './dispatcher.js';
import { relayFanOut } from './fanout.js';
import { startRelay } from '@lectern/events';
import { createSender } from './sender.js';
import { cachedResolver, systemResolver, type HostResolver } from '@lectern/outbound';

export interface WebhookWorkerOptions {
  /** DNS override for delivery-time resolution (tests). */
  lookup?: HostResolver;
  /** How long a host name's resolution is used (`cachedResolver`). Default 30 s; 0 resolves on every attempt. */
  dnsCacheMs?: number;
  /** Deliveries this process holds at once (being attempted, or claimed and waiting for their endpoint). Default 512. */
  concurrency?: number;
  /**
   * Deliveries of one endpoint this process holds at once: enough to keep its requests busy between claims.
   * Default 128. An endpoint that is slow (a row held here, or a request to it, longer than 2 s) gets
   * perEndpointRequests.
   */
  perEndpointInFlight?: number;
  /** Requests at once to one endpoint from this process. Default 16 (the connection pool per origin). */
  perEndpointRequests?: number;
  /** How often the dispatcher looks for deliveries that became due (retries). Default 250 ms. */
  pollMs?: number;
  /** Per-attempt deadline. Default 5000 ms (SPEC). */
  timeoutMs?: number;
}

/**
 * How long the worker uses a host name's addresses before resolving it again: a busy worker sends to the same
 * endpoints thousands of times a second and must not ask DNS each time (see `cachedResolver`); a customer's DNS
 * change reaches it within this time. Every attempt still checks the addresses and pins the one it checked.
 */
export const DNS_CACHE_MS = 30_000;

/**
 * Claim lease: the request deadline plus a margin for the statements around the attempt. An attempt starts with at
 * least the lease less a second ahead of it (a row that waited longer for a request slot is renewed first), and
 * rows waiting for a slot are renewed every few seconds, so a live worker's rows are never claimed by another; a
 * dead worker's rows are claimed again once their lease runs out, within this many seconds.
 */
export function claimLeaseSec(timeoutMs: number): number {
  return Math.ceil(timeoutMs / 1000) + 10;
}
/**
 * Settled attempts kick the dispatcher (a slot is free; REFILL_BELOW_ROUNDS says which). Under a burst those kicks
 * came hundreds a second, and a claim per kick took ~20 rows at a time, each paying the claim's fixed work (the
 * endpoints and their due rows) again; kicked claims at most every 10 ms take ~30 (claims per 10,000 deliveries
 * ~1,000 → ~730 in the bench, the worker's and PostgreSQL's CPU per delivery 5-10 % lower). The endpoint's leased
 * rows waiting in the sender keep its requests busy meanwhile. A kick after a quiet spell still claims at once.
 */
const CLAIM_KICK_GAP_MS = 10;
/**
 * A settled attempt kicks the dispatcher only once its endpoint has fewer than this many rounds of requests
 * claimed and waiting here. Until then the endpoint's requests stay busy from what this worker holds, and the claim
 * a kick would make takes only the leases freed since the last; waiting for the queue to run short lets one claim
 * take the leases of several settled attempts (claims per bench run ~920 → ~780). Two rounds (32 rows) last
 * ~10 ms at 3,000 deliveries a second, more than a claim takes; a slow endpoint (16 rows held) never has that many
 * waiting, so each of its settled attempts still kicks. New rows still kick at once (the relay's kick, over NATS).
 */
const REFILL_BELOW_ROUNDS = 2;
/**
 * A row held, or a request taking, longer than this marks its endpoint slow (`Sender.endpointRoom`): healthy
 * receivers answer in milliseconds.
 */
const SLOW_AFTER_SEC = 2;

/** What the webhook worker uses: PostgreSQL, NATS, its settings, and where it logs and counts. */
export interface WebhookWorkerDeps {
  orm: MikroORM;
  bus: Bus;
  log: Logger;
  metrics?: Pick<Metrics, 'webhookAttempt'>;
  cfg: WebhookConfig;
}

export async function startWebhookWorker(
  deps: WebhookWorkerDeps,
  opts: WebhookWorkerOptions = {},
): Promise<{ stop(): Promise<void> }> {
  const { bus, orm, cfg, metrics } = deps;
  const log = deps.log.child({ worker: 'webhook' });
  const key = installationSecretKey(cfg);
  const delays = parseRetryDelays(cfg.WEBHOOK_RETRY_DELAYS);
  const timeoutMs = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const concurrency = opts.concurrency ?? 512;
  const perEndpointRequests = Math.min(opts.perEndpointRequests ?? SOCKETS_PER_ORIGIN, SOCKETS_PER_ORIGIN);
  const leaseSec = claimLeaseSec(timeoutMs);
  const perEndpointInFlight = opts.perEndpointInFlight ?? 128;

  const sender = createSender({
    orm,
    log,
    key,
    delays,
    allowPrivate: cfg.ALLOW_PRIVATE_NETWORKS,
    lookup: cachedResolver(opts.lookup ?? systemResolver, { ttlMs: opts.dnsCacheMs ?? DNS_CACHE_MS }),
    timeoutMs,
    perEndpoint: perEndpointRequests,
    leaseSec,
    slowAfterSec: SLOW_AFTER_SEC,
    holdPerEndpoint: perEndpointInFlight,
    holdPerSlowEndpoint: perEndpointRequests,
    // The endpoint's queue here is short: claim more (the dispatcher exists by the time any attempt settles).
    onRefill: () => dispatcher.kick(),
    refillBelow: REFILL_BELOW_ROUNDS * perEndpointRequests,
    onAttempt: (r) => metrics?.webhookAttempt(r.outcome, r.durationMs),
  });
  const dispatcher = startDispatcher({
    orm,
    log,
    pollMs: opts.pollMs ?? 250,
    kickGapMs: CLAIM_KICK_GAP_MS,
    limits: { perEndpoint: perEndpointInFlight, batch: 256, leaseSec },
    room: () => concurrency - sender.held(),
    endpointRoom: () => sender.endpointRoom(),
    hand: (rows, leasedAt) => {
      for (const row of rows) void sender.take(row, leasedAt);
    },
  });
  const kicks = bus.nc.subscribe(dispatchKickSubject(bus), { callback: () => dispatcher.kick() });

  // The outbox relay, when the API replicas leave it to this process (API_OUTBOX_RELAY=false).
  const relay = cfg.WEBHOOK_WORKER_OUTBOX_RELAY
    ? startRelay({ orm, bus, log: deps.log, fanOut: relayFanOut(bus) })
    : null;

  log.info({ concurrency, perEndpointRequests, leaseSec, relay: relay !== null }, 'webhook worker started');
  return {
    async stop() {
      await relay?.stop();
      kicks.unsubscribe();
      // No new claims first; then give back the rows not started, and let attempts under way finish and record.
      await dispatcher.stop();
      await sender.stop();
    },
  };
}
