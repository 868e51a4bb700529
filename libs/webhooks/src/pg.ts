/**
 * Hot statements of the webhook pipeline (fan-out, claims, renewals, attempt records) with their values bound by
 * the PostgreSQL protocol, rather than inlined into the text as the ORM's `execute` (and so `sql()`) does: a
 * batch carries hundreds of ~1 KB event bodies, and escaping them into the statement text character by character
 * was a measured share of the worker's CPU. `?` placeholders as in `sql()`; a JavaScript array binds as one
 * PostgreSQL array (write `= any (?::text[])`, not `in (?)`).
 */
import type { Knex } from '@mikro-orm/knex';
import type { EntityManager } from '@lectern/db';

export async function query<T = Record<string, unknown>>(
  em: EntityManager,
  text: string,
  params: unknown[] = [],
): Promise<T[]> {
  const q = em
    .getConnection()
    .getKnex()
    .raw(text, params as Knex.RawBinding[]);
  const trx = em.getTransactionContext<Knex.Transaction>();
  if (trx) q.transacting(trx);
  const res = (await q) as { rows: T[] };
  return res.rows;
}
