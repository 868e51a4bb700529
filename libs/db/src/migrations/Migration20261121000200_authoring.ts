import { Migration } from '@mikro-orm/migrations';

/**
 * Authoring (issue 3): courses, themes, certificate templates, collections and
 * translations. Every row carries `workspace_id`; references between them are
 * checked to be in the same workspace by libs/authoring (a foreign key alone
 * cannot say "same workspace" without also nulling `workspace_id`).
 */
export class Migration20261121000200_authoring extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      create table themes (
        id text primary key,
        workspace_id text not null references workspaces(id) on delete cascade,
        name text not null,
        tokens jsonb not null default '{}'::jsonb,
        custom_fonts jsonb not null default '[]'::jsonb,
        created_at timestamptz not null default now(),
        updated_at timestamptz not null default now()
      );`);
    this.addSql(`create index themes_ws_created_idx on themes (workspace_id, created_at desc, id desc);`);
    this.addSql(`
      create table certificate_templates (
        id text primary key,
        workspace_id text not null references workspaces(id) on delete cascade,
        name text not null,
        tokens jsonb not null default '{}'::jsonb,
        created_at timestamptz not null default now(),
        updated_at timestamptz not null default now()
      );`);
    this.addSql(
      `create index certificate_templates_ws_created_idx on certificate_templates (workspace_id, created_at desc, id desc);`,
    );
    // Deleting a theme or template falls back to "no theme" / the built-in design (SPEC.md): ON DELETE SET NULL.
    this.addSql(`
      create table courses (
        id text primary key,
        workspace_id text not null references workspaces(id) on delete cascade,
        title text not null,
        status text not null default 'draft' check (status in ('draft','published')),
        screens jsonb not null default '[]'::jsonb,
        source_kind text not null default 'manual',
        direction text not null default 'ltr' check (direction in ('ltr','rtl')),
        locale text not null default 'en',
        custom_fonts jsonb not null default '[]'::jsonb,
        theme_id text null references themes(id) on delete set null,
        certificate_id text null references certificate_templates(id) on delete set null,
        passing_score numeric null check (passing_score >= 0 and passing_score <= 100),
        quiz_feedback text not null default 'deferred' check (quiz_feedback in ('deferred','immediate')),
        navigation text not null default 'default' check (navigation in ('default','hidden')),
        content_hash text not null,
        created_at timestamptz not null default now(),
        updated_at timestamptz not null default now()
      );`);
    this.addSql(`create index courses_ws_created_idx on courses (workspace_id, created_at desc, id desc);`);
    this.addSql(`create index courses_theme_idx on courses (theme_id) where theme_id is not null;`);
    this.addSql(
      `create index courses_certificate_idx on courses (certificate_id) where certificate_id is not null;`,
    );
    this.addSql(`
      create table collections (
        id text primary key,
        workspace_id text not null references workspaces(id) on delete cascade,
        name text not null,
        description text null,
        created_at timestamptz not null default now(),
        updated_at timestamptz not null default now()
      );`);
    this.addSql(
      `create index collections_ws_created_idx on collections (workspace_id, created_at desc, id desc);`,
    );
    // A deleted course leaves every collection (cascade); `position` only orders, gaps are fine.
    this.addSql(`
      create table collection_courses (
        collection_id text not null references collections(id) on delete cascade,
        course_id text not null references courses(id) on delete cascade,
        position integer not null,
        added_at timestamptz not null default now(),
        primary key (collection_id, course_id)
      );`);
    this.addSql(`create index collection_courses_order_idx on collection_courses (collection_id, position);`);
    this.addSql(`create index collection_courses_course_idx on collection_courses (course_id);`);
    this.addSql(`
      create table course_translations (
        id text primary key,
        course_id text not null references courses(id) on delete cascade,
        workspace_id text not null references workspaces(id) on delete cascade,
        locale text not null,
        content jsonb not null default '{}'::jsonb,
        source_hash text not null,
        source_fingerprints jsonb not null default '{}'::jsonb,
        created_at timestamptz not null default now(),
        updated_at timestamptz not null default now(),
        unique (course_id, locale)
      );`);
  }

  override async down(): Promise<void> {
    for (const t of [
      'course_translations',
      'collection_courses',
      'collections',
      'courses',
      'certificate_templates',
      'themes',
    ]) {
      this.addSql(`drop table if exists ${t} cascade;`);
    }
  }
}
