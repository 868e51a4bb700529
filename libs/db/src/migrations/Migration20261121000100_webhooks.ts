import { Migration } from '@mikro-orm/migrations';

/**
 * Webhook endpoints, deliveries and attempts.
 *
 * The retry schedule lives here, not in a timer: a pending delivery is due when `next_attempt_at <= now()` and
 * nobody holds its lease (`locked_until` null or past). A dispatcher claims due rows (bumping `claim_seq`) and hands
 * them to its worker's sender; only the holder of the current `claim_seq` may record an attempt.
 */
export class Migration20261121000100_webhooks extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      create table webhook_endpoints (
        id text primary key,
        workspace_id text not null references workspaces(id) on delete cascade,
        name text not null,
        url text not null,
        event_types text[] not null,
        is_active boolean not null default true,
        secret_encrypted text not null,
        disabled_reason text null,
        created_at timestamptz not null default now(),
        updated_at timestamptz not null default now()
      );`);
    this.addSql(`create index webhook_endpoints_ws_idx on webhook_endpoints (workspace_id, created_at, id);`);
    this.addSql(`
      create table webhook_deliveries (
        id text primary key,
        workspace_id text not null references workspaces(id) on delete cascade,
        endpoint_id text not null references webhook_endpoints(id) on delete cascade,
        event_id text not null,
        event_type text not null,
        payload text not null,
        status text not null check (status in ('pending','delivered','failed','cancelled')),
        attempts integer not null default 0,
        max_attempts integer not null default 5,
        last_status_code integer null,
        last_error text null,
        next_attempt_at timestamptz null,
        locked_until timestamptz null,
        claim_seq integer not null default 0,
        created_at timestamptz not null default now(),
        updated_at timestamptz not null default now(),
        unique (event_id, endpoint_id)
      );`);
    // Due pending rows per endpoint: the dispatcher's loose scan over endpoints and its per-endpoint pick.
    this.addSql(
      `create index webhook_deliveries_due_idx on webhook_deliveries (endpoint_id, next_attempt_at, id) where status = 'pending';`,
    );
    // Leased (in-flight) rows: the per-endpoint and overall concurrency bounds count these.
    this.addSql(
      `create index webhook_deliveries_leased_idx on webhook_deliveries (locked_until) where status = 'pending' and locked_until is not null;`,
    );
    // The delivery log: newest first per endpoint.
    this.addSql(
      `create index webhook_deliveries_log_idx on webhook_deliveries (endpoint_id, created_at desc, id desc);`,
    );
    this.addSql(`
      create table webhook_attempts (
        delivery_id text not null references webhook_deliveries(id) on delete cascade,
        attempt integer not null,
        status_code integer null,
        error text null,
        duration_ms integer not null,
        response_body text not null default '',
        started_at timestamptz not null,
        primary key (delivery_id, attempt)
      );`);
  }

  override async down(): Promise<void> {
    for (const t of ['webhook_attempts', 'webhook_deliveries', 'webhook_endpoints']) {
      this.addSql(`drop table if exists ${t} cascade;`);
    }
  }
}
