/**
 * A coalescing poller: runs `step` now and then every `intervalMs`, and at once when kicked. Passes never overlap:
 * a kick during a pass makes that pass go round once more instead of starting a second one, so a burst of kicks
 * (one per commit, per attempt settled) costs one extra round, not one each. A pass repeats `step` while it says
 * more work is waiting, then sleeps until the next tick or kick.
 *
 * The outbox relay and the webhook dispatcher both poll PostgreSQL this way: the interval catches work nobody
 * kicked for (rows written by another process, retries coming due), the kick keeps latency low when somebody did.
 */

export interface Poller {
  /** Run a pass now, or once more right after the pass under way. */
  kick(): void;
  /** No new passes; resolves when the one under way (if any) has finished. */
  stop(): Promise<void>;
}

export interface PollerOptions {
  /** One unit of work. Resolves true when more is waiting and the pass should go round again at once. */
  step: () => Promise<boolean>;
  /** Pause between passes when nothing kicked. */
  intervalMs: number;
  /** A step threw: the pass ends here and the next tick tries again. */
  onError: (err: unknown) => void;
  /**
   * The least time from the end of one pass to a kicked pass (default 0). A kick after a quiet spell runs at once;
   * kicks arriving during a pass or within this many ms after it wait out the rest of the gap, and all of them
   * join that one pass. Under a stream of kicks the passes are thus at most one per gap (plus the pass's own
   * time), each taking everything that came in between, instead of one small pass after another (each a
   * transaction of its own). Later kicks never postpone a pass. More work already waiting (`step` said so) still
   * goes round at once.
   */
  kickGapMs?: number;
}

export function startPoller(opts: PollerOptions): Poller {
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | null = null;
  let again = false;

  const gap = opts.kickGapMs ?? 0;
  /** When the last step ended (performance.now()); a kicked pass starts no sooner than `gap` after it. */
  let lastEnd = -Infinity;
  const pass = async (): Promise<void> => {
    try {
      let more = false;
      let first = true;
      do {
        // Going round because of a kick alone: let the kicks of the next `gap` ms join this round.
        if (!first && !more && gap > 0) await new Promise((r) => setTimeout(r, gap));
        first = false;
        again = false;
        try {
          more = await opts.step();
        } finally {
          lastEnd = performance.now();
        }
      } while ((more || again) && !stopped);
    } catch (err) {
      opts.onError(err);
    }
  };

  /** A kicked pass is waiting for its timer: later kicks join it rather than push it back. */
  let kicked = false;
  const schedule = (delay: number): void => {
    if (stopped) return;
    clearTimeout(timer);
    timer = setTimeout(tick, delay);
  };

  const tick = (): void => {
    kicked = false;
    if (running) {
      again = true;
      return;
    }
    running = pass().finally(() => {
      running = null;
      schedule(opts.intervalMs);
    });
  };

  schedule(0);
  return {
    kick() {
      if (stopped) return;
      if (running) again = true;
      else if (!kicked) {
        const wait = Math.max(0, lastEnd + gap - performance.now());
        kicked = wait > 0;
        schedule(wait);
      }
    },
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await running;
    },
  };
}
