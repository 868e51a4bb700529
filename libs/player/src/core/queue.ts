/**
 * The learner-event outbox of a run: nothing a learner did is lost.
 *
 * Events gather in `pending`; `flush()` seals them into batches of at most 100 (the Player API's cap), each
 * with a `batchId` fixed at sealing, and sends the batches one after another. Everything not yet
 * acknowledged is mirrored into storage (localStorage in the browser) on every change, so a crash, a closed
 * tab or a lost connection leaves it there; the next flush (or the next page load of the same run) sends it
 * again **with the same batchId**, which the server acknowledges without applying twice.
 *
 * Pure: storage, transport, ids and the clock are passed in, so the rules are unit-tested without a browser.
 */
import type { EventsResponse, PlayerEvent } from './types.js';

export interface KeyValueStore {
  getItem(key: string): string | null;
  setItem(key: string, value: string): void;
  removeItem(key: string): void;
}

export interface Batch {
  batchId: string;
  events: PlayerEvent[];
}

/** What became of one attempt to send a batch. */
export type SendOutcome =
  | { kind: 'ok'; response: EventsResponse }
  /** Network failure, offline, 429, 5xx: keep the batch and try again later with the same id. */
  | { kind: 'retry' }
  /** 401: the run token expired or was refused; the queue asks for a new one, then retries. */
  | { kind: 'unauthorized' }
  /** 400, 404, 413: the server will never take this batch; it is dropped so it cannot block the rest. */
  | { kind: 'rejected'; status: number };

export interface QueueOptions {
  storage: KeyValueStore | null;
  storageKey: string;
  send(batch: Batch, opts: { keepalive: boolean }): Promise<SendOutcome>;
  newBatchId(): string;
  now?: () => number;
  /** Whole seconds of learner time since the last call; added as a `time` event when a batch is sealed. */
  takeSeconds?: () => number;
  onResponse?(response: EventsResponse, batch: Batch): void;
  onRejected?(batch: Batch, status: number): void;
  /** Called on 401; resolves true when a fresh run token is in place and sending may go on. */
  onUnauthorized?(): Promise<boolean>;
  /** Called whenever the number of unacknowledged batches changes to or from zero after a failure. */
  onBacklog?(waiting: boolean): void;
  maxEvents?: number;
}

export const MAX_EVENTS_PER_BATCH = 100;
const MAX_BACKOFF_MS = 30_000;

interface Stored {
  pending: PlayerEvent[];
  sealed: Batch[];
}

function isEvent(e: unknown): e is PlayerEvent {
  if (typeof e !== 'object' || e === null) return false;
  const r = e as Record<string, unknown>;
  return (
    (r.type === 'screen' && typeof r.screenId === 'string') ||
    (r.type === 'answer' && typeof r.blockId === 'string') ||
    (r.type === 'time' && typeof r.seconds === 'number')
  );
}

export class EventQueue {
  private pending: PlayerEvent[] = [];
  private sealed: Batch[] = [];
  private running: Promise<void> | null = null;
  private again = false;
  private failures = 0;
  private retryAt = 0;
  private readonly max: number;
  private readonly now: () => number;

  constructor(private readonly opts: QueueOptions) {
    this.max = Math.max(1, Math.min(opts.maxEvents ?? MAX_EVENTS_PER_BATCH, MAX_EVENTS_PER_BATCH));
    this.now = opts.now ?? (() => Date.now());
    this.load();
  }

  /** Events not yet acknowledged by the server (pending and sealed). */
  get unacknowledged(): number {
    return this.pending.length + this.sealed.reduce((n, b) => n + b.events.length, 0);
  }

  /** Sealed batches waiting for an acknowledgement, oldest first (copies). */
  get batches(): Batch[] {
    return this.sealed.map((b) => ({ batchId: b.batchId, events: [...b.events] }));
  }

  add(event: PlayerEvent): void {
    this.pending.push(event);
    this.save();
  }

  /** Seals pending events (and the learner time since the last seal) into batches with fixed ids. */
  seal(withTime = true): void {
    const seconds = withTime ? (this.opts.takeSeconds?.() ?? 0) : 0;
    if (seconds > 0) this.pending.push({ type: 'time', seconds });
    while (this.pending.length > 0) {
      this.sealed.push({ batchId: this.opts.newBatchId(), events: this.pending.splice(0, this.max) });
    }
    this.save();
  }

