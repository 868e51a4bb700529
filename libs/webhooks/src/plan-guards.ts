/**
 * Conditions for the statements on `webhook_deliveries` that find their rows by primary key, written to keep
 * that plan whatever the table's statistics say.
 *
 * The table is a queue: its partial index on pending rows (`where status = 'pending'`) holds thousands of rows
 * in a burst and none once it has drained. Statistics taken in such a quiet moment (an autoanalyze) say that
 * index "holds one row"; in the next burst the planner then scans the partial index whole, or the whole table,
 * and filters the listed ids, instead of looking them up. A claim
 * of 128 rows took 17 ms instead of 2-5 (claims 6.2-7.5 s of a bench run instead of 1.3-1.6 s). `webhooks-claims`
 * creates those statistics and checks the plans.
 */

/** "The row is still pending", written so that it is not the partial index's predicate (which invites it). */
export const STILL_PENDING = `(d.status || '') = 'pending'`;

/**
 * The rows of a `v(id, …)` list, driven by the primary key: without it the planner may read the table (or a
 * partial index) once and join the list in memory, one row expected, then compare every row read with every
 * listed one.
 */
export const BY_KEY = `d.id = any (array(select id from v))`;
