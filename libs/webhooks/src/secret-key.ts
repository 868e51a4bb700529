/**
 * Where the key that encrypts signing secrets at rest comes from.
 *
 * WEBHOOK_SECRET_KEY wins when set. In production it is required. Elsewhere (a laptop running `lectern start`) a
 * key is generated once and kept at DATA_DIR/webhook-secret.key (mode 0600), so endpoints created yesterday still
 * decrypt today. Every process of one installation must use the same key.
 */
import { randomBytes } from 'node:crypto';
import { link, mkdir, readFile, unlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { ConfigError, type BaseConfig } from '@lectern/config';
import type { WebhookConfig } from './env.js';
import { parseEncryptionKey } from './secrets.js';

export const SECRET_KEY_FILE = 'webhook-secret.key';
const VAR = 'WEBHOOK_SECRET_KEY';

/** The 32-byte key from configuration; throws a ConfigError naming the variable when it is missing or malformed. */
export function webhookSecretKey(cfg: Pick<WebhookConfig, 'WEBHOOK_SECRET_KEY'>): Buffer {
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
export async function ensureWebhookSecretKey<
  C extends WebhookConfig & Pick<BaseConfig, 'NODE_ENV' | 'DATA_DIR'>,
>(cfg: C): Promise<Omit<C, 'WEBHOOK_SECRET_KEY'> & { WEBHOOK_SECRET_KEY: string }> {
  if (cfg.WEBHOOK_SECRET_KEY) {
    webhookSecretKey(cfg);
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
