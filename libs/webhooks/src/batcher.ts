/**
 * Group commit for hot statements: concurrent callers' items are written together, one statement per batch
 * instead of one per item. Items wait at most `lingerMs` for company (0: an idle batcher flushes at once); while
 * `parallel` flushes are under way, new items queue and go out together in the next one, so batches grow exactly
 * when the database is the bottleneck. Each caller gets its own item's result, or the batch's error.
 */
export class Batcher<T, R> {
  private queue: { item: T; resolve: (r: R) => void; reject: (e: unknown) => void }[] = [];
  private inFlight = 0;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly flush: (items: T[]) => Promise<R[]>,
    private readonly opts: { maxBatch: number; parallel: number; lingerMs?: number },
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
      const batch = this.queue.splice(0, this.opts.maxBatch);
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
}

/**
 * The worker's hot statements (secret loads, claim re-checks, attempt records): one statement in flight at a time,
 * so concurrent attempts share it, and a 5 ms wait for company when idle.
 */
export const GROUP_COMMIT = { maxBatch: 256, parallel: 1, lingerMs: 5 } as const;
