import { expect } from 'chai';
import { cachedResolver, checkUrlResolved, type ResolvedAddress } from '@lectern/outbound';

/** A resolver that counts its calls and answers from `answers` (an Error is thrown), after `delayMs`. */
function countingResolver(answers: Record<string, ResolvedAddress[] | Error>, delayMs = 0) {
  const calls: string[] = [];
  const resolve = async (hostname: string): Promise<ResolvedAddress[]> => {
    calls.push(hostname);
    if (delayMs) await new Promise((r) => setTimeout(r, delayMs));
    const a = answers[hostname];
    if (a === undefined) throw Object.assign(new Error(`no such host ${hostname}`), { code: 'ENOTFOUND' });
    if (a instanceof Error) throw a;
    return a;
  };
  return { calls, resolve };
}

const PUBLIC: ResolvedAddress[] = [{ address: '93.184.216.34', family: 4 }];

describe('outbound/cachedResolver', () => {
  let clock = 0;
  const now = () => clock;
  beforeEach(() => (clock = 1000));

  it('answers a name from its last resolution for ttlMs, then resolves it again', async () => {
    const r = countingResolver({ 'hooks.example.com': PUBLIC });
    const lookup = cachedResolver(r.resolve, { ttlMs: 30_000, now });
    expect(await lookup('hooks.example.com')).to.deep.equal(PUBLIC);
    clock += 29_999;
    expect(await lookup('hooks.example.com')).to.deep.equal(PUBLIC);
    expect(r.calls).to.have.length(1);
    clock += 1;
    await lookup('hooks.example.com');
    expect(r.calls).to.have.length(2);
  });

  it('resolves each name on its own', async () => {
    const r = countingResolver({ 'a.example.com': PUBLIC, 'b.example.com': PUBLIC });
    const lookup = cachedResolver(r.resolve, { ttlMs: 30_000, now });
    await lookup('a.example.com');
    await lookup('b.example.com');
    await lookup('a.example.com');
    expect(r.calls).to.deep.equal(['a.example.com', 'b.example.com']);
  });

  it('shares one resolution among concurrent callers', async () => {
    const r = countingResolver({ 'hooks.example.com': PUBLIC }, 20);
    const lookup = cachedResolver(r.resolve, { ttlMs: 30_000, now });
    const answers = await Promise.all(Array.from({ length: 50 }, () => lookup('hooks.example.com')));
    expect(answers.every((a) => a === answers[0])).to.equal(true);
    expect(r.calls).to.have.length(1);
  });

  it('keeps a failure for failureTtlMs only, and a thrown resolver becomes a rejection', async () => {
    const answers: Record<string, ResolvedAddress[] | Error> = {};
    const r = countingResolver(answers);
    const lookup = cachedResolver(r.resolve, { ttlMs: 30_000, failureTtlMs: 1000, now });
    const first = await lookup('new.example.com').catch((e: NodeJS.ErrnoException) => e.code);
    expect(first).to.equal('ENOTFOUND');
    clock += 999;
    expect(await lookup('new.example.com').catch((e: NodeJS.ErrnoException) => e.code)).to.equal('ENOTFOUND');
    expect(r.calls).to.have.length(1);
    // The name appears in DNS: asked again once the failure has run out, and the answer is then kept.
    answers['new.example.com'] = PUBLIC;
    clock += 1;
    expect(await lookup('new.example.com')).to.deep.equal(PUBLIC);
    expect(r.calls).to.have.length(2);

    const throwing = cachedResolver(
      () => {
        throw new Error('resolver broke');
      },
      { ttlMs: 30_000, now },
    );
    const err = await throwing('x.example.com').catch((e: Error) => e.message);
    expect(err).to.equal('resolver broke');
  });

  it('keeps at most max names, dropping the one resolved longest ago', async () => {
    const names = ['a', 'b', 'c'].map((n) => `${n}.example.com`);
    const r = countingResolver(Object.fromEntries(names.map((n) => [n, PUBLIC])));
    const lookup = cachedResolver(r.resolve, { ttlMs: 30_000, max: 2, now });
    for (const n of names) await lookup(n);
    await lookup('c.example.com');
    await lookup('b.example.com');
    expect(r.calls).to.have.length(3);
    await lookup('a.example.com'); // dropped when c came in
    expect(r.calls).to.have.length(4);
  });

  it('ttlMs 0 resolves on every call', async () => {
    const r = countingResolver({ 'hooks.example.com': PUBLIC });
    const lookup = cachedResolver(r.resolve, { ttlMs: 0, now });
    await lookup('hooks.example.com');
    await lookup('hooks.example.com');
    expect(r.calls).to.have.length(2);
  });

  it('a cached answer is still checked against the address policy on every use', async () => {
    // A name that (now) resolves to loopback: the cache does not turn a refusal into a pass, either way round.
    const r = countingResolver({ 'hooks.example.com': [{ address: '127.0.0.1', family: 4 }] });
    const lookup = cachedResolver(r.resolve, { ttlMs: 30_000, now });
    for (let i = 0; i < 3; i++) {
      const strict = await checkUrlResolved('https://hooks.example.com/in', { allowPrivate: false, lookup });
      expect(strict).to.deep.equal({ ok: false, reason: 'private address 127.0.0.1' });
    }
    const lenient = await checkUrlResolved('https://hooks.example.com/in', { allowPrivate: true, lookup });
    expect(lenient).to.include({ ok: true, address: '127.0.0.1' });
    expect(r.calls).to.have.length(1);
  });
});
