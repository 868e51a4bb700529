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
}

export function startPoller(opts: PollerOptions): Poller {
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | null = null;
  let again = false;

  const pass = async (): Promise<void> => {
    try {
      let more: boolean;
      do {
        again = false;
        more = await opts.step();
      } while ((more || again) && !stopped);
    } catch (err) {
      opts.onError(err);
    }
  };

  const schedule = (delay: number): void => {
    if (stopped) return;
    clearTimeout(timer);
    timer = setTimeout(tick, delay);
  };

  const tick = (): void => {
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
      else schedule(0);
    },
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await running;
    },
  };
}
