import { Migration } from '@mikro-orm/migrations';

/**
 * Who may spend a workspace's views (docs/player-api.md "Who may open runs"), and the views per day:
 * - `player_settings`: one row per workspace that changed a setting (no row = any origin, anonymous runs on).
 *   `allowed_origins` is a JSON array of origins (`https://lms.example.com`, `https://*.example.com`) or null for
 *   any origin; it feeds the embed page's `frame-ancestors` and the `Origin` check of run opens.
 * - `usage_daily`: the views of each UTC day, counted by the same statement as `usage_counters` (so the days of a
 *   month add up to its count) and shown by `GET /api/v1/usage`, so a customer sees a flood on the day it happens.
 */
export class Migration20261126001000_player_access extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      create table player_settings (
        workspace_id text primary key references workspaces(id) on delete cascade,
        allowed_origins jsonb null,
        anonymous_runs boolean not null default true,
        updated_at timestamptz not null default now()
      );`);
    this.addSql(`
      create table usage_daily (
        workspace_id text not null references workspaces(id) on delete cascade,
        day date not null,
        metric text not null,
        count bigint not null default 0,
        primary key (workspace_id, day, metric)
      );`);
  }

  override async down(): Promise<void> {
    this.addSql('drop table if exists usage_daily;');
    this.addSql('drop table if exists player_settings;');
  }
}
