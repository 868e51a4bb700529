import { connect, nanos, headers, type NatsConnection } from '@nats-io/transport-node';
import {
  jetstream,
  jetstreamManager,
  AckPolicy,
  DeliverPolicy,
  RetentionPolicy,
  StorageType,
  DiscardPolicy,
  type JetStreamClient,
  type JetStreamManager,
  type JsMsg,
  type StreamConfig,
} from '@nats-io/jetstream';
import type { z } from 'zod';
import type { Logger } from '@lectern/log';
import { isRetryable } from '@lectern/errors';
import { JetStreamPublisher, type PubAck } from './publisher.js';

export type { JsMsg, NatsConnection };
export { PublishError, type PubAck } from './publisher.js';

/** The streams every deployment has; names and subjects are namespaced by BUS_PREFIX. */
export type StreamKey = 'JOBS' | 'EVENTS';

export interface BusNames {
  prefix: string;
  stream(key: StreamKey): string;
  subject(...parts: string[]): string;
  durable(app: string): string;
  /** Core-NATS subject a worker publishes to when a synchronous command is done. */
  jobDone(jobId: string): string;
}

export function busNames(prefix: string): BusNames {
  return {
    prefix,
    stream: (key) => `${prefix}_${key}`,
    subject: (...parts) => [prefix, ...parts].join('.'),
    durable: (app) => `${prefix}_${app}`,
    jobDone: (jobId) => `${prefix}.jobdone.${jobId}`,
  };
}

const MIN_SERVER = [2, 9, 0];

function versionAtLeast(version: string, min: number[]): boolean {
  const parts = version.split('.').map((p) => parseInt(p, 10));
  for (let i = 0; i < min.length; i++) {
    const a = parts[i] ?? 0;
    if (a > min[i]) return true;
    if (a < min[i]) return false;
  }
  return true;
}

export interface Bus {
  nc: NatsConnection;
  js: JetStreamClient;
  jsm: JetStreamManager;
  names: BusNames;
  /**
   * Publishes to JetStream and resolves once the stream stored it (or, for a `msgId` it has seen within its
   * duplicate window, recognised it: `duplicate`). `payload` is sent as JSON.
   */
  publish(subject: string, payload: unknown, opts?: PublishOptions): Promise<PubAck>;
  /** The same for a payload already encoded as JSON text (the outbox relay builds its envelopes in SQL). */
  publishJson(subject: string, json: string, opts?: PublishOptions): Promise<PubAck>;
  close(): Promise<void>;
}

export interface PublishOptions {
  /** `Nats-Msg-Id`: JetStream stores one message per id within the stream's duplicate window. */
  msgId?: string;
  /** How long to wait for JetStream's acknowledgement (default 5 s). */
  timeoutMs?: number;
}

export interface BusOptions {
  url: string;
  prefix: string;
  name: string;
  log: Logger;
}

/**
 * Connects with unlimited reconnects (nats.js gives up after ~10 tries by default) and
 * checks the server version: the machines run nats-server 2.9, so nothing here uses
 * 2.10+ stream or consumer options.
 */
export async function connectBus(opts: BusOptions): Promise<Bus> {
  const nc = await connect({
    servers: opts.url.split(','),
    name: opts.name,
    maxReconnectAttempts: -1,
    reconnectTimeWait: 500,
    waitOnFirstConnect: true,
    pingInterval: 10_000,
    // No stack capture per request: it was most of the cost of each JetStream publish.
    noAsyncTraces: true,
  });
  const version = nc.info?.version ?? '0.0.0';
  if (!versionAtLeast(version, MIN_SERVER)) {
    await nc.close();
    throw new Error(
      `nats-server ${version} is too old: Lectern needs ${MIN_SERVER.join('.')} or newer with JetStream (-js)`,
    );
  }
  void (async () => {
    for await (const s of nc.status()) {
      if (s.type === 'disconnect' || s.type === 'reconnect')
        opts.log.warn({ nats: s.type }, `nats ${s.type}`);
    }
  })();
  const js = jetstream(nc);
  const jsm = await jetstreamManager(nc, { checkAPI: false });
  const names = busNames(opts.prefix);
  const publisher = new JetStreamPublisher(nc);
  const publishJson: Bus['publishJson'] = (subject, json, popts = {}) =>
    publisher.publish(subject, json, { msgId: popts.msgId, timeoutMs: popts.timeoutMs ?? 5000 });
  return {
    nc,
    js,
    jsm,
    names,
    publish: (subject, payload, popts) => publishJson(subject, JSON.stringify(payload), popts),
    publishJson,
    async close() {
      if (nc.isClosed()) return;
      await nc.drain().catch((err: unknown) => opts.log.warn({ err }, 'nats drain failed; closing'));
      if (!nc.isClosed()) await nc.close();
    },
  };
}

