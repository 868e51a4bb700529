import { expect } from 'chai';
import { startPoller, type Poller } from '@lectern/poller';
import { waitFor } from '../../support/http.js';

/** A step that blocks until released, so a test controls exactly when each pass ends. */
function gatedStep(more: () => boolean = () => false) {
  const calls: number[] = [];
  let open: (() => void) | null = null;
  return {
    calls,
    step: async () => {
      calls.push(calls.length + 1);
      await new Promise<void>((resolve) => (open = resolve));
      return more();
    },
    release() {
      const f = open;
      open = null;
      f?.();
    },
    waiting: () => open !== null,
  };
}

describe('poller', () => {
  let poller: Poller | undefined;
  afterEach(async () => {
    await poller?.stop();
    poller = undefined;
  });

  it('runs at once, and kicks during a pass coalesce into one more round', async () => {
    const g = gatedStep();
    // An interval far beyond the test: every round after the first comes from a kick.
    poller = startPoller({ step: g.step, intervalMs: 60_000, onError: () => {} });
    await waitFor(() => g.waiting(), { what: 'the first pass' });
    poller.kick();
    poller.kick();
    poller.kick();
    g.release();
    await waitFor(() => g.waiting(), { what: 'the coalesced round' });
    expect(g.calls).to.deep.equal([1, 2]);
    g.release();
    // Nothing kicked during round 2: the pass ends and sleeps for the interval.
    await new Promise((r) => setTimeout(r, 50));
    expect(g.calls).to.have.length(2);
    expect(g.waiting()).to.equal(false);
    poller.kick();
    await waitFor(() => g.waiting(), { what: 'a pass after a kick while idle' });
    expect(g.calls).to.have.length(3);
    g.release();
  });

  it('goes round again while the step says more is waiting', async () => {
    let left = 3;
    const calls: number[] = [];
    poller = startPoller({
      step: async () => {
        calls.push(left);
        left--;
        return left > 0;
      },
      intervalMs: 60_000,
      onError: () => {},
    });
    await waitFor(() => calls.length === 3, { what: 'three rounds' });
    await new Promise((r) => setTimeout(r, 50));
    expect(calls).to.deep.equal([3, 2, 1]);
  });

  it('reports a failed step and tries again on the next tick', async () => {
    const errors: unknown[] = [];
    let n = 0;
    poller = startPoller({
      step: async () => {
        n++;
        if (n === 1) throw new Error('database down');
        return false;
      },
      intervalMs: 10,
      onError: (err) => errors.push(err),
    });
    await waitFor(() => n >= 2, { what: 'the retry on the next tick' });
    expect(errors).to.have.length(1);
    expect((errors[0] as Error).message).to.equal('database down');
  });

  it('stop waits for the pass under way and starts no other', async () => {
    const g = gatedStep(() => true);
    poller = startPoller({ step: g.step, intervalMs: 1, onError: () => {} });
    await waitFor(() => g.waiting(), { what: 'the first pass' });
    let stopped = false;
    const stopping = poller.stop().then(() => (stopped = true));
    poller.kick();
    await new Promise((r) => setTimeout(r, 20));
    expect(stopped).to.equal(false);
    g.release();
    await stopping;
    await new Promise((r) => setTimeout(r, 20));
    // The step asked for more, but the poller was stopping.
    expect(g.calls).to.deep.equal([1]);
  });

  /**
   * Starts a poller whose passes record when they ran (performance.now()); resolves after its first pass with the
   * times and the poller.
   */
  async function passTimes(kickGapMs: number): Promise<{ at: number[]; p: Poller }> {
    const at: number[] = [];
    const p = (poller = startPoller({
      step: async () => {
        at.push(performance.now());
        return false;
      },
      intervalMs: 60_000,
      onError: () => {},
      kickGapMs,
    }));
    await waitFor(() => at.length === 1, { what: 'the first pass' });
    return { at, p };
  }

  it('with kickGapMs, a stream of kicks makes one pass per gap, never postponed by later kicks', async () => {
    const { at, p } = await passTimes(40);
    // 20 kicks 5 ms apart (~100 ms): a debounce would wait for the stream to end; this makes ~3 passes within it.
    const t0 = performance.now();
    for (let i = 0; i < 20; i++) {
      p.kick();
      await new Promise((r) => setTimeout(r, 5));
    }
    const streamEnd = performance.now();
    await new Promise((r) => setTimeout(r, 100));
    const during = at.slice(1);
    expect(
      during.filter((t) => t < streamEnd),
      'a pass came during the stream of kicks',
    ).to.not.be.empty;
    expect(during.length, 'passes for 20 kicks').to.be.within(1, 5);
    for (let i = 1; i < during.length; i++)
      expect(during[i] - during[i - 1], 'passes at least a gap apart').to.be.at.least(38);
    expect(during[0]).to.be.greaterThan(t0);
  });

  it('with kickGapMs, a kick after a quiet spell runs at once; a kick right after a pass waits out the gap', async () => {
    const { at, p } = await passTimes(300);
    await new Promise((r) => setTimeout(r, 350));
    const quiet = performance.now();
    p.kick();
    await waitFor(() => at.length === 2, { what: 'the pass after a quiet spell' });
    expect(at[1] - quiet, 'no gap to wait out').to.be.lessThan(150);
    p.kick();
    // Proved by the passes' own times, not by looking during the gap: a sleep that woke late on a busy machine
    // would have seen the next pass and failed.
    await waitFor(() => at.length === 3, { what: 'the pass after the gap' });
    expect(at[2] - at[1], 'the gap was kept').to.be.at.least(295);
  });

  it('with kickGapMs, more work said to be waiting still goes round at once', async () => {
    let left = 3;
    const at: number[] = [];
    poller = startPoller({
      step: async () => {
        at.push(Date.now());
        left--;
        return left > 0;
      },
      intervalMs: 60_000,
      onError: () => {},
      kickGapMs: 1_000,
    });
    // The deadline is generous (a busy machine delays every round); the rounds' own times show no gap was waited:
    // one gap alone would put them 1 s apart.
    await waitFor(() => at.length === 3, { what: 'three rounds', timeoutMs: 5_000 });
    expect(at[2] - at[0]).to.be.lessThan(1_000);
  });
});
