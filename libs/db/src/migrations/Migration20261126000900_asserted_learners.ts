import { Migration } from '@mikro-orm/migrations';

/**
 * LMS-asserted learners stay apart from the workspace's own (SPEC.md Authentication 8; docs/scorm.md "Tracking").
 * - `identities.scope`: '' for the learners the workspace vouches for (created through the API or by a signed
 *   embed), `course:<courseId>` for a learner id an LMS asserted through that course's tracking token. The upsert
 *   key becomes (workspace, scope, externalId), so `victim-42` signed and `victim-42` asserted by a package are
 *   two learners, and a package can reach no learner outside its own course.
 *   Existing rows the LMS made (a run with source `scorm`, none with `embed`, all of one course, no certificate of
 *   another course) move to that course's scope, keeping their id, so their learners resume where they were.
 * - `courses.tracking_version`: the version of the course's tracking secret; every tracking token carries the
 *   version it was signed under (tokens from before this migration count as 1). Rotating it retires every
 *   package exported before. `tracking_rotated_at`: when it last was (null: never).
 * - `issued_certificates.source`: the run's source at issue (`embed` or `scorm`), so the PDF, `/verify` and the
 *   API say when the learner's identity was only asserted by an LMS. Every earlier certificate was `embed`
 *   unless its run says otherwise.
 */
export class Migration20261126000900_asserted_learners extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table identities add column scope text not null default '';`);
    this.addSql(`alter table identities drop constraint identities_workspace_id_external_id_key;`);
    this.addSql(
      `alter table identities add constraint identities_workspace_id_scope_external_id_key unique (workspace_id, scope, external_id);`,
    );
    this.addSql(`
      update identities i set scope = 'course:' || m.course_id
        from (select c.identity_id, min(c.course_id) as course_id
                from completions c
               where c.identity_id is not null
               group by c.identity_id
              having bool_and(c.source = 'scorm') and count(distinct c.course_id) = 1) m
       where m.identity_id = i.id
         and not exists (select 1 from issued_certificates ic
                          where ic.identity_id = i.id and ic.course_id <> m.course_id);`);
    this.addSql(
      `alter table courses add column tracking_version integer not null default 1,
                           add column tracking_rotated_at timestamptz null;`,
    );
    this.addSql(
      `alter table issued_certificates add column source text not null default 'embed' check (source in ('embed','scorm'));`,
    );
    this.addSql(`
      update issued_certificates ic set source = c.source
        from completions c where c.id = ic.completion_id and c.source <> 'embed';`);
  }

  override async down(): Promise<void> {
    this.addSql('alter table issued_certificates drop column source;');
    this.addSql('alter table courses drop column tracking_version, drop column tracking_rotated_at;');
    this.addSql(`alter table identities drop constraint identities_workspace_id_scope_external_id_key;`);
    this.addSql(`alter table identities drop column scope;`);
    this.addSql(
      `alter table identities add constraint identities_workspace_id_external_id_key unique (workspace_id, external_id);`,
    );
  }
}
