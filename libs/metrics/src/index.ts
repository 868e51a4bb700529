/**
 * Prometheus metrics. One `Metrics` (one prom-client Registry) per process, created with the Runtime and passed
 * down; nothing is registered on prom-client's global registry. Label values are always bounded: HTTP routes are
 * route templates ('/api/v1/identities/:id') or 'unmatched', never raw paths.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

export type ConsumerOutcome = 'ack' | 'nak' | 'term';

export interface Metrics {
  readonly registry: Registry;
  readonly httpRequests: Counter<'method' | 'route' | 'status'>;
  readonly httpDuration: Histogram<'method' | 'route'>;
  readonly rateLimited: Counter;
  readonly jobs: Counter<'kind' | 'outcome'>;
  readonly consumerMessages: Counter<'consumer' | 'outcome'>;
  readonly webhookAttempts: Counter<'outcome'>;
  readonly webhookAttemptDuration: Histogram;
  /** One HTTP request, labelled with its route template (or 'unmatched'). */
  observeRequest: (method: string, route: string, status: number, seconds: number) => void;
  /** For `runConsumer({ onMessage })`: how a message was settled. */
  consumerMessage: (outcome: ConsumerOutcome, consumer: string) => void;
  /** For the webhook sender: one attempt's outcome ('delivered' | 'retry') and duration. */
  webhookAttempt: (outcome: string, durationMs: number) => void;
  /**
   * Adds `lectern_outbox_unpublished`, read on each scrape with `count` (bounded by `timeoutMs`; NaN when it fails
   * or times out). Later calls keep the first source: the count is the same database whoever asks.
   */
  watchOutbox(
    count: () => Promise<number>,
    opts?: { timeoutMs?: number; onError?: (err: unknown) => void },
  ): void;
  /** The exposition text and its Content-Type. */
  render(): Promise<{ contentType: string; body: string }>;
}

export interface MetricsOptions {
  /** Process metrics (CPU, memory, event loop lag, GC) with the `lectern_` prefix. Default true. */
  defaults?: boolean;
}

const DURATION_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

export function createMetrics(opts: MetricsOptions = {}): Metrics {
  const registry = new Registry();
  if (opts.defaults !== false) collectDefaultMetrics({ register: registry, prefix: 'lectern_' });
  const registers = [registry];

  const httpRequests = new Counter({
    name: 'lectern_http_requests_total',
    help: 'HTTP requests answered, by method, route template and status',
    labelNames: ['method', 'route', 'status'] as const,
    registers,
  });
  const httpDuration = new Histogram({
    name: 'lectern_http_request_duration_seconds',
    help: 'HTTP request duration in seconds, by method and route template',
    labelNames: ['method', 'route'] as const,
    buckets: DURATION_BUCKETS,
    registers,
  });
  const rateLimited = new Counter({
    name: 'lectern_rate_limited_total',
    help: 'Requests refused with 429 by the per-key rate limit',
    registers,
  });
  const jobs = new Counter({
    name: 'lectern_jobs_total',
    help: 'Job command deliveries handled by this process, by job kind and outcome',
    labelNames: ['kind', 'outcome'] as const,
    registers,
  });
  const consumerMessages = new Counter({
    name: 'lectern_consumer_messages_total',
    help: 'JetStream messages settled by this process, by consumer and outcome (ack, nak, term)',
    labelNames: ['consumer', 'outcome'] as const,
    registers,
  });
  const webhookAttempts = new Counter({
    name: 'lectern_webhook_attempts_total',
    help: 'Webhook delivery attempts, by outcome (delivered, retry)',
    labelNames: ['outcome'] as const,
    registers,
  });
  const webhookAttemptDuration = new Histogram({
    name: 'lectern_webhook_attempt_duration_seconds',
    help: 'Webhook delivery attempt duration in seconds (request and response)',
    buckets: DURATION_BUCKETS,
    registers,
  });

  let outboxWatched = false;
  return {
    registry,
    httpRequests,
    httpDuration,
    rateLimited,
    jobs,
    consumerMessages,
    webhookAttempts,
    webhookAttemptDuration,
    observeRequest(method, route, status, seconds) {
      httpRequests.inc({ method, route, status: String(status) });
      httpDuration.observe({ method, route }, seconds);
    },
    consumerMessage(outcome, consumer) {
      consumerMessages.inc({ consumer, outcome });
    },
    webhookAttempt(outcome, durationMs) {
      webhookAttempts.inc({ outcome });
      webhookAttemptDuration.observe(durationMs / 1000);
    },
    watchOutbox(count, o = {}) {
      if (outboxWatched) return;
      outboxWatched = true;
      const timeoutMs = o.timeoutMs ?? 1000;
      // Concurrent scrapes share one query; a slow one never piles up statements.
      let inFlight: Promise<number> | null = null;
      const read = (): Promise<number> => {
        inFlight ??= count().finally(() => (inFlight = null));
        let timer: NodeJS.Timeout | undefined;
        return Promise.race([
          inFlight,
          new Promise<never>((_, reject) => {
            timer = setTimeout(
              () => reject(new Error(`outbox count timed out after ${timeoutMs} ms`)),
              timeoutMs,
            );
          }),
        ]).finally(() => clearTimeout(timer));
      };
      new Gauge({
        name: 'lectern_outbox_unpublished',
        help: 'Outbox events not yet published to the bus (read on scrape; NaN when the database did not answer)',
        registers,
        async collect() {
          try {
            this.set(await read());
          } catch (err) {
            o.onError?.(err);
            this.set(Number.NaN);
          }
        },
      });
    },
    async render() {
      return { contentType: registry.contentType, body: await registry.metrics() };
    },
  };
}

/** Whether an Authorization header carries `Bearer <token>` (constant-time compare of digests). */
export function bearerMatches(header: string | undefined, token: string): boolean {
  const m = /^bearer[ \t]+(\S+)[ \t]*$/i.exec(header ?? '');
  if (!m) return false;
  const digest = (s: string) => createHash('sha256').update(s).digest();
  return timingSafeEqual(digest(m[1]), digest(token));
}
