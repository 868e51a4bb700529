/**
 * Bounds concurrent requests per key (an endpoint) in this process; waiters are served in arrival order.
 * `abortWaiting` hands every waiter -1 instead of a slot (a worker stopping).
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
