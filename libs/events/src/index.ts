import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import { OutboxEventSchema, newId, boundQuery } from '@lectern/db';
import type { Bus } from '@lectern/bus';
import type { Logger } from '@lectern/log';
import { startPoller } from '@lectern/poller';
import { EventPayloads, type EventPayload, type EventType } from '@lectern/contracts';

/** An outbox row built and checked against its contract, ready to be written by the caller's own statement. */
export interface PreparedEvent {
  id: string;
  workspaceId: string;
  type: EventType;
  data: Record<string, unknown>;
  createdAt: Date;
}

/** Validates the payload against its contract and gives the event its id; writes nothing. */
export function prepareEvent<T extends EventType>(
  workspaceId: string,
  type: T,
  data: EventPayload<T>,
  createdAt = new Date(),
): PreparedEvent {
  const checked = EventPayloads[type].parse(data) as Record<string, unknown>;
  return { id: newId('evt'), workspaceId, type, data: checked, createdAt };
}

/**
 * Writes an event to the outbox through `em`, so it commits (or not) with the change that
 * caused it. The payload is validated against its contract before anything is written.
 */
export function recordEvent<T extends EventType>(
  em: EntityManager,
  workspaceId: string,
  type: T,
  data: EventPayload<T>,
): string {
  const ev = prepareEvent(workspaceId, type, data);
  em.create(OutboxEventSchema, { ...ev, publishedAt: null });
  return ev.id;
}

/**
 * The outbox rows of `events` as one jsonb parameter and the SQL that expands it, so a hot path can write its
 * events inside one of its own statements (a CTE) instead of a round trip of their own:
 * `insert into outbox_events (id, workspace_id, type, data, created_at) ${OUTBOX_RECORDSET}` with `?` bound
 * to `outboxRecordset(events)`.
 */
export const OUTBOX_RECORDSET =
  'select id, workspace_id, type, data, created_at from jsonb_to_recordset(?::jsonb) as ' +
  'x(id text, workspace_id text, type text, data jsonb, created_at timestamptz)';

/**
 * The same with a `key` column per row, for a statement writing the events of several changes at once, each
 * kept only if its change was (`… ${OUTBOX_KEYED_RECORDSET} where x.key in (select id from upd)`), with `?`
 * bound to `outboxRecordset(events, keyOf)`.
 */
export const OUTBOX_KEYED_RECORDSET =
  'select x.id, x.workspace_id, x.type, x.data, x.created_at from jsonb_to_recordset(?::jsonb) as ' +
  'x(id text, workspace_id text, type text, data jsonb, created_at timestamptz, key text)';

export function outboxRecordset(events: PreparedEvent[], keyOf?: (index: number) => string): string {
  const seen = new Map<string, number>();
  return JSON.stringify(
    events.map((e, i) => {
      const key = keyOf?.(i);
      const at = seen.get(key ?? '') ?? 0;
      seen.set(key ?? '', at + 1);
      return {
        id: e.id,
        workspace_id: e.workspaceId,
        type: e.type,
        data: e.data,
        // Events of one change often share a millisecond; their position as microseconds keeps their order (the
        // relay publishes by created_at, then id) without moving any of them to another millisecond.
        created_at: e.createdAt.toISOString().replace('Z', `${String(at % 1000).padStart(3, '0')}Z`),
        ...(key === undefined ? {} : { key }),
      };
    }),
  );
}

export function eventSubject(bus: Bus, type: string): string {
  return bus.names.subject('events', type);
}

/**
 * An unsent outbox row with its envelope (`EventEnvelope`) already encoded by PostgreSQL: the relay sends it as it
 * is, instead of parsing the stored payload into objects only to encode it again (per event, on every API replica).
 */
export interface RelayedEvent {
  id: string;
  type: string;
  workspaceId: string;
  /** The row's `created_at`, to the microsecond (PostgreSQL's text). */
  createdAt: string;
  /** The `EventEnvelope` as PostgreSQL encoded it: the bytes published. */
  envelope: string;
}

/**
 * What else a relay batch causes, written in the transaction that marks it sent (the webhook deliveries: see
 * `relayFanOut` in `@lectern/webhooks`). If it fails, the batch is not marked and is published again on a later
 * pass (JetStream drops the duplicate messages), so it must be idempotent.
 */
