import { Migration } from '@mikro-orm/migrations';

/**
 * Issued certificates meet learner runs: `issued_certificates.completion_id` references `completions(id)`.
 *
 * `on delete set null`, so the column becomes nullable. An issued certificate stays verifiable whatever happens
 * to the run it came from (docs/certificates.md, docs/player-api.md "Deleting things"):
 * - deleting a learner (an erasure request) cascades to their runs; their certificates stay, detached from the
 *   deleted run, still found by serial on the verification page and the records API. A restrict would make a
 *   certificate block an erasure; a cascade would make a paper certificate fail verification;
 * - deleting a course is already refused while it has certificates (`course_id … on delete restrict`), so a
 *   course's runs never disappear from under its certificates that way.
 * The unique index on `completion_id` stays: one certificate per run (NULLs never collide), and the index also
 * serves the foreign key when a run is deleted. Rows written before runs existed whose completion id matches no
 * run (test data only) are detached the same way, so the constraint can be added.
 */
export class Migration20261123000700_certificate_completion_fk extends Migration {
  override async up(): Promise<void> {
    this.addSql('alter table issued_certificates alter column completion_id drop not null;');
    this.addSql(
      `update issued_certificates ic set completion_id = null
        where ic.completion_id is not null
          and not exists (select 1 from completions c where c.id = ic.completion_id);`,
    );
    this.addSql(
      `alter table issued_certificates add constraint issued_certificates_completion_id_fkey
         foreign key (completion_id) references completions(id) on delete set null;`,
    );
  }

  override async down(): Promise<void> {
    this.addSql(
      'alter table issued_certificates drop constraint if exists issued_certificates_completion_id_fkey;',
    );
    // Detached certificates have no run to point at; the old column cannot hold them, so they keep a marker.
    this.addSql(
      `update issued_certificates set completion_id = 'detached:' || id where completion_id is null;`,
    );
    this.addSql('alter table issued_certificates alter column completion_id set not null;');
  }
}
