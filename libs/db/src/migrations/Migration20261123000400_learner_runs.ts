import { Migration } from '@mikro-orm/migrations';

/**
 * Learner runs (issue 9): embed keys, completions (one row per course and learner), the append-only attempts
 * log, the idempotency keys of event batches, and the per-address counters of the player's rate limit.
 * Decisions: docs/player-api.md.
 */
export class Migration20261123000400_learner_runs extends Migration {
  override async up(): Promise<void> {
    // Revoked keys stay (revoked_at set) so a refused token can say "revoked" rather than "unknown".
    this.addSql(`
      create table embed_keys (
        id text primary key,
        workspace_id text not null references workspaces(id) on delete cascade,
        name text not null,
        secret_encrypted text not null,
        created_at timestamptz not null default now(),
        revoked_at timestamptz null
      );`);
    this.addSql(
      `create index embed_keys_ws_created_idx on embed_keys (workspace_id, created_at desc, id desc);`,
    );
    // One row per (course, learner): a signed identity or an anonymous player id, never both. Deleting the
    // course or the identity deletes its runs (docs/player-api.md).
    this.addSql(`
      create table completions (
        id text primary key,
        workspace_id text not null references workspaces(id) on delete cascade,
        course_id text not null references courses(id) on delete cascade,
        identity_id text null references identities(id) on delete cascade,
        anonymous_id text null,
        source text not null check (source in ('embed','scorm')),
        status text not null default 'in_progress' check (status in ('in_progress','completed')),
        score numeric null,
        passed_at_completion boolean null,
        passing_score_at_completion numeric null,
        attempt integer null,
        pass integer not null default 1,
        pass_started_at timestamptz not null,
        pass_time_seconds integer not null default 0,
        content_hash text not null,
        time_spent_seconds integer not null default 0,
        last_screen_id text null,
        progress_percent numeric not null default 0,
        locale text not null,
        answers jsonb not null default '{}'::jsonb,
        started_at timestamptz not null,
        last_seen_at timestamptz not null,
        completed_at timestamptz null,
        last_event_at timestamptz not null,
        rate_window_start timestamptz not null,
        rate_window_count integer not null default 0,
        check ((identity_id is null) <> (anonymous_id is null)),
        unique (course_id, identity_id),
        unique (course_id, anonymous_id)
      );`);
    this.addSql(
      `create index completions_ws_started_idx on completions (workspace_id, started_at desc, id desc);`,
    );
    this.addSql(
      `create index completions_ws_completed_idx on completions (workspace_id, completed_at desc, id desc) where completed_at is not null;`,
    );
    this.addSql(
      `create index completions_identity_idx on completions (identity_id) where identity_id is not null;`,
    );
    // Append-only; (completion_id, attempt) unique, so one finish can never be recorded twice.
    this.addSql(`
      create table attempts (
        id text primary key,
        workspace_id text not null references workspaces(id) on delete cascade,
        completion_id text not null references completions(id) on delete cascade,
        course_id text not null references courses(id) on delete cascade,
        identity_id text null references identities(id) on delete cascade,
        attempt integer not null,
        score numeric null,
        passed boolean null,
        passing_score numeric null,
        content_hash text not null,
        source text not null check (source in ('embed','scorm')),
        locale text not null,
        time_spent_seconds integer not null,
        started_at timestamptz not null,
        completed_at timestamptz not null,
        answers jsonb not null default '{}'::jsonb,
        unique (completion_id, attempt)
      );`);
    // A batch id is claimed by inserting it; the stored response answers a retry of the same batch.
    this.addSql(`
      create table completion_batches (
        completion_id text not null references completions(id) on delete cascade,
        batch_id text not null,
        response jsonb null,
        created_at timestamptz not null default now(),
        primary key (completion_id, batch_id)
      );`);
    // Fixed one-minute windows per client address. Unlogged: a crash only forgives a minute of opens.
    this.addSql(`
      create unlogged table player_rate (
        key text primary key,
        window_start timestamptz not null,
        n integer not null
      );`);
  }

  override async down(): Promise<void> {
    for (const t of ['player_rate', 'completion_batches', 'attempts', 'completions', 'embed_keys']) {
      this.addSql(`drop table if exists ${t} cascade;`);
    }
  }
}
