import { expect } from 'chai';
import { Drafts, MAX_DRAFT_CHARS, MAX_DRAFTS_CHARS, draftsKey, type KeyValueStore } from '@lectern/player';

class MemoryStore implements KeyValueStore {
  map = new Map<string, string>();
  getItem(k: string) {
    return this.map.get(k) ?? null;
  }
  setItem(k: string, v: string) {
    this.map.set(k, v);
  }
  removeItem(k: string) {
    this.map.delete(k);
  }
}

describe('player drafts: kept under the run, bounded, read back defensively', () => {
  const known = new Set(['r1', 'f1', 'q1']);
  const key = draftsKey('cmp_1');

  it('keeps drafts of known blocks across instances (a reload), and forgets handed-in ones', () => {
    const store = new MemoryStore();
    const a = new Drafts(store, key, known);
    a.set('r1', 'Half a thought');
    a.set('f1', { b1: 'heat' });
    a.set('nope', 'unknown block');
    const b = new Drafts(store, key, known);
    expect(b.get('r1')).to.equal('Half a thought');
    expect(b.get('f1')).to.deep.equal({ b1: 'heat' });
    expect(b.get('nope')).to.equal(undefined);
    b.delete('r1');
    b.delete('f1');
    expect(store.map.has(key)).to.equal(false);
  });

  it('ignores hostile or broken storage: not JSON, not an object, unknown ids, oversized values', () => {
    for (const raw of ['{', 'null', '[1,2]', '"text"', '42', JSON.stringify({ __proto__: 'x' })]) {
      const store = new MemoryStore();
      store.setItem(key, raw);
      expect(new Drafts(store, key, known).get('r1')).to.equal(undefined);
    }
    const store = new MemoryStore();
    store.setItem(
      key,
      JSON.stringify({ r1: 'x'.repeat(MAX_DRAFT_CHARS + 1), q1: 'b', evil: 'y', constructor: 'z' }),
    );
    const d = new Drafts(store, key, known);
    expect(d.get('r1')).to.equal(undefined);
    expect(d.get('q1')).to.equal('b');
    expect(d.get('constructor')).to.equal(undefined);
    store.setItem(key, 'x'.repeat(MAX_DRAFTS_CHARS + 1));
    expect(new Drafts(store, key, known).get('q1')).to.equal(undefined);
  });

  it('never stores a draft over its bound, nor a run over its total; a refusing storage leaves memory only', () => {
    const store = new MemoryStore();
    const d = new Drafts(store, key, known);
    d.set('r1', 'x'.repeat(MAX_DRAFT_CHARS + 1));
    expect(d.get('r1')).to.equal(undefined);
    const failing: KeyValueStore = {
      getItem: () => null,
      setItem: () => {
        throw new Error('QuotaExceededError');
      },
      removeItem: () => undefined,
    };
    const m = new Drafts(failing, key, known);
    m.set('q1', 'a');
    expect(m.get('q1')).to.equal('a');
    const none = new Drafts(null, null, known);
    none.set('q1', 'a');
    expect(none.get('q1')).to.equal('a');
  });
});
