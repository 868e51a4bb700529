import { expect } from 'chai';
import { hkdfSync, randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { ConfigError } from '@lectern/config';
import {
  deriveKey,
  ensureInstallationSecretKey,
  installationSecretKey,
  SECRET_KEY_FILE,
} from '@lectern/secrets';

describe('secrets: the installation secret key', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'lectern-secret-key-'));
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  const dev = () => ({ NODE_ENV: 'development' as const, DATA_DIR: dir, WEBHOOK_SECRET_KEY: undefined });

  it('is generated once under DATA_DIR when unset, then reused', async () => {
    const cfg = dev();
    const [a, b] = await Promise.all([ensureInstallationSecretKey(cfg), ensureInstallationSecretKey(cfg)]);
    expect(a.WEBHOOK_SECRET_KEY).to.match(/^[0-9a-f]{64}$/);
    expect(b.WEBHOOK_SECRET_KEY).to.equal(a.WEBHOOK_SECRET_KEY);
    // The file keeps its name, so an installation generated before the key was neutral still finds it.
    const file = path.join(dir, 'webhook-secret.key');
    expect(SECRET_KEY_FILE).to.equal('webhook-secret.key');
    expect((await readFile(file, 'utf8')).trim()).to.equal(a.WEBHOOK_SECRET_KEY);
    expect((await stat(file)).mode & 0o777).to.equal(0o600);
    const again = await ensureInstallationSecretKey(cfg);
    expect(again.WEBHOOK_SECRET_KEY).to.equal(a.WEBHOOK_SECRET_KEY);
  });

  it('a damaged key file stops the process with the fix, instead of a new key that cannot decrypt', async () => {
    await writeFile(path.join(dir, SECRET_KEY_FILE), 'not a key\n');
    const err = await ensureInstallationSecretKey(dev()).then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).to.be.instanceOf(ConfigError);
    expect((err as Error).message)
      .to.include('fix or delete')
      .and.include('WEBHOOK_SECRET_KEY');
  });

  it('is required in production, with a message that says how to fix it', async () => {
    const cfg = { ...dev(), NODE_ENV: 'production' as const };
    const err = await ensureInstallationSecretKey(cfg).then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).to.be.instanceOf(ConfigError);
    expect((err as Error).message)
      .to.include('WEBHOOK_SECRET_KEY')
      .and.include('openssl rand -hex 32');
    const bad = await ensureInstallationSecretKey({ ...cfg, WEBHOOK_SECRET_KEY: 'short' }).then(
      () => null,
      (e: unknown) => e,
    );
    expect(bad).to.be.instanceOf(ConfigError);
    const good = randomBytes(32).toString('hex');
    expect(
      (await ensureInstallationSecretKey({ ...cfg, WEBHOOK_SECRET_KEY: good })).WEBHOOK_SECRET_KEY,
    ).to.equal(good);
    expect(installationSecretKey({ WEBHOOK_SECRET_KEY: good }).toString('hex')).to.equal(good);
  });

  it('derives the same keys as before it moved: HKDF-SHA256, salt "lectern", one label per use', () => {
    const material = randomBytes(32);
    for (const label of ['run tokens v1', 'credential signing v1']) {
      const before = new Uint8Array(hkdfSync('sha256', material, 'lectern', label, 32));
      expect(Buffer.from(deriveKey(material, label)).equals(Buffer.from(before)), label).to.equal(true);
    }
    expect(Buffer.from(deriveKey(material, 'a')).equals(Buffer.from(deriveKey(material, 'b')))).to.equal(
      false,
    );
  });
});
