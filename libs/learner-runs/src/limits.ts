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

/** Anonymous opens per minute (0 turns one off): per client address, and per anonymousId of one course. */
export interface AnonymousLimits {
  perAddress: number;
  perAnonymousId: number;
}

/**
 * The limits of anonymous opens, both windows in one statement (the same `player_rate` rows as the address
 * limit, so every replica shares them). Signed and tracked opens never reach it: an office behind one NAT
 * address keeps opening signed runs at the address limit's rate, and a stranger flooding anonymous opens from
 * an address (or with one anonymousId) locks out only that address (or that id), never the workspace.
 */
export async function hitAnonymousLimits(
  em: EntityManager,
  client: { address: string; courseId: string; anonymousId: string },
  limits: AnonymousLimits,
): Promise<void> {
  const windows = [
    { key: `anon-addr:${client.address}`, perMinute: limits.perAddress, what: 'from this address' },
    {
      key: `anon-id:${client.courseId}:${client.anonymousId}`,
      perMinute: limits.perAnonymousId,
      what: 'with this anonymousId',
    },
  ].filter((w) => w.perMinute > 0);
  if (windows.length === 0) return;
  const rows = await boundQuery<{ key: string; n: number; retry: number }>(
    em,
    `insert into player_rate as r (key, window_start, n)
     select k, clock_timestamp(), 1 from unnest(?::text[]) as k
     on conflict (key) do update set
       n = case when r.window_start <= clock_timestamp() - interval '1 minute' then 1 else r.n + 1 end,
       window_start = case when r.window_start <= clock_timestamp() - interval '1 minute'
                           then clock_timestamp() else r.window_start end
     returning key, n, greatest(1, ceil(extract(epoch from (window_start + interval '1 minute' - clock_timestamp()))))::int as retry`,
    [windows.map((w) => w.key)],
  );
  for (const w of windows) {
    const row = rows.find((r) => r.key === w.key);
    if (row && row.n > w.perMinute)
      throw new AppError(
        'rate_limited',
        `Too many anonymous course opens ${w.what}: at most ${w.perMinute} a minute (signed learners are not limited by this)`,
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
  // The day's row (usage_daily, shown by GET /usage) is counted only when the month's was, in the same statement.
  const rows = await boundQuery<{ count: string }>(
    em,
    `with async_commit as (select set_config('synchronous_commit', 'off', true)),
     m as (insert into usage_counters as u (workspace_id, month, metric, count)
           select ?, ?, 'views', 1 from async_commit
           on conflict (workspace_id, month, metric) do update set count = u.count + 1
             where ?::bigint is null or u.count < ?::bigint
           returning count),
     d as (insert into usage_daily as d (workspace_id, day, metric, count)
           select ?, ?::date, 'views', 1 from m
           on conflict (workspace_id, day, metric) do update set count = d.count + 1)
     select count from m`,
    [ws.id, usageMonth(now), cap, cap, ws.id, usageDay(now)],
    { prepared: true },
  );
  if (rows.length === 0) checkAccess({ workspace: ws, viewsThisMonth: cap ?? 0 }, now);
}

/** The UTC day of a view: `2026-11-26`. */
export const usageDay = (at: Date): string => at.toISOString().slice(0, 10);

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
    await boundQuery(
      tx,
      `update usage_daily set count = count - 1
        where workspace_id = ? and day = ?::date and metric = 'views' and count > 0`,
      [ws.id, usageDay(now)],
    );
  });
}
