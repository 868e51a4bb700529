import { expect } from 'chai';
import { Coalescer } from '@lectern/db';

/** A `run` that blocks each group until released, recording the groups it was given. */
function gatedRun<T>() {
  const groups: T[][] = [];
  const gates: (() => void)[] = [];
  return {
    groups,
    run: async (items: T[]) => {
      groups.push(items);
      await new Promise<void>((resolve) => gates.push(resolve));
      return items.map((i) => `done ${String(i)}`);
    },
    releaseNext() {
      gates.shift()?.();
    },
  };
}
const tick = () => new Promise((r) => setImmediate(r));

describe('db: Coalescer (group commit of one statement for many callers)', () => {
  it('an idle coalescer sends an item at once, alone; items arriving meanwhile leave together next', async () => {
    const g = gatedRun<number>();
    const c = new Coalescer({ run: g.run, maxInFlight: 1, maxGroup: 10 });
    const first = c.submit(1);
    expect(g.groups).to.deep.equal([[1]]);
    const rest = [2, 3, 4].map((i) => c.submit(i));
    await tick();
    expect(g.groups).to.have.length(1);
    g.releaseNext();
    expect(await first).to.equal('done 1');
    await tick();
    expect(g.groups).to.deep.equal([[1], [2, 3, 4]]);
    g.releaseNext();
    expect(await Promise.all(rest)).to.deep.equal(['done 2', 'done 3', 'done 4']);
  });

  it('runs up to maxInFlight groups at once, each at most maxGroup items', async () => {
    const g = gatedRun<number>();
    const c = new Coalescer({ run: g.run, maxInFlight: 2, maxGroup: 2 });
    const all = [1, 2, 3, 4, 5, 6, 7].map((i) => c.submit(i));
    expect(g.groups).to.deep.equal([[1], [2]]);
    g.releaseNext();
    await tick();
    expect(g.groups.slice(2)).to.deep.equal([[3, 4]]);
    while (g.groups.flat().length < 7) {
      g.releaseNext();
      await tick();
    }
    g.releaseNext();
    g.releaseNext();
    expect(await Promise.all(all)).to.have.length(7);
    expect(g.groups.every((grp) => grp.length <= 2)).to.equal(true);
  });

  it('never puts two items with one conflict key in a group; the second waits for a later one, in order', async () => {
    const g = gatedRun<string>();
    const c = new Coalescer({ run: g.run, maxInFlight: 1, maxGroup: 10, conflictKey: (s: string) => s[0] });
    const all = ['a1', 'a2', 'b1', 'a3', 'c1', 'b2'].map((s) => c.submit(s));
    expect(g.groups).to.deep.equal([['a1']]);
    for (let i = 0; i < 4; i++) {
      g.releaseNext();
      await tick();
    }
    expect(g.groups).to.deep.equal([['a1'], ['a2', 'b1', 'c1'], ['a3', 'b2']]);
    expect(await Promise.all(all)).to.have.length(6);
  });

  it('a failed run fails every item of its group with its error, and later groups still run', async () => {
    let calls = 0;
    const c = new Coalescer<number, number>({
      maxInFlight: 1,
      maxGroup: 10,
      run: async (items) => {
        calls++;
        if (calls === 2) throw new Error('statement failed');
        return items.map((i) => i * 10);
      },
    });
    const first = c.submit(1);
    const failing = [2, 3].map((i) => c.submit(i).catch((e: Error) => e.message));
    expect(await first).to.equal(10);
    expect(await Promise.all(failing)).to.deep.equal(['statement failed', 'statement failed']);
    expect(await c.submit(4)).to.equal(40);
  });
});
