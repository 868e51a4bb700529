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
   * How long a kick waits before its pass (default 0). Kicks that arrive meanwhile join the same pass, so under a
   * stream of kicks the passes are at most one per this many ms, each taking everything that came in between,
   * instead of one small pass after another (each a transaction of its own). More work already waiting
   * (`step` said so) still goes round at once.
   */
  kickDelayMs?: number;
}

export function startPoller(opts: PollerOptions): Poller {
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | null = null;
  let again = false;

  const kickDelay = opts.kickDelayMs ?? 0;
  const pass = async (): Promise<void> => {
    try {
      let more = false;
      let first = true;
      do {
        // Going round because of a kick alone: let the kicks of the next kickDelayMs join this round.
        if (!first && !more && kickDelay > 0) await new Promise((r) => setTimeout(r, kickDelay));
        first = false;
        again = false;
        more = await opts.step();
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
        kicked = kickDelay > 0;
        schedule(kickDelay);
      }
    },
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await running;
    },
  };
}