const DAY_MS = 86_400_000;

type StreamSettings = Partial<StreamConfig> & { name: string };

/** The streams libs/bus creates, in the form it creates them; exported so deploy/ checks can name them. */
export function streamConfigs(names: BusNames, replicas = 1): StreamSettings[] {
  return [
    {
      name: names.stream('JOBS'),
      subjects: [names.subject('jobs', '>')],
      retention: RetentionPolicy.Workqueue,
      storage: StorageType.File,
      discard: DiscardPolicy.Old,
      max_age: nanos(7 * DAY_MS),
      duplicate_window: nanos(10 * 60_000),
      num_replicas: replicas,
    },
    {
      name: names.stream('EVENTS'),
      subjects: [names.subject('events', '>')],
      retention: RetentionPolicy.Limits,
      storage: StorageType.File,
      discard: DiscardPolicy.Old,
      max_age: nanos(7 * DAY_MS),
      duplicate_window: nanos(60 * 60_000),
      num_replicas: replicas,
    },
  ];
}

async function isNotFound(err: unknown): Promise<boolean> {
  const e = err as { code?: string | number; api_error?: { err_code?: number }; message?: string };
  return (
    e?.api_error?.err_code === 10059 ||
    e?.api_error?.err_code === 10014 ||
    /not found/i.test(e?.message ?? '')
  );
}

/**
 * Streams earlier versions created and nothing reads any more: `DELIVERIES` carried webhook attempts before their
 * schedule and leases moved into PostgreSQL. Deleted at start so an upgraded deployment does not keep an idle
 * stream (and its 7 days of stale messages) around.
 */
const RETIRED_STREAMS = ['DELIVERIES'];

export interface ProvisionOptions {
  /** BUS_REPLICAS: copies of every stream. Default 1. */
  replicas?: number;
}

/** The settings of `want` whose value on the server differs (arrays compared as JSON). */
function differing(want: StreamSettings, have: StreamConfig): string[] {
  const changed: string[] = [];
  for (const [k, v] of Object.entries(want)) {
    if (JSON.stringify(have[k as keyof StreamConfig]) !== JSON.stringify(v)) changed.push(k);
  }
  return changed;
}

/**
 * JetStream's refusal of a replica count it cannot place, rewritten to name the setting that asked for it: a single
 * nats-server answers "replicas > 1 not supported in non-clustered mode" (10074), a cluster with too few nodes
 * "insufficient resources" (10023).
 */
function replicaError(err: unknown, name: string, replicas: number): Error | undefined {
  if (replicas <= 1) return undefined;
  const e = err as { api_error?: { err_code?: number }; message?: string };
  const code = e?.api_error?.err_code;
  if (
    code !== 10074 &&
    code !== 10023 &&
    !/replicas|non-clustered|insufficient resources/i.test(e?.message ?? '')
  )
    return undefined;
  return new Error(
    `BUS_REPLICAS=${replicas}: nats-server refused ${replicas} replicas for stream ${name} (${e?.message ?? String(err)}). ` +
      'Set BUS_REPLICAS to at most the number of JetStream nodes in the NATS cluster (1 for a single server).',
    { cause: err },
  );
}

/**
 * Creates or updates every stream and deletes retired ones; safe to run from every process at every start. A stream
 * whose settings already match is left alone (no update call, so replicas starting together do not race to rewrite
 * it); one that differs (another BUS_REPLICAS, a changed limit) is updated in place.
 */
