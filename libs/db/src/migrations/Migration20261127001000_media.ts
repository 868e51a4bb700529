import { Migration } from '@mikro-orm/migrations';

/**
 * Media files uploaded with `POST /api/v1/media` (docs/media.md). The bytes live in the private object store under
 * `media/<workspace_id>/<id>`; this row is the record: the sniffed type, its size, and the processing state.
 * `bytes` is an integer: an upload is at most 25 MB.
 */
export class Migration20261127001000_media extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      create table media (
        id text primary key,
        workspace_id text not null references workspaces(id) on delete cascade,
        kind text not null check (kind in ('image','video','audio')),
        mime text not null,
        bytes integer not null,
        status text not null default 'processing' check (status in ('processing','ready','failed')),
        error text null,
        created_at timestamptz not null default now()
      );`);
    this.addSql('create index media_ws_created_idx on media (workspace_id, created_at desc, id desc);');
  }

  override async down(): Promise<void> {
    this.addSql('drop table if exists media;');
  }
}
