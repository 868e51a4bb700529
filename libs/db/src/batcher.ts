/**
 * Group commit for hot statements: concurrent callers' items are written together, one statement per batch
 * instead of one per item. Items wait at most `lingerMs` for company (0: an idle batcher flushes at once); while
 * `parallel` flushes are under way, new items queue and go out together in the next one, so batches grow exactly
 * when the database is the bottleneck. Each caller gets its own item's result, or the batch's error.
 *
 * Items with the same `conflictKey` never share a batch: the later one waits for a following batch, in order
 * (two batches of one learner's run must not share an `update … from` that can apply only one of them).
 *
 * Used by the webhook worker (secret loads, claim re-checks, attempt records) and the learner ingest (a batch's
 * read and write).
 */
export interface BatcherOptions<T> {
  maxBatch: number;
  parallel: number;
  lingerMs?: number;
  conflictKey?: (item: T) => string;
}

export class Batcher<T, R> {
  private queue: { item: T; resolve: (r: R) => void; reject: (e: unknown) => void }[] = [];
  private inFlight = 0;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly flush: (items: T[]) => Promise<R[]>,
    private readonly opts: BatcherOptions<T>,
  ) {}

  add(item: T): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.queue.push({ item, resolve, reject });
      this.schedule();
    });
  }

  private schedule(): void {
    const linger = this.opts.lingerMs ?? 0;
    if (linger <= 0 || this.queue.length >= this.opts.maxBatch) {
      clearTimeout(this.timer);
      this.timer = undefined;
      this.pump();
    } else if (!this.timer) {
      this.timer = setTimeout(() => {
        this.timer = undefined;
        this.pump();
      }, linger);
    }
  }

  private pump(): void {
    while (this.inFlight < this.opts.parallel && this.queue.length > 0) {
      const batch = this.take();
      this.inFlight++;
      this.flush(batch.map((b) => b.item))
        .then(
          (results) => batch.forEach((b, i) => b.resolve(results[i])),
          (err: unknown) => batch.forEach((b) => b.reject(err)),
        )
        .finally(() => {
          this.inFlight--;
          if (this.queue.length > 0) this.schedule();
        });
    }
  }

  /** The next batch: queued items in order, at most maxBatch, none sharing a conflict key. */
  private take(): { item: T; resolve: (r: R) => void; reject: (e: unknown) => void }[] {
    const { maxBatch, conflictKey } = this.opts;
    if (!conflictKey) return this.queue.splice(0, maxBatch);
    const batch: typeof this.queue = [];
    const rest: typeof this.queue = [];
    const keys = new Set<string>();
    for (const q of this.queue) {
      const key = conflictKey(q.item);
      if (batch.length < maxBatch && !keys.has(key)) {
        keys.add(key);
        batch.push(q);
      } else rest.push(q);
    }
    this.queue = rest;
    return batch;
  }
}
