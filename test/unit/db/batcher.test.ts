import { expect } from 'chai';
import { Batcher } from '@lectern/db';

/** A flush that blocks each batch until released, recording the batches it was given. */
function gatedFlush<T>() {
  const batches: T[][] = [];
  const gates: (() => void)[] = [];
  return {
    batches,
    flush: async (items: T[]) => {
      batches.push(items);
      await new Promise<void>((resolve) => gates.push(resolve));
      return items.map((i) => `done ${String(i)}`);
    },
    releaseNext() {
      gates.shift()?.();
    },
  };
}
const tick = () => new Promise((r) => setImmediate(r));

describe('db: Batcher (group commit of one statement for many callers)', () => {
  it('flushes at once when idle and groups what arrives while a flush is under way', async () => {
    const g = gatedFlush<number>();
    const b = new Batcher(g.flush, { maxBatch: 3, parallel: 1 });
    const first = b.add(1);
    expect(g.batches).to.deep.equal([[1]]);
    const rest = [2, 3, 4, 5].map((i) => b.add(i));
    await tick();
    expect(g.batches).to.have.length(1);
    g.releaseNext();
    expect(await first).to.equal('done 1');
    await tick();
    expect(g.batches).to.deep.equal([[1], [2, 3, 4]]);
    g.releaseNext();
    await tick();
    g.releaseNext();
    expect(await Promise.all(rest)).to.deep.equal(['done 2', 'done 3', 'done 4', 'done 5']);
    expect(g.batches).to.deep.equal([[1], [2, 3, 4], [5]]);
  });

  it('runs up to `parallel` flushes at once, each at most maxBatch items', async () => {
    const g = gatedFlush<number>();
    const b = new Batcher(g.flush, { maxBatch: 2, parallel: 2 });
    const all = [1, 2, 3, 4, 5, 6, 7].map((i) => b.add(i));
    expect(g.batches).to.deep.equal([[1], [2]]);
    g.releaseNext();
    await tick();
    expect(g.batches.slice(2)).to.deep.equal([[3, 4]]);
    while (g.batches.flat().length < 7) {
      g.releaseNext();
      await tick();
    }
    g.releaseNext();
    g.releaseNext();
    expect(await Promise.all(all)).to.have.length(7);
    expect(g.batches.every((batch) => batch.length <= 2)).to.equal(true);
  });

  it('never puts two items with one conflict key in a batch; the later waits for a following one, in order', async () => {
    const g = gatedFlush<string>();
    const b = new Batcher(g.flush, { maxBatch: 10, parallel: 1, conflictKey: (s: string) => s[0] });
    const all = ['a1', 'a2', 'b1', 'a3', 'c1', 'b2'].map((s) => b.add(s));
    expect(g.batches).to.deep.equal([['a1']]);
    for (let i = 0; i < 4; i++) {
      g.releaseNext();
      await tick();
    }
    expect(g.batches).to.deep.equal([['a1'], ['a2', 'b1', 'c1'], ['a3', 'b2']]);
    expect(await Promise.all(all)).to.have.length(6);
  });

  it("rejects every caller of a failed batch with the batch's error; later batches still run", async () => {
    let calls = 0;
    const b = new Batcher<number, number>(
      async (items) => {
        calls++;
        if (calls === 2) throw new Error('db down');
        return items.map((i) => i * 10);
      },
      { maxBatch: 10, parallel: 1 },
    );
    const first = b.add(1);
    const failing = [2, 3].map((i) => b.add(i).catch((e: Error) => e.message));
    expect(await first).to.equal(10);
    expect(await Promise.all(failing)).to.deep.equal(['db down', 'db down']);
    expect(await b.add(4)).to.equal(40);
  });

  it('with lingerMs, an idle batcher waits that long for company', async () => {
    const batches: number[][] = [];
    const b = new Batcher(
      async (items: number[]) => {
        batches.push(items);
        return items;
      },
      { maxBatch: 10, parallel: 1, lingerMs: 50 },
    );
    const all = [b.add(1), b.add(2)];
    await new Promise((r) => setTimeout(r, 5));
    all.push(b.add(3));
    await Promise.all(all);
    expect(batches[0]).to.deep.equal([1, 2, 3]);
  });
});