export async function provisionStreams(bus: Bus, opts: ProvisionOptions = {}): Promise<void> {
  const replicas = opts.replicas ?? 1;
  // nats-server 2.9 refuses a new stream with replicas > 1 outside a cluster but accepts the same change to an
  // existing one (and then reports replicas it does not keep): refuse it here, before either.
  if (replicas > 1 && !bus.nc.info?.cluster)
    throw new Error(
      `BUS_REPLICAS=${replicas}: the nats-server at this NATS_URL is not part of a cluster, so it keeps one copy of ` +
        'each stream. Set BUS_REPLICAS=1 for a single server, or point NATS_URL at a JetStream cluster of at least ' +
        `${replicas} nodes.`,
    );
  for (const cfg of streamConfigs(bus.names, replicas)) {
    try {
      let have: StreamConfig | undefined;
      try {
        have = (await bus.jsm.streams.info(cfg.name)).config;
      } catch (err) {
        if (!(await isNotFound(err))) throw err;
      }
      if (!have) await bus.jsm.streams.add(cfg);
      else if (differing(cfg, have).length > 0) await bus.jsm.streams.update(cfg.name, cfg);
    } catch (err) {
      throw replicaError(err, cfg.name, replicas) ?? err;
    }
  }
  for (const key of RETIRED_STREAMS) {
    try {
      await bus.jsm.streams.delete(`${bus.names.prefix}_${key}`);
    } catch (err) {
      if (!(await isNotFound(err))) throw err;
    }
  }
}

export interface ConsumerSpec {
  stream: StreamKey;
  /** App name; the durable is `<prefix>_<app>`. */
  app: string;
  /** Subject parts after the prefix, e.g. ['jobs', 'csv', '>']. Filters on a work-queue stream must not overlap. */
  filter: string[];
  /** Longer than the longest handler step; handlers also heartbeat with working(). */
  ackWaitMs: number;
  maxDeliver: number;
  maxAckPending?: number;
  /** New durable on a limits stream starts with new messages only. */
  deliverNew?: boolean;
}

export async function provisionConsumer(bus: Bus, spec: ConsumerSpec): Promise<void> {
  const stream = bus.names.stream(spec.stream);
  const durable = bus.names.durable(spec.app);
  const cfg = {
    durable_name: durable,
    ack_policy: AckPolicy.Explicit,
    ack_wait: nanos(spec.ackWaitMs),
    max_deliver: spec.maxDeliver,
    max_ack_pending: spec.maxAckPending ?? 1000,
    filter_subject: bus.names.subject(...spec.filter),
  };
  try {
    await bus.jsm.consumers.info(stream, durable);
    await bus.jsm.consumers.update(stream, durable, {
      ack_wait: cfg.ack_wait,
      max_deliver: cfg.max_deliver,
      max_ack_pending: cfg.max_ack_pending,
    });
  } catch (err) {
    if (!(await isNotFound(err))) throw err;
    await bus.jsm.consumers.add(stream, {
      ...cfg,
      deliver_policy: spec.deliverNew ? DeliverPolicy.New : DeliverPolicy.All,
    });
  }
}

export interface HandlerContext {
  msg: JsMsg;
  deliveryCount: number;
  log: Logger;
}

export interface RunConsumerOptions<S extends z.ZodType> {
  bus: Bus;
  spec: ConsumerSpec;
  schema: S;
  handler: (payload: z.infer<S>, ctx: HandlerContext) => Promise<void>;
  log: Logger;
  concurrency?: number;
  /** Delay before redelivery after a retryable failure, by delivery count (1-based). */
  backoffMs?: (deliveryCount: number) => number;
  /** Called when a message is given up (poison or out of deliveries), e.g. to fail its job row. */
  onGiveUp?: (payload: unknown, err: unknown) => Promise<void>;
  /** Called as each message is settled (metrics), with `spec.app` as the consumer name. */
  onMessage?: (outcome: 'ack' | 'nak' | 'term', consumer: string) => void;
}

export interface ConsumerHandle {
  /** Stop pulling, let in-flight messages finish, then resolve. */
  stop(): Promise<void>;
  inFlight(): number;
}

export function defaultBackoff(deliveryCount: number): number {
  return Math.min(30_000, 500 * 2 ** Math.max(0, deliveryCount - 1));
}

/**
 * `+TERM` without a reason: nats-server 2.9 only recognises the bare token and silently
 * ignores `+TERM <reason>` (a 2.10 addition), which would leave the message to be redelivered
 * after AckWait. The reason goes to the log instead.
 */
function terminate(m: JsMsg): void {
  m.term();
}

/**
 * Pull consumer with bounded concurrency: explicit ack, nak-with-delay on retryable
 * failures, term on poison messages or when deliveries run out, a working() heartbeat
 * while a handler runs, and a graceful stop that finishes in-flight work.
 */