  /**
   * Seals and sends everything, one batch at a time, in order. Concurrent calls share one run (a call made
   * while a run is going makes it go round once more). After a failure the queue waits (1 s, doubling, at
   * most 30 s) unless `force` is given, which a screen change or the `online` event uses.
   */
  flush(force = false): Promise<void> {
    this.seal();
    if (this.running) {
      this.again = true;
      return this.running;
    }
    if (!force && this.now() < this.retryAt) return Promise.resolve();
    this.running = this.drain().finally(() => {
      this.running = null;
    });
    return this.running;
  }

  /**
   * The page is going away (pagehide, or hidden and maybe never shown again): seal and fire every batch with
   * `keepalive`, which the browser delivers after the page is gone. Nothing is removed from storage until an
   * answer arrives; if the page dies first, the next load resends the same batch ids.
   */
  flushOnExit(): void {
    this.seal();
    for (const batch of this.sealed) {
      void this.opts.send(batch, { keepalive: true }).then(
        (outcome) => this.settle(batch, outcome),
        () => undefined,
      );
    }
  }

  private async drain(): Promise<void> {
    // One token renewal per batch and run: a server that keeps refusing must not loop the page.
    const renewed = new Set<string>();
    do {
      this.again = false;
      while (this.sealed.length > 0) {
        const batch = this.sealed[0];
        let outcome: SendOutcome;
        try {
          outcome = await this.opts.send(batch, { keepalive: false });
        } catch {
          outcome = { kind: 'retry' };
        }
        if (outcome.kind === 'unauthorized') {
          const fresh =
            !renewed.has(batch.batchId) && ((await this.opts.onUnauthorized?.().catch(() => false)) ?? false);
          renewed.add(batch.batchId);
          if (fresh) continue;
          outcome = { kind: 'retry' };
        }
        if (outcome.kind === 'retry') {
          this.failures++;
          this.retryAt = this.now() + Math.min(MAX_BACKOFF_MS, 1000 * 2 ** (this.failures - 1));
          this.opts.onBacklog?.(true);
          return;
        }
        this.settle(batch, outcome);
      }
      // Events added while sending go out in this run; learner time waits for the next flush.
      this.seal(false);
    } while (this.again || this.sealed.length > 0);
  }

  /** An answer for a batch arrived (from the ordinary loop or a keepalive send): drop it once, report it. */
  private settle(batch: Batch, outcome: SendOutcome): void {
    if (outcome.kind !== 'ok' && outcome.kind !== 'rejected') return;
    const i = this.sealed.findIndex((b) => b.batchId === batch.batchId);
    if (i === -1) return; // already settled by the other path
    this.sealed.splice(i, 1);
    this.save();
    if (this.failures > 0) {
      this.failures = 0;
      this.retryAt = 0;
      this.opts.onBacklog?.(false);
    }
    if (outcome.kind === 'ok') this.opts.onResponse?.(outcome.response, batch);
    else this.opts.onRejected?.(batch, outcome.status);
  }

  private load(): void {
    const raw = this.read();
    if (raw === null) return;
    try {
      const stored = JSON.parse(raw) as Partial<Stored>;
      this.sealed = (Array.isArray(stored.sealed) ? stored.sealed : [])
        .filter((b): b is Batch => typeof b?.batchId === 'string' && Array.isArray(b.events))
        .map((b) => ({ batchId: b.batchId, events: b.events.filter(isEvent) }))
        .filter((b) => b.events.length > 0);
      this.pending = (Array.isArray(stored.pending) ? stored.pending : []).filter(isEvent);
    } catch {
      // A corrupt entry cannot be replayed; start clean rather than fail the run.
      this.remove();
    }
  }

  private save(): void {
    if (this.pending.length === 0 && this.sealed.length === 0) return this.remove();
    const value: Stored = { pending: this.pending, sealed: this.sealed };
    try {
      this.opts.storage?.setItem(this.opts.storageKey, JSON.stringify(value));
    } catch {
      // Storage full or disabled (private browsing): the in-memory queue still delivers while the page lives.
    }
  }

  private read(): string | null {
    try {
      return this.opts.storage?.getItem(this.opts.storageKey) ?? null;
    } catch {
      return null;
    }
  }

  private remove(): void {
    try {
      this.opts.storage?.removeItem(this.opts.storageKey);
    } catch {
      // As in save(): nothing to do when storage is unavailable.
    }
  }
}
