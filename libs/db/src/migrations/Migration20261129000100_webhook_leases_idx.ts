import { Migration } from '@mikro-orm/migrations';

/**
 * The claim counts each endpoint's leased rows on every pass. It did so through an index on `locked_until` alone,
 * which PostgreSQL read as a bitmap scan: a bitmap scan never marks an index entry dead, and every lease and every
 * outcome is a non-HOT update, so in a burst each claim visited the heap for every row leased since the last
 * vacuum (~19,000 entries for ~256 live leases, ~3 ms of a ~4 ms claim, the largest single statement of the path).
 *
 * The new index is per endpoint, read by an ordered scan from each endpoint the claim already walks; an ordered
 * index scan marks the entries of dead rows as it passes them, so the next claim skips them. Deduplication is off:
 * a claim gives every row it leases the same `locked_until`, and a deduplicated entry holding a live lease beside
 * dead ones could never be marked dead.
 */
export class Migration20261129000100_webhook_leases_idx extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `create index webhook_deliveries_leases_idx on webhook_deliveries (endpoint_id, locked_until)
         with (deduplicate_items = off) where status = 'pending' and locked_until is not null;`,
    );
    this.addSql(`drop index webhook_deliveries_leased_idx;`);
  }

  override async down(): Promise<void> {
    this.addSql(
      `create index webhook_deliveries_leased_idx on webhook_deliveries (locked_until) where status = 'pending' and locked_until is not null;`,
    );
    this.addSql(`drop index webhook_deliveries_leases_idx;`);
  }
}
