import { boundQuery, type EntityManager } from '@lectern/db';
import { AppError } from '@lectern/errors';
import { PLANS, checkAccess, usageMonth, type PlanName } from '@lectern/plans';

/**
 * The player's own limits (not the API keys' 120/min budget), both fixed one-minute windows:
 * - per client address, on run opens and embed pages: a whole office behind one NAT address opening a
 *   course at a kick-off must pass, so the default is 3,000 a minute (PLAYER_OPENS_PER_MINUTE_PER_ADDRESS);
 * - per run, on event batches and retakes (PLAYER_REQUESTS_PER_MINUTE_PER_RUN): counted on the completion
 *   row inside the batch's own statement (ingest.ts), so it costs no round trip.
 * A fixed window may let up to twice the limit through around a minute boundary: these limits stop floods,
 * they are not billing. 0 turns a limit off.
 */
export async function hitAddressLimit(em: EntityManager, address: string, perMinute: number): Promise<void> {
  if (perMinute <= 0) return;
  const [row] = await boundQuery<{ n: number; retry: number }>(
    em,
    `insert into player_rate as r (key, window_start, n) values (?, clock_timestamp(), 1)
     on conflict (key) do update set
       n = case when r.window_start <= clock_timestamp() - interval '1 minute' then 1 else r.n + 1 end,
       window_start = case when r.window_start <= clock_timestamp() - interval '1 minute'
                           then clock_timestamp() else r.window_start end
     returning n, greatest(1, ceil(extract(epoch from (window_start + interval '1 minute' - clock_timestamp()))))::int as retry`,
    [`addr:${address}`],
  );
  // Forget addresses idle for a while; about one request in a thousand pays for the sweep.
  if (Math.random() < 0.001)
    await boundQuery(
      em,
      `delete from player_rate where window_start < clock_timestamp() - interval '5 minutes'`,
    );
  if (row.n > perMinute) {
    throw new AppError(
      'rate_limited',
      `Too many course opens from this address: at most ${perMinute} a minute`,
      { retryAfter: row.retry },
    );
  }
}

export interface WorkspaceAccess {
  id: string;
  plan: PlanName;
  billingStatus: 'ok' | 'past_due';
  graceUntil: Date | null;
}

/** 402 when the workspace may not serve learners now: an invoice past its grace period. */
export function assertBillingOk(ws: WorkspaceAccess, now = new Date()): void {
  checkAccess({ workspace: ws, viewsThisMonth: 0 }, now);
}

/** 402 when a view would be refused now (billing, or a spent Sandbox allowance); counts nothing. */
export async function assertMayServe(
  em: EntityManager,
  ws: WorkspaceAccess,
  now = new Date(),
): Promise<void> {
  assertBillingOk(ws, now);
  if (!PLANS[ws.plan].hardCapViews) return;
  const [row] = await boundQuery<{ count: string }>(
    em,
    `select count from usage_counters where workspace_id = ? and month = ? and metric = 'views'`,
    [ws.id, usageMonth(now)],
  );
  checkAccess({ workspace: ws, viewsThisMonth: Number(row?.count ?? 0) }, now);
}

/**
 * Counts one course view in the workspace's UTC month, atomically: on a hard-capped plan (Sandbox) the
 * increment happens only while the count is under the allowance, so the 500th view passes, the 501st is
 * refused with 402 and counts nothing, and concurrent opens cannot overshoot. Paid plans always count
 * (overage is billed, never refused).
 *
 * Its own short transaction with asynchronous commit, before the open's: every open of a workspace updates
 * this one row, and holding its lock through the open's commit (a WAL flush, ~10 ms on a plain disk)
 * serialised a workspace's opens at the disk's flush rate (measured: ~40 opens/s). A database crash may
 * forget the last fraction of a second of counts; the open itself commits synchronously. An open that fails
 * after counting gives its view back (`uncountView`).
 */
export async function countView(em: EntityManager, ws: WorkspaceAccess, now = new Date()): Promise<void> {
  const plan = PLANS[ws.plan];
  const cap = plan.hardCapViews ? plan.monthlyViews : null;
  // One statement, its own implicit transaction: set_config(…, true) lasts until that transaction's commit,
  // which is when synchronous_commit is read.
  const rows = await boundQuery<{ count: string }>(
    em,
    `with async_commit as (select set_config('synchronous_commit', 'off', true))
     insert into usage_counters as u (workspace_id, month, metric, count)
     select ?, ?, 'views', 1 from async_commit
     on conflict (workspace_id, month, metric) do update set count = u.count + 1
       where ?::bigint is null or u.count < ?::bigint
     returning count`,
    [ws.id, usageMonth(now), cap, cap],
    { prepared: true },
  );
  if (rows.length === 0) checkAccess({ workspace: ws, viewsThisMonth: cap ?? 0 }, now);
}

/** Gives back a view counted by an open that then failed. */
export async function uncountView(em: EntityManager, ws: WorkspaceAccess, now = new Date()): Promise<void> {
  await em.transactional(async (tx) => {
    await boundQuery(tx, 'set local synchronous_commit to off');
    await boundQuery(
      tx,
      `update usage_counters set count = count - 1
        where workspace_id = ? and month = ? and metric = 'views' and count > 0`,
      [ws.id, usageMonth(now)],
    );
  });
}
