import { boundQuery, type EntityManager } from '@lectern/db';
import type { PollResultsDto } from '@lectern/contracts';
import { AppError, notFound } from '@lectern/errors';
import { RATE_SET, type RunRef } from './ingest.js';

interface Row {
  course_id: string;
  voted: boolean;
  rate_window_count: number;
  retry_after: number;
  status: string | null;
  screens: unknown;
}

/**
 * GET /player/v1/runs/:id/polls/:blockId: the votes of a poll over every run of the run's course, for the learner
 * who voted in it, when the author shows results (`showResults: true`, docs/blocks.md). The call counts in the
 * run's rate window like any Player API call. 404 when the run, its published course or the poll is not there;
 * 403 `forbidden` with `reason` `results_hidden` (the poll does not show results) or `not_voted` (this run has
 * not voted yet: results never sway a vote).
 */
export async function pollResults(
  ports: { em: EntityManager; perRunPerMinute: number },
  ref: RunRef,
  blockId: string,
): Promise<PollResultsDto> {
  const [row] = await boundQuery<Row>(
    ports.em,
    `update completions c set ${RATE_SET} where c.id = ? and c.workspace_id = ?
     returning c.course_id, jsonb_typeof(c.answers -> ?) = 'string' as voted, c.rate_window_count,
       greatest(1, ceil(extract(epoch from (c.rate_window_start + interval '1 minute' - clock_timestamp()))))::int as retry_after,
       (select co.status from courses co where co.id = c.course_id) as status,
       (select co.screens from courses co where co.id = c.course_id) as screens`,
    [ref.completionId, ref.workspaceId, blockId],
  );
  if (!row) throw notFound('Run');
  if (ports.perRunPerMinute > 0 && row.rate_window_count > ports.perRunPerMinute) {
    throw new AppError(
      'rate_limited',
      `Too many calls for this run: at most ${ports.perRunPerMinute} a minute`,
      {
        retryAfter: row.retry_after,
      },
    );
  }
  if (row.status !== 'published') throw notFound('Course');
  type Poll = { id?: unknown; type?: unknown; showResults?: unknown; options?: { id?: unknown }[] };
  const blocks = (Array.isArray(row.screens) ? (row.screens as { blocks?: unknown }[]) : []).flatMap((s) =>
    Array.isArray(s?.blocks) ? (s.blocks as Poll[]) : [],
  );
  const poll = blocks.find((b) => b?.id === blockId && b.type === 'poll');
  if (!poll) throw notFound('Poll');
  if (poll.showResults !== true)
    throw new AppError('forbidden', 'This poll does not show its results', {
      details: { reason: 'results_hidden' },
    });
  if (!row.voted)
    throw new AppError('forbidden', 'Results are shown after voting', { details: { reason: 'not_voted' } });
  const ids = (Array.isArray(poll.options) ? poll.options : [])
    .map((o) => o?.id)
    .filter((id): id is string => typeof id === 'string');
  const counts = await boundQuery<{ option: string; votes: number }>(
    ports.em,
    `select c.answers ->> ? as option, count(*)::int as votes from completions c
      where c.course_id = ? and c.workspace_id = ? and jsonb_typeof(c.answers -> ?) = 'string'
      group by 1`,
    [blockId, row.course_id, ref.workspaceId, blockId],
  );
  const byId = new Map(counts.map((c) => [c.option, c.votes]));
  const options = ids.map((id) => ({ id, votes: byId.get(id) ?? 0 }));
  return { blockId, total: options.reduce((n, o) => n + o.votes, 0), options };
}
