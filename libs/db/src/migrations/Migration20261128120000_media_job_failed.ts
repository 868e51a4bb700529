import { Migration } from '@mikro-orm/migrations';

/**
 * A media row never stays `processing` once its `media.process` job has ended failed (docs/media.md
 * "Processing"). A job ends failed in several places: the sweeper (past its deadline, or queued with no claim
 * left), a delivery that finds it out of time or attempts, or the worker's last retryable failure; and the
 * sweeper that ends it may run in any process, which knows nothing of media. So the rule lives beside the rows:
 * the statement that fails the job marks the media row `failed` with the job's error, in the same transaction.
 * The file stays usable as uploaded. A row the handler already settled (`ready`, or `failed` with its own reason)
 * is left as it is.
 */
export class Migration20261128120000_media_job_failed extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      create function media_job_failed() returns trigger language plpgsql as $$
      begin
        update media
           set status = 'failed',
               error = left('Processing did not finish: '
                            || coalesce(new.error ->> 'message', 'the job failed'), 1000),
               updated_at = now()
         where id = new.input ->> 'mediaId' and workspace_id = new.workspace_id and status = 'processing';
        return null;
      end $$;`);
    this.addSql(`
      create trigger media_job_failed after update of status on jobs
        for each row
        when (new.kind = 'media.process' and new.status = 'failed' and old.status is distinct from 'failed')
        execute function media_job_failed();`);
  }

  override async down(): Promise<void> {
    this.addSql('drop trigger if exists media_job_failed on jobs;');
    this.addSql('drop function if exists media_job_failed();');
  }
}
