import { expect } from 'chai';
import { createHash } from 'node:crypto';
import { KEY_PREFIX, generateKey, hashKey, parseKey } from '@lectern/auth';

describe('auth: API keys', () => {
  it('generateKey: lk_ + at least 32 base62 characters, a lookup prefix and a SHA-256 hash', () => {
    const { key, lookup, hash } = generateKey();
    expect(KEY_PREFIX).to.equal('lk_');
    expect(key).to.match(/^lk_[A-Za-z0-9]{32,}$/);
    expect(lookup).to.equal(key.slice(3, 3 + lookup.length));
    expect(lookup.length).to.be.at.least(8);
    expect(hash).to.equal(createHash('sha256').update(key).digest('hex'));
    expect(hash).to.not.include(key.slice(3));
  });

  it('generateKey: keys and lookups do not repeat', () => {
    const keys = Array.from({ length: 2000 }, () => generateKey());
    expect(new Set(keys.map((k) => k.key)).size).to.equal(2000);
    expect(new Set(keys.map((k) => k.lookup)).size).to.equal(2000);
  });

  it('hashKey is deterministic and distinguishes one character', () => {
    const { key } = generateKey();
    expect(hashKey(key)).to.equal(hashKey(key));
    expect(hashKey(key)).to.not.equal(hashKey(`${key.slice(0, -1)}${key.endsWith('a') ? 'b' : 'a'}`));
  });

  it('parseKey accepts generated keys and gives the lookup', () => {
    const { key, lookup } = generateKey();
    expect(parseKey(key)).to.deep.equal({ key, lookup });
    expect(parseKey(`lk_${'a'.repeat(32)}`)).to.not.equal(null);
    expect(parseKey(`lk_${'a'.repeat(128)}`)).to.not.equal(null);
  });

  it('parseKey rejects everything malformed', () => {
    const { key } = generateKey();
    const bad = [
      '',
      'lk_',
      key.slice(3),
      `LK_${key.slice(3)}`,
      `lk_${'a'.repeat(31)}`,
      `lk_${'a'.repeat(129)}`,
      `${key}\n`,
      `${key}\r\n`,
      `${key}\t`,
      ` ${key}`,
      `${key} `,
      `${key.slice(0, 20)} ${key.slice(20)}`,
      `${key.slice(0, -1)}-`,
      `${key.slice(0, -1)}é`,
      `${key}%0A`,
      `Bearer ${key}`,
    ];
    for (const b of bad) expect(parseKey(b), JSON.stringify(b)).to.equal(null);
  });
});
