/**
 * The webhook worker: the fan-out consumer on EVENTS, the dispatcher (PostgreSQL → DELIVERIES) and the delivery
 * consumer (DELIVERIES → POST). Run any number of copies; they share both durables and claim rows with SKIP LOCKED.
 */
import { runConsumer, type ConsumerSpec } from '../../bus/src/index.js';
import type { Runtime } from '../../runtime/src/index.js';
import { DeliveryCommand, EventEnvelope } from '../../contracts/src/index.js';
import { webhookSecretKey } from './secret-key.js';
import { parseRetryDelays } from './retry.js';
import { DEFAULT_TIMEOUT_MS, SOCKETS_PER_ORIGIN } from './deliver.js';
import { dispatchKickSubject, startDispatcher } from './dispatcher.js';
import { fanOutEvents } from './fanout.js';
import { Batcher } from './batcher.js';
import { createSender } from './sender.js';
import type { HostResolver } from './ssrf.js';

export interface WebhookWorkerOptions {
  /** DNS override for delivery-time resolution (tests). */
  lookup?: HostResolver;
  /** Delivery consumer slots in this process (a message being attempted or waiting for its endpoint). Default 512. */
  concurrency?: number;
  /**
   * Leased deliveries per endpoint across every worker: enough to keep its requests busy while rows travel
   * through the pipeline. Default 128. An endpoint that is slow (a lease older than 2 s) gets perEndpointRequests.
   */
  perEndpointInFlight?: number;
  /** Requests at once to one endpoint from this process. Default 16 (the connection pool per origin). */
  perEndpointRequests?: number;
  /** Leased deliveries overall, across every worker. Default 4096. */
  maxInFlight?: number;
  /** How often the dispatcher looks for deliveries that became due (retries). Default 250 ms. */
  pollMs?: number;
  /** Per-attempt deadline. Default 5000 ms (SPEC). */
  timeoutMs?: number;
}

export const FANOUT_CONSUMER: ConsumerSpec = {
  stream: 'EVENTS',
  app: 'webhook-fanout',
  filter: ['events', '>'],
  ackWaitMs: 30_000,
  // Fan-out fails only while PostgreSQL is unreachable; with the default backoff (≤ 30 s) this rides out hours.
  maxDeliver: 1000,
};

/**
 * Claim lease: covers the wait in the stream, the wait for a request slot of the endpoint (at worst 128 leased ÷
 * 16 requests = 8 rounds of a 5 s timeout, before the endpoint counts as slow) and the attempt. A dead worker's
 * messages come back sooner, after AckWait; the lease is the backstop for a message that is lost.
 */
const CLAIM_LEASE_SEC = 60;
/** A lease older than this marks its endpoint slow: healthy receivers answer in milliseconds. */
const SLOW_AFTER_SEC = 2;

export function deliveryConsumer(timeoutMs: number): ConsumerSpec {
  return {
    stream: 'DELIVERIES',
    app: 'webhook-delivery',
    filter: ['deliveries', '>'],
    // Longer than the request deadline plus the statements around it; the handler also heartbeats (working()),
    // including while it waits for a request slot.
    ackWaitMs: timeoutMs + 10_000,
    // A message that keeps failing (database down) is dropped after this; its lease then expires and the
    // dispatcher publishes the delivery again, so nothing is lost.
    maxDeliver: 10,
    maxAckPending: 8192,
  };
}

export async function startWebhookWorker(
  rt: Runtime,
  opts: WebhookWorkerOptions = {},
): Promise<{ stop(): Promise<void> }> {
  const { bus, orm, cfg } = rt;
  const log = rt.log.child({ worker: 'webhook' });
  const key = webhookSecretKey(cfg);
  const delays = parseRetryDelays(cfg.WEBHOOK_RETRY_DELAYS);
  const timeoutMs = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const concurrency = opts.concurrency ?? 512;
  const perEndpointRequests = Math.min(opts.perEndpointRequests ?? SOCKETS_PER_ORIGIN, SOCKETS_PER_ORIGIN);

  const dispatcher = startDispatcher({
    orm,
    bus,
    log,
    pollMs: opts.pollMs ?? 250,
    limits: {
      perEndpoint: opts.perEndpointInFlight ?? 128,
      perSlowEndpoint: perEndpointRequests,
      slowAfterSec: SLOW_AFTER_SEC,
      maxInFlight: opts.maxInFlight ?? 4096,
      batch: 256,
      leaseSec: CLAIM_LEASE_SEC,
    },
  });
  const kicks = bus.nc.subscribe(dispatchKickSubject(bus), { callback: () => dispatcher.kick() });

  const fanOut = new Batcher(
    async (envelopes: EventEnvelope[]) => {
      const created = await fanOutEvents(orm.em.fork(), envelopes);
      if (created.some((n) => n > 0)) dispatcher.kick();
      return created;
    },
    { maxBatch: 256, parallel: 2 },
  );
  const fanout = await runConsumer({
    bus,
    spec: FANOUT_CONSUMER,
    schema: EventEnvelope,
    log,
    // Many events in hand at once, so the fan-out writes them in batches.
    concurrency: 256,
    handler: async (envelope) => {
      await fanOut.add(envelope);
    },
  });

  const send = createSender({
    orm,
    log,
    key,
    delays,
    allowPrivate: cfg.WEBHOOK_ALLOW_PRIVATE_NETWORKS,
    lookup: opts.lookup,
    timeoutMs,
    perEndpoint: perEndpointRequests,
    onSettled: () => dispatcher.kick(),
  });
  const delivery = await runConsumer({
    bus,
    spec: deliveryConsumer(timeoutMs),
    schema: DeliveryCommand,
    log,
    concurrency,
    handler: send,
  });

  log.info({ concurrency, perEndpointRequests }, 'webhook worker started');
  return {
    async stop() {
      kicks.unsubscribe();
      // No new claims first; then let attempts under way finish and record.
      await dispatcher.stop();
      await Promise.all([fanout.stop(), delivery.stop()]);
    },
  };
}