export interface RelayFanOut {
  /** Writes what the sent events cause through `tx`; returns whether it wrote anything. */
  inTransaction(tx: EntityManager, sent: RelayedEvent[]): Promise<boolean>;
  /** After the commit of a batch whose `inTransaction` wrote something. */
  afterCommit(): void;
}

/**
 * The oldest unsent rows, locked: `outbox_unsent_order_idx` holds exactly this order, so a batch reads its rows and
 * stops, whatever the statistics say about how many are waiting (see its migration).
 */
const UNSENT = `select id, type, workspace_id as "workspaceId", created_at::text as "createdAt",
    json_build_object('id', id, 'type', type,
      'createdAt', to_char(created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
      'workspaceId', workspace_id, 'data', data)::text as envelope
  from outbox_events where published_at is null order by created_at, id limit ? for update skip locked`;

/** The relay's batch statement and its parameters (read by the plan checks of the tests). */
export function unsentEventsStatement(batchSize: number): { sql: string; params: unknown[] } {
  return { sql: UNSENT, params: [batchSize] };
}

export interface Relay {
  /** Ask for a pass now (after a commit that wrote events). */
  kick(): void;
  /** Publishes one batch; returns how many rows were published. */
  drainOnce(): Promise<number>;
  stop(): Promise<void>;
}

/** The relay of a process that runs none (API_OUTBOX_RELAY=false, or a test app): kicks go nowhere. */
export const NO_RELAY: Relay = { kick() {}, drainOnce: async () => 0, stop: async () => {} };

/**
 * The outbox relay: publishes unsent rows to the EVENTS stream at least once, with
 * `Nats-Msg-Id = event id` so a republish after a crash is deduplicated by JetStream.
 * Rows are claimed with SKIP LOCKED, so every API replica may run a relay. A row is marked
 * sent only after JetStream acknowledged it; while NATS is down rows simply wait. What follows
 * from the events (`fanOut`: the webhook deliveries) is written in the transaction of the mark.
 */
export function startRelay(deps: {
  orm: MikroORM;
  bus: Bus;
  log: Logger;
  /** Written with each batch's mark (the webhook deliveries), or null where nothing follows from events. */
  fanOut: RelayFanOut | null;
  intervalMs?: number;
  batchSize?: number;
  kickGapMs?: number;
}): Relay {
  const { orm, bus, log, fanOut } = deps;
  const intervalMs = deps.intervalMs ?? 250;
  const batchSize = deps.batchSize ?? 500;

  const drainOnce = async (): Promise<number> => {
    const em = orm.em.fork();
    let wrote = false;
    const sentCount = await em.transactional(async (tx) => {
      const { sql, params } = unsentEventsStatement(batchSize);
      const rows = await boundQuery<RelayedEvent>(tx, sql, params, { prepared: true });
      if (rows.length === 0) return 0;
      const results = await Promise.allSettled(
        rows.map((r) =>
          bus.publishJson(eventSubject(bus, r.type), r.envelope, { msgId: r.id, timeoutMs: 3000 }),
        ),
      );
      const sentRows = rows.filter((_, i) => results[i].status === 'fulfilled');
      const sent = sentRows.map((r) => r.id);
      const failed = results.find((r) => r.status === 'rejected') as PromiseRejectedResult | undefined;
      if (failed)
        log.warn(
          { err: failed.reason, unsent: rows.length - sent.length },
          'outbox relay: publish failed; will retry',
        );
      if (sent.length) {
        await boundQuery(tx, `update outbox_events set published_at = now() where id = any (?::text[])`, [
          sent,
        ]);
        if (fanOut) wrote = await fanOut.inTransaction(tx, sentRows);
      }
      return sent.length;
    });
    if (wrote) fanOut?.afterCommit();
    return sentCount;
  };

  const poller = startPoller({
    // A full batch means more rows are waiting.
    step: async () => (await drainOnce()) >= batchSize,
    intervalMs,
    // A commit after a quiet spell is published at once. Under a stream of commits (learner batches) one pass
    // per 25 ms takes them all: one transaction and one round of JetStream publishes for many events instead of
    // a pass per few commits. 25 rather than 5 ms took a sixth off the API's CPU per learner batch
    // (test/bench/README.md); an event then waits at most that long, against webhook deliveries measured in
    // hundreds of ms.
    kickGapMs: deps.kickGapMs ?? 25,
    onError: (err) => log.warn({ err }, 'outbox relay pass failed; will retry'),
  });
  return { kick: () => poller.kick(), drainOnce, stop: () => poller.stop() };
}
