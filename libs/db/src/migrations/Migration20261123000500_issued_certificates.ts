import { Migration } from '@mikro-orm/migrations';

/**
 * Issued certificates (issue 11). A row is written the first time a learner downloads
 * the certificate of a finished run and never changes afterwards, except `pdf_key` once
 * the PDF is stored. It records what was true at issue (learner name, course title in
 * the learner's locale, issuer, score, locale, the template design), so later edits
 * change no issued certificate.
 *
 * - `completion_id` is unique: one certificate per completion, i.e. per course and
 *   learner, and the key the race-safe `insert … on conflict do nothing` claims on.
 *   It has no foreign key yet: completions arrive with the learner-runs work.
 * - `serial` is unique across every workspace, forever: lookups and the public
 *   verification page find a certificate by serial alone.
 * - `course_id` restricts deletion: a course with issued certificates cannot be deleted
 *   (SPEC.md 409 `conflict`; libs/authoring answers before the database has to).
 * - `identity_id` has no foreign key on purpose: an issued certificate stays verifiable
 *   after the learner's identity is deleted (docs/certificates.md).
 */
export class Migration20261123000500_issued_certificates extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      create table issued_certificates (
        id text primary key,
        workspace_id text not null references workspaces(id) on delete cascade,
        serial text not null unique,
        completion_id text not null unique,
        course_id text not null references courses(id) on delete restrict,
        identity_id text not null,
        identity_external_id text not null,
        learner_name text not null,
        course_title text not null,
        issuer_name text not null,
        score numeric null check (score >= 0 and score <= 100),
        locale text not null,
        direction text not null check (direction in ('ltr','rtl')),
        template_id text null,
        design jsonb not null,
        pdf_key text null,
        issued_at timestamptz not null default now()
      );`);
    this.addSql(
      `create index issued_certificates_ws_issued_idx on issued_certificates (workspace_id, issued_at desc, id desc);`,
    );
    this.addSql(`create index issued_certificates_course_idx on issued_certificates (course_id);`);
    this.addSql(
      `create index issued_certificates_identity_idx on issued_certificates (workspace_id, identity_id);`,
    );
  }

  override async down(): Promise<void> {
    this.addSql('drop table if exists issued_certificates;');
  }
}
