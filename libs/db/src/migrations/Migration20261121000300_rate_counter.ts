import { Migration } from '@mikro-orm/migrations';

/**
 * The rolling-window rate limit keeps its exact per-request log, but a per-key counter now
 * answers "how many in the window" in O(1) instead of counting the log on every request, so
 * the check costs the same at 120 or at a million requests per minute. The counter row is
 * also the per-key lock (it replaces the advisory lock).
 */
export class Migration20261121000300_rate_counter extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create unlogged table rate_keys (key_id text primary key, n integer not null);`);
    this.addSql(`
      insert into rate_keys (key_id, n)
      select key_id, count(*) from rate_hits group by key_id;`);
    this.addSql(`
      create or replace function lectern_rate_hit(p_key text, p_limit integer, p_window_ms integer)
      returns integer language plpgsql as $$
      declare
        cnt integer;
        expired integer;
        oldest timestamptz;
        win interval := make_interval(secs => p_window_ms / 1000.0);
        now_ts timestamptz := clock_timestamp();
      begin
        select n into cnt from rate_keys where key_id = p_key for update;
        if not found then
          insert into rate_keys (key_id, n) values (p_key, 0) on conflict (key_id) do nothing;
          select n into cnt from rate_keys where key_id = p_key for update;
        end if;
        with gone as (delete from rate_hits where key_id = p_key and at <= now_ts - win returning 1)
        select count(*) into expired from gone;
        cnt := cnt - expired;
        if cnt >= p_limit then
          if expired > 0 then
            update rate_keys set n = cnt where key_id = p_key;
          end if;
          select min(at) into oldest from rate_hits where key_id = p_key;
          return greatest(1, ceil(extract(epoch from (oldest + win - now_ts)))::integer);
        end if;
        insert into rate_hits (key_id, at) values (p_key, now_ts);
        update rate_keys set n = cnt + 1 where key_id = p_key;
        return 0;
      end $$;`);
  }

  override async down(): Promise<void> {
    this.addSql('drop table if exists rate_keys;');
  }
}
