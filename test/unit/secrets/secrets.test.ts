import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { decryptSecret, encryptSecret, parseEncryptionKey } from '@lectern/secrets';
import { generateSigningSecret } from '@lectern/webhooks';

describe('secrets: encryption at rest', () => {
  const key = randomBytes(32);

  it('generates whsec_ + base64 of 32 random bytes', () => {
    const seen = new Set<string>();
    for (let i = 0; i < 50; i++) {
      const s = generateSigningSecret();
      expect(s).to.match(/^whsec_[A-Za-z0-9+/]{43}=$/);
      expect(Buffer.from(s.slice('whsec_'.length), 'base64')).to.have.length(32);
      seen.add(s);
    }
    expect(seen.size).to.equal(50);
  });

  it('round-trips through AES-256-GCM in the v1:<iv>:<tag>:<ct> format', () => {
    const secret = generateSigningSecret();
    const stored = encryptSecret(secret, key);
    const parts = stored.split(':');
    expect(parts).to.have.length(4);
    expect(parts[0]).to.equal('v1');
    expect(Buffer.from(parts[1], 'base64')).to.have.length(12);
    expect(Buffer.from(parts[2], 'base64')).to.have.length(16);
    expect(stored).not.to.contain(secret.slice(6));
    expect(decryptSecret(stored, key)).to.equal(secret);
  });

  it('uses a fresh IV every time', () => {
    const a = encryptSecret('whsec_same', key);
    const b = encryptSecret('whsec_same', key);
    expect(a).not.to.equal(b);
    expect(a.split(':')[1]).not.to.equal(b.split(':')[1]);
  });

  it('detects tampering with iv, tag or ciphertext', () => {
    const stored = encryptSecret(generateSigningSecret(), key);
    const parts = stored.split(':');
    for (const i of [1, 2, 3]) {
      const bytes = Buffer.from(parts[i], 'base64');
      bytes[0] ^= 0x01;
      const tampered = [...parts];
      tampered[i] = bytes.toString('base64');
      expect(() => decryptSecret(tampered.join(':'), key), `part ${i}`).to.throw(/could not be decrypted/);
    }
  });

  it('fails with a wrong key', () => {
    const stored = encryptSecret('whsec_x', key);
    expect(() => decryptSecret(stored, randomBytes(32))).to.throw(/could not be decrypted/);
  });

  it('binds the optional context as AAD', () => {
    const stored = encryptSecret('whsec_x', key, 'endpoint-1');
    expect(decryptSecret(stored, key, 'endpoint-1')).to.equal('whsec_x');
    expect(() => decryptSecret(stored, key, 'endpoint-2')).to.throw(/could not be decrypted/);
    expect(() => decryptSecret(stored, key)).to.throw(/could not be decrypted/);
  });

  it('rejects malformed stored values', () => {
    for (const bad of ['', 'v1:a:b', 'v2:AAAA:AAAA:AAAA', 'v1:!!!!:AAAA:AAAA', 'v1:AAAA:AAAA:AAAA']) {
      expect(() => decryptSecret(bad, key), bad).to.throw(/malformed/);
    }
  });

  it('refuses keys that are not 32 bytes', () => {
    expect(() => encryptSecret('x', randomBytes(16))).to.throw(/32 bytes/);
    expect(() => decryptSecret('v1:a:b:c', randomBytes(31))).to.throw(/32 bytes/);
  });

  describe('parseEncryptionKey', () => {
    const raw = randomBytes(32);
    it('accepts 64 hex characters', () => {
      expect(parseEncryptionKey(raw.toString('hex')).equals(raw)).to.equal(true);
      expect(parseEncryptionKey(raw.toString('hex').toUpperCase()).equals(raw)).to.equal(true);
    });
    it('accepts base64 and base64url of 32 bytes, padded or not', () => {
      expect(parseEncryptionKey(raw.toString('base64')).equals(raw)).to.equal(true);
      expect(parseEncryptionKey(` ${raw.toString('base64')}\n`).equals(raw)).to.equal(true);
      expect(parseEncryptionKey(raw.toString('base64url')).equals(raw)).to.equal(true);
    });
    it('throws a clear message otherwise, naming the setting and not echoing the value', () => {
      expect(() => parseEncryptionKey('')).to.throw(/missing/);
      expect(() => parseEncryptionKey(randomBytes(16).toString('hex'), 'WEBHOOK_SECRET_KEY')).to.throw(
        /WEBHOOK_SECRET_KEY must be 32 bytes.*got base64 of 24 bytes/,
      );
      expect(() => parseEncryptionKey(randomBytes(31).toString('base64'))).to.throw(/32 bytes/);
      try {
        parseEncryptionKey('not a key!!');
        expect.fail('should throw');
      } catch (err) {
        expect((err as Error).message).to.match(/64 hex characters or base64 of 32 bytes/);
        expect((err as Error).message).not.to.contain('not a key');
      }
    });
  });
});
