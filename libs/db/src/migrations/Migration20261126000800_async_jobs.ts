import { Migration } from '@mikro-orm/migrations';

/**
 * Asynchronous jobs (docs/jobs.md "Asynchronous jobs"): the API answers with the queued job at once and a
 * sweeper ends what no worker finished in time.
 * - `started_at`: the first claim (attempts counts every claim, so it alone cannot say when work began);
 * - `deadline_at`: `created_at` + the kind's deadline, written by the API. Past it the sweeper fails the job as
 *   `timeout`. Null for synchronous jobs, whose caller holds the deadline and which the sweeper leaves alone;
 * - `max_attempts`: the kind's limit on claims, kept on the row so a claim (or a sweeper in a process that does
 *   not know the kind) can refuse one more without the kind's spec.
 * The partial index serves the sweeper's scan of open jobs by deadline; synchronous jobs stay out of it.
 */
export class Migration20261126000800_async_jobs extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `alter table jobs add column started_at timestamptz null,
                        add column deadline_at timestamptz null,
                        add column max_attempts integer null;`,
    );
    this.addSql(`create index jobs_deadline_idx on jobs (deadline_at) where deadline_at is not null;`);
  }

  override async down(): Promise<void> {
    this.addSql('drop index if exists jobs_deadline_idx;');
    this.addSql(
      'alter table jobs drop column started_at, drop column deadline_at, drop column max_attempts;',
    );
  }
}
