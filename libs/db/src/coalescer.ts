/**
 * Group commit for a hot statement: many callers' items, one statement.
 *
 * A caller submits one item and awaits its own answer. While fewer than `maxInFlight` groups are running, an item
 * leaves at once, alone, so an idle process adds no latency; while they all run, new items queue and the next free
 * slot takes every queued item (up to `maxGroup`) as one group. Under load a group therefore holds what arrived
 * during one statement's round trip, and N learners' batches cost one statement, one round trip and one commit
 * instead of N of each. Items whose `conflictKey` is already in the forming group wait for a later group (two
 * batches of one run must not share an `update … from` that can apply only one of them).
 *
 * `run` answers each item of the group, in order. A thrown error fails every item of the group with that error.
 */
export interface CoalescerOptions<T, R> {
  run: (items: T[]) => Promise<R[]>;
  maxInFlight: number;
  maxGroup: number;
  conflictKey?: (item: T) => string;
}

interface Waiting<T, R> {
  item: T;
  resolve: (r: R) => void;
  reject: (e: unknown) => void;
}

export class Coalescer<T, R> {
  private queue: Waiting<T, R>[] = [];
  private inFlight = 0;

  constructor(private readonly opts: CoalescerOptions<T, R>) {}

  submit(item: T): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.queue.push({ item, resolve, reject });
      this.pump();
    });
  }

  private pump(): void {
    while (this.inFlight < this.opts.maxInFlight && this.queue.length) {
      const group = this.take();
      this.inFlight++;
      void this.opts
        .run(group.map((w) => w.item))
        .then(
          (results) => group.forEach((w, i) => w.resolve(results[i])),
          (err: unknown) => group.forEach((w) => w.reject(err)),
        )
        .finally(() => {
          this.inFlight--;
          this.pump();
        });
    }
  }

  /** The next group: queued items in order, at most maxGroup, none sharing a conflict key. */
  private take(): Waiting<T, R>[] {
    const { maxGroup, conflictKey } = this.opts;
    if (!conflictKey) return this.queue.splice(0, maxGroup);
    const group: Waiting<T, R>[] = [];
    const keys = new Set<string>();
    const rest: Waiting<T, R>[] = [];
    for (const w of this.queue) {
      const key = conflictKey(w.item);
      if (group.length < maxGroup && !keys.has(key)) {
        keys.add(key);
        group.push(w);
      } else rest.push(w);
    }
    this.queue = rest;
    return group;
  }
}
