import { boundQuery, type EntityManager } from '@lectern/db';
import { PLANS, usageMonth, type PlanName } from '@lectern/plans';
import type { UsageDto } from '@lectern/contracts';

/**
 * The workspace's views this UTC month, in total (what billing and the Sandbox cap read) and per day, every day
 * from the 1st to today (0 for a day without views), so a flood shows on the day it happens.
 */
export async function getUsage(
  em: EntityManager,
  ws: { id: string; plan: PlanName },
  now = new Date(),
): Promise<UsageDto> {
  const month = usageMonth(now);
  const total = await boundQuery<{ count: string }>(
    em,
    `select count from usage_counters where workspace_id = ? and month = ? and metric = 'views'`,
    [ws.id, month],
  );
  const days = await boundQuery<{ day: string; count: string }>(
    em,
    `select day::text as day, count from usage_daily
      where workspace_id = ? and metric = 'views' and day >= ?::date and day <= ?::date`,
    [ws.id, `${month}-01`, now.toISOString().slice(0, 10)],
  );
  const byDay = new Map(days.map((d) => [d.day, Number(d.count)]));
  const list: UsageDto['days'] = [];
  for (let d = 1; d <= now.getUTCDate(); d++) {
    const date = `${month}-${String(d).padStart(2, '0')}`;
    list.push({ date, views: byDay.get(date) ?? 0 });
  }
  const plan = PLANS[ws.plan];
  return {
    month,
    views: Number(total[0]?.count ?? 0),
    viewsAllowance: plan.monthlyViews,
    hardCap: plan.hardCapViews,
    days: list,
  };
}
