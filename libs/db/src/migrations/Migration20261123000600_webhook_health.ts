import { Migration } from '@mikro-orm/migrations';

/**
 * Sustained-failure switch-off (docs/webhooks.md): `failing_since` is when the endpoint's current run of failed
 * attempts began (null after any 2xx), `disabled_at` when Lectern switched the endpoint off (beside
 * `disabled_reason`). Endpoints an earlier version disabled after a 410 get their `updated_at` as `disabled_at`.
 */
export class Migration20261123000600_webhook_health extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      alter table webhook_endpoints
        add column failing_since timestamptz null,
        add column disabled_at timestamptz null;`);
    this.addSql(
      `update webhook_endpoints set disabled_at = updated_at where disabled_reason is not null and not is_active;`,
    );
  }

  override async down(): Promise<void> {
    this.addSql(`alter table webhook_endpoints drop column failing_since, drop column disabled_at;`);
  }
}
