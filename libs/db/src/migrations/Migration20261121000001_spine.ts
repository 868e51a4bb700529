import { Migration } from '@mikro-orm/migrations';

export class Migration20261121000001_spine extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      create table workspaces (
        id text primary key,
        name text not null,
        plan text not null check (plan in ('sandbox','build','scale','partner')),
        billing_status text not null default 'ok' check (billing_status in ('ok','past_due')),
        grace_until timestamptz null,
        created_at timestamptz not null default now(),
        updated_at timestamptz not null default now()
      );`);
    this.addSql(`
      create table api_keys (
        id text primary key,
        workspace_id text not null references workspaces(id) on delete cascade,
        lookup text not null unique,
        hash text not null,
        scope text not null check (scope in ('read','write')),
        created_at timestamptz not null default now(),
        revoked_at timestamptz null
      );`);
    this.addSql(`create index api_keys_workspace_idx on api_keys (workspace_id);`);
    this.addSql(`
      create table identities (
        id text primary key,
        workspace_id text not null references workspaces(id) on delete cascade,
        external_id text not null,
        name text null,
        email text null,
        created_at timestamptz not null default now(),
        updated_at timestamptz not null default now(),
        unique (workspace_id, external_id)
      );`);
    this.addSql(
      `create index identities_ws_created_idx on identities (workspace_id, created_at desc, id desc);`,
    );
    this.addSql(`
      create table outbox_events (
        id text primary key,
        workspace_id text not null,
        type text not null,
        data jsonb not null,
        created_at timestamptz not null default now(),
        published_at timestamptz null
      );`);
    this.addSql(
      `create index outbox_unpublished_idx on outbox_events (created_at) where published_at is null;`,
    );
    this.addSql(`
      create table jobs (
        id text primary key,
        workspace_id text not null references workspaces(id) on delete cascade,
        kind text not null,
        status text not null check (status in ('queued','processing','completed','failed')),
        input jsonb not null default '{}'::jsonb,
        result jsonb null,
        error jsonb null,
        attempts integer not null default 0,
        created_at timestamptz not null default now(),
        updated_at timestamptz not null default now(),
        completed_at timestamptz null
      );`);
    this.addSql(`create index jobs_ws_kind_idx on jobs (workspace_id, kind, created_at desc);`);
    this.addSql(`
      create table usage_counters (
        workspace_id text not null references workspaces(id) on delete cascade,
        month text not null,
        metric text not null,
        count bigint not null default 0,
        primary key (workspace_id, month, metric)
      );`);
    // Rate-limit log: one row per allowed request in the rolling window, shared by every
    // API replica. Unlogged: losing it in a crash only forgives a minute of requests.
    this.addSql(`create unlogged table rate_hits (key_id text not null, at timestamptz not null);`);
    this.addSql(`create index rate_hits_key_at_idx on rate_hits (key_id, at);`);
    this.addSql(`
      create or replace function lectern_rate_hit(p_key text, p_limit integer, p_window_ms integer)
      returns integer language plpgsql as $$
      declare
        n integer;
        oldest timestamptz;
        win interval := make_interval(secs => p_window_ms / 1000.0);
        now_ts timestamptz := clock_timestamp();
      begin
        perform pg_advisory_xact_lock(hashtext('lectern_rate:' || p_key));
        delete from rate_hits where key_id = p_key and at <= now_ts - win;
        select count(*), min(at) into n, oldest from rate_hits where key_id = p_key;
        if n >= p_limit then
          return greatest(1, ceil(extract(epoch from (oldest + win - now_ts)))::integer);
        end if;
        insert into rate_hits (key_id, at) values (p_key, now_ts);
        return 0;
      end $$;`);
  }

  override async down(): Promise<void> {
    this.addSql('drop function if exists lectern_rate_hit(text, integer, integer);');
    for (const t of [
      'rate_hits',
      'usage_counters',
      'jobs',
      'outbox_events',
      'identities',
      'api_keys',
      'workspaces',
    ]) {
      this.addSql(`drop table if exists ${t} cascade;`);
    }
  }
}
