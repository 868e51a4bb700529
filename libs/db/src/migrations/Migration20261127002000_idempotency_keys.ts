import { Migration } from '@mikro-orm/migrations';

/**
 * `idempotency_keys` (libs/idempotency, docs/generation.md "Idempotency"): one row per Idempotency-Key a
 * workspace used on a route (`scope` = operationId). `response` is null while the first request runs and holds
 * its answer afterwards; `fingerprint` is the body's hash (null until a streamed body was read). Rows older than
 * 24 hours are claimed afresh; `idempotency_keys_created_idx` serves a clean-up of old rows.
 */
export class Migration20261127002000_idempotency_keys extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      create table idempotency_keys (
        workspace_id text not null references workspaces(id) on delete cascade,
        scope text not null,
        key text not null,
        fingerprint text null,
        response jsonb null,
        created_at timestamptz not null default now(),
        primary key (workspace_id, scope, key)
      );`);
    this.addSql('create index idempotency_keys_created_idx on idempotency_keys (created_at);');
  }

  override async down(): Promise<void> {
    this.addSql('drop table if exists idempotency_keys;');
  }
}
