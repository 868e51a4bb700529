import { Migration } from '@mikro-orm/migrations';

/**
 * A course's completion rule (docs/authoring.md "Completion rules"): `free` (any screen in any order, the
 * default and the behaviour of every existing course) or `sequential` (screens in order, a screen's graded
 * blocks answered before the next; the Player API refuses a batch that jumps ahead).
 */
export class Migration20261127006000_course_completion extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `alter table courses add column completion text not null default 'free' check (completion in ('free','sequential'));`,
    );
  }

  override async down(): Promise<void> {
    this.addSql('alter table courses drop column if exists completion;');
  }
}
