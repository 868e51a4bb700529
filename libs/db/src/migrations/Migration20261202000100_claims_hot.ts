import { Migration } from '@mikro-orm/migrations';

/**
 * A claim rewrote every row it leased as a new version with an entry in each of the table's five indexes (a
 * non-HOT update: `locked_until` was indexed, by the lease count's index), ~1.8 KB of WAL and ~30 µs a row. Each
 * worker now bounds the rows it holds per endpoint itself (it holds them in memory: see `claimDue`), so nothing
 * counts leases in the table and no index holds `locked_until`: a claim changes only columns no index holds and,
 * with room left on the row's page, PostgreSQL writes it as a heap-only update (no index entries; ~90 bytes of WAL
 * against ~1.7 KB). A fill factor of 50 leaves that room for every row of a claim (at 70 only ~2 of a page's ~5
 * rows found it); the outcome's update, which changes `status`, is not heap-only either way. The fill factor
 * applies to pages filled from now on. Cost: the delivery log takes about twice the disk.
 *
 * During a rolling update, replicas of the previous release still count leases in their claims, now without this
 * index: each of their claims reads the pending rows of each endpoint with rows due, slower with a large backlog,
 * until they are replaced (docs/operations.md).
 */
export class Migration20261202000100_claims_hot extends Migration {
  override async up(): Promise<void> {
    this.addSql(`drop index if exists webhook_deliveries_leases_idx;`);
    this.addSql(`alter table webhook_deliveries set (fillfactor = 50);`);
  }

  override async down(): Promise<void> {
    this.addSql(`alter table webhook_deliveries reset (fillfactor);`);
    this.addSql(
      `create index webhook_deliveries_leases_idx on webhook_deliveries (endpoint_id, locked_until)
         with (deduplicate_items = off) where status = 'pending' and locked_until is not null;`,
    );
  }
}
