/**
 * The worker's cache of signing secrets by endpoint id: loaded in batches, decrypted once and kept. A secret never
 * changes after creation, and decrypting per attempt was a measured share of the worker's CPU. Plain secrets stay
 * in this process's memory only.
 */
import type { MikroORM } from '@mikro-orm/postgresql';
import { Batcher, boundQuery } from '@lectern/db';
import { decryptSecret } from '@lectern/secrets';
import { GROUP_COMMIT } from './group-commit.js';

export class SigningSecrets {
  private cache = new Map<string, string>();
  private loads: Batcher<string, string | null>;

  constructor(
    orm: MikroORM,
    private readonly key: Buffer,
    private readonly max = 10_000,
  ) {
    this.loads = new Batcher(async (ids: string[]) => {
      const rows = await boundQuery<{ id: string; secret_encrypted: string }>(
        orm.em.fork(),
        'select id, secret_encrypted from webhook_endpoints where id = any (?::text[])',
        [[...new Set(ids)]],
      );
      const byId = new Map(rows.map((r) => [r.id, r.secret_encrypted]));
      return ids.map((id) => byId.get(id) ?? null);
    }, GROUP_COMMIT);
  }

  /** The plain secret, or null when the endpoint is gone. Throws when it cannot be decrypted. */
  async get(endpointId: string): Promise<string | null> {
    const cached = this.cache.get(endpointId);
    if (cached !== undefined) return cached;
    const stored = await this.loads.add(endpointId);
    if (stored === null) return null;
    const plain = decryptSecret(stored, this.key, endpointId);
    // Oldest first out: a bound on memory, not a policy (a miss costs one batched load).
    if (this.cache.size >= this.max) this.cache.delete(this.cache.keys().next().value!);
    this.cache.set(endpointId, plain);
    return plain;
  }
}
