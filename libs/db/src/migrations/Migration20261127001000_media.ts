import { Migration } from '@mikro-orm/migrations';

/**
 * Media uploads (docs/media.md):
 * - `media`: one row per uploaded file, its object key in the private store and what the media worker found.
 * - `workspace_storage`: settled and reserved bytes per workspace against the plan's storage line.
 */
export class Migration20261127001000_media extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      create table media (
        id text primary key,
        workspace_id text not null references workspaces(id) on delete cascade,
        kind text not null check (kind in ('image', 'video', 'audio')),
        content_type text not null,
        bytes bigint not null,
        object_key text not null,
        status text not null default 'processing' check (status in ('processing', 'ready', 'failed')),
        width integer null,
        height integer null,
        duration_seconds numeric null,
        variants jsonb not null default '[]',
        placeholder text null,
        error text null,
        created_at timestamptz not null default now(),
        updated_at timestamptz not null default now()
      );`);
    this.addSql('create index media_ws_created_idx on media (workspace_id, created_at desc, id desc);');
    this.addSql(`
      create table workspace_storage (
        workspace_id text primary key references workspaces(id) on delete cascade,
        used_bytes bigint not null default 0,
        reserved_bytes bigint not null default 0
      );`);
  }

  override async down(): Promise<void> {
    this.addSql('drop table if exists workspace_storage;');
    this.addSql('drop table if exists media;');
  }
}
