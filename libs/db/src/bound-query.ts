/**
 * The one way to run hand-written SQL: `boundQuery(em, text, params)`.
 *
 * Values travel as parameters of the PostgreSQL extended protocol (`$1`, `$2`, … on the wire), never spliced into
 * the statement text. That is both the safe way (no escaping to get wrong) and the fast one: the ORM's own
 * `execute` inlines every value by escaping it character by character, and a webhook batch carries hundreds of
 * ~1 KB event bodies, where that escaping was a measured share of the worker's CPU.
 *
 * Writing statements:
 * - `?` marks a value (knex rewrites it to `$n`); `\\?` is a literal question mark (jsonb's `?` operators) and
 *   `??` an identifier, so neither may appear by accident.
 * - A JavaScript array binds as ONE PostgreSQL array: write `= any (?::text[])`, never `in (?)`.
 * - A bound value has no type of its own; PostgreSQL infers it from where it stands. Where nothing says (a `case`
 *   branch, a `select` list feeding an `insert … select`), cast it: `?::int`, `?::timestamptz`.
 * - jsonb: bind `JSON.stringify(value)` and cast `?::jsonb` (node-postgres would send a JavaScript array as a
 *   PostgreSQL array literal, not as JSON).
 * - `undefined` is refused (knex throws); send `null` for SQL NULL.
 *
 * The statement runs inside the EntityManager's transaction when there is one (`em.transactional(tx => …)`), so it
 * sees and is rolled back with the ORM's own writes.
 */
import type { Knex } from '@mikro-orm/knex';
import type { EntityManager } from '@mikro-orm/postgresql';

export async function boundQuery<T = Record<string, unknown>>(
  em: EntityManager,
  text: string,
  params: readonly unknown[] = [],
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
