import { Migration } from '@mikro-orm/migrations';

/**
 * The relay takes the oldest unsent events in `(created_at, id)` order, a batch at a time. The index on unsent
 * rows held `created_at` alone, so the order needed a sort on top of it, and with statistics taken while nothing
 * was waiting (an autoanalyze in a quiet moment: "one unsent row") the planner chose to read every unsent row and
 * sort them all for each batch of 500: a burst of 10,000 events cost 2.3 s of relay statements instead of 0.4 s,
 * measured on the webhook bench after a VACUUM ANALYZE. With `id` in the index the rows come out in the order
 * asked for, and the batch stops after its 500 whatever the statistics say.
 *
 * Building it reads the whole table while event writes wait. On a large `outbox_events` create it beforehand
 * without blocking writes (`create index concurrently outbox_unsent_order_idx on outbox_events (created_at, id)
 * where published_at is null;`, docs/operations.md "Migrations"): this migration then finds it and only drops the
 * old index.
 */
export class Migration20261130000100_outbox_unpublished_order extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `create index if not exists outbox_unsent_order_idx on outbox_events (created_at, id) where published_at is null;`,
    );
    this.addSql(`drop index if exists outbox_unpublished_idx;`);
  }

  override async down(): Promise<void> {
    this.addSql(
      `create index if not exists outbox_unpublished_idx on outbox_events (created_at) where published_at is null;`,
    );
    this.addSql(`drop index if exists outbox_unsent_order_idx;`);
  }
}
