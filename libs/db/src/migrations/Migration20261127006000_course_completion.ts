import { Migration } from '@mikro-orm/migrations';

/**
 * A course's completion rule (docs/authoring.md "Completion rules"): `free` (any screen in any order, the
 * default and the behaviour of every existing course) or `sequential` (screens in order, a screen's graded
 * blocks answered before the next; the Player API refuses a batch that jumps ahead); and whether the review
 * after a finished run shows the correct answers (`review_show_correct_answers`, off by default: the answer
 * keys stay on the server unless the author opts in).
 */
export class Migration20261127006000_course_completion extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `alter table courses add column completion text not null default 'free' check (completion in ('free','sequential'));`,
    );
    this.addSql('alter table courses add column review_show_correct_answers boolean not null default false;');
  }

  override async down(): Promise<void> {
    this.addSql('alter table courses drop column if exists review_show_correct_answers;');
    this.addSql('alter table courses drop column if exists completion;');
  }
}
