/**
 * The installation secret key: one 32-byte key per installation that encrypts secrets at rest (webhook signing
 * secrets, embed-key secrets) and from which the keys nobody configured are derived (`deriveKey`: run tokens,
 * certificate credentials).
 *
 * Its variable keeps the name it had when webhooks were its only user, WEBHOOK_SECRET_KEY, so existing
 * installations and manifests keep working. When set, it wins. In production it is required. Elsewhere (a laptop
 * running `lectern start`) a key is generated once and kept at DATA_DIR/webhook-secret.key (mode 0600), so what was
 * encrypted yesterday still decrypts today. Every process of one installation must use the same key.
 */
import { randomBytes } from 'node:crypto';
import { link, mkdir, readFile, unlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { ConfigError, checkedBy, type BaseConfig } from '@lectern/config';
import { parseEncryptionKey } from './encryption.js';

/** The file under DATA_DIR holding a generated key; its name predates the key's other uses. */
export const SECRET_KEY_FILE = 'webhook-secret.key';
const VAR = 'WEBHOOK_SECRET_KEY';

/** The configuration piece of the installation secret key; optional here, `ensureInstallationSecretKey` decides. */
export const InstallationSecretEnv = z.object({
  WEBHOOK_SECRET_KEY: checkedBy((v) => parseEncryptionKey(v, 'a 32-byte key')).optional(),
});
export type InstallationSecretConfig = z.output<typeof InstallationSecretEnv>;

/** The 32-byte key from configuration; throws a ConfigError naming the variable when it is missing or malformed. */
export function installationSecretKey(cfg: InstallationSecretConfig): Buffer {
  try {
    return parseEncryptionKey(cfg.WEBHOOK_SECRET_KEY ?? '', VAR);
  } catch (err) {
    throw new ConfigError([`${(err as Error).message} (generate one with: openssl rand -hex 32)`]);
  }
}

/**
 * Returns `cfg` with WEBHOOK_SECRET_KEY set: the configured one (validated), or outside production the one kept
 * under DATA_DIR, generated on first use. Two processes starting at once agree on one key (exclusive create).
 */
export async function ensureInstallationSecretKey<
  C extends InstallationSecretConfig & Pick<BaseConfig, 'NODE_ENV' | 'DATA_DIR'>,
>(cfg: C): Promise<Omit<C, 'WEBHOOK_SECRET_KEY'> & { WEBHOOK_SECRET_KEY: string }> {
  if (cfg.WEBHOOK_SECRET_KEY) {
    installationSecretKey(cfg);
    return { ...cfg, WEBHOOK_SECRET_KEY: cfg.WEBHOOK_SECRET_KEY };
  }
  if (cfg.NODE_ENV === 'production') {
    throw new ConfigError([
      `${VAR}: required in production: 64 hex characters (generate with: openssl rand -hex 32). ` +
        'It encrypts webhook signing secrets at rest; keep it stable and identical for every process.',
    ]);
  }
  const file = path.resolve(cfg.DATA_DIR, SECRET_KEY_FILE);
  const read = async (): Promise<string> => {
    const key = (await readFile(file, 'utf8')).trim();
    try {
      parseEncryptionKey(key, file);
    } catch (err) {
      throw new ConfigError([`${(err as Error).message}: fix or delete ${file}, or set ${VAR}`]);
    }
    return key;
  };
  let key: string;
  try {
    key = await read();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    await mkdir(path.dirname(file), { recursive: true });
    // Written aside, then linked into place: readers never see a half-written file, and link() fails with
    // EEXIST when another process won the race, in which case its key is the one.
    const tmp = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
    await writeFile(tmp, `${randomBytes(32).toString('hex')}\n`, { mode: 0o600, flag: 'wx' });
    try {
      await link(tmp, file);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    } finally {
      await unlink(tmp);
    }
    key = await read();
  }
  return { ...cfg, WEBHOOK_SECRET_KEY: key };
}