export async function runConsumer<S extends z.ZodType>(opts: RunConsumerOptions<S>): Promise<ConsumerHandle> {
  const { bus, spec, log } = opts;
  const concurrency = opts.concurrency ?? 4;
  const backoff = opts.backoffMs ?? defaultBackoff;
  await provisionConsumer(bus, spec);
  const consumer = await bus.js.consumers.get(bus.names.stream(spec.stream), bus.names.durable(spec.app));
  const messages = await consumer.consume({ max_messages: concurrency });
  const running = new Set<Promise<void>>();
  let stopping = false;
  let slotFree: (() => void) | null = null;
  const settled = (outcome: 'ack' | 'nak' | 'term') => opts.onMessage?.(outcome, spec.app);

  const process = async (m: JsMsg): Promise<void> => {
    let body: unknown;
    try {
      body = JSON.parse(new TextDecoder().decode(m.data));
    } catch {
      log.error({ subject: m.subject, seq: m.seq }, 'poison message: not JSON');
      terminate(m);
      settled('term');
      return;
    }
    const parsed = opts.schema.safeParse(body);
    if (!parsed.success) {
      log.error({ subject: m.subject, issues: parsed.error.issues }, 'poison message: fails its schema');
      terminate(m);
      settled('term');
      await opts
        .onGiveUp?.(body, parsed.error)
        .catch((err: unknown) => log.error({ err }, 'onGiveUp failed'));
      return;
    }
    const beat = setInterval(
      () => {
        try {
          m.working();
        } catch (err) {
          // The connection closed under a running handler; its ack (or redelivery) settles it.
          log.debug({ err }, 'heartbeat skipped');
        }
      },
      Math.max(1000, Math.floor(spec.ackWaitMs / 3)),
    );
    const deliveryCount = m.info.deliveryCount;
    try {
      await opts.handler(parsed.data, { msg: m, deliveryCount, log });
      m.ack();
      settled('ack');
    } catch (err) {
      const retry = isRetryable(err) && deliveryCount < spec.maxDeliver;
      log[retry ? 'warn' : 'error'](
        { err, subject: m.subject, deliveryCount },
        retry ? 'handler failed; will retry' : 'handler failed; giving up',
      );
      if (retry) {
        m.nak(backoff(deliveryCount));
        settled('nak');
      } else {
        terminate(m);
        settled('term');
        await opts
          .onGiveUp?.(parsed.data, err)
          .catch((e: unknown) => log.error({ err: e }, 'onGiveUp failed'));
      }
    } finally {
      clearInterval(beat);
    }
  };

  const loop = (async () => {
    for await (const m of messages) {
      if (stopping) {
        // Not started: hand it straight back so another replica takes it now.
        m.nak();
        settled('nak');
        continue;
      }
      while (running.size >= concurrency) {
        await new Promise<void>((resolve) => (slotFree = resolve));
      }
      const p = process(m).finally(() => {
        running.delete(p);
        const f = slotFree;
        slotFree = null;
        f?.();
      });
      running.add(p);
    }
  })().catch((err: unknown) => log.error({ err }, 'consumer loop ended with an error'));

  return {
    inFlight: () => running.size,
    async stop() {
      stopping = true;
      await messages.close();
      await Promise.allSettled([...running]);
      await loop;
    },
  };
}

/**
 * The synchronous-command path: subscribe to the done subject first, then publish the
 * command (deduplicated on the job id), then wait for the worker's notice up to a deadline.
 * Returns false on timeout; the caller then reads the job row, which is the truth.
 */
export async function requestJob(
  bus: Bus,
  subject: string,
  jobId: string,
  payload: unknown,
  timeoutMs: number,
): Promise<boolean> {
  const sub = bus.nc.subscribe(bus.names.jobDone(jobId), { max: 1 });
  try {
    const done = (async () => {
      for await (const _ of sub) return true;
      return false;
    })();
    await bus.publish(subject, payload, { msgId: jobId });
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), timeoutMs)));
    const result = await Promise.race([done, timeout]);
    clearTimeout(timer);
    return result;
  } finally {
    sub.unsubscribe();
  }
}

export function notifyJobDone(bus: Bus, jobId: string): void {
  bus.nc.publish(bus.names.jobDone(jobId), '');
}

export { headers };
