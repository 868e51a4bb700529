/**
 * Endpoint health: the sustained-failure switch-off (docs/webhooks.md, "When Lectern switches an endpoint off").
 *
 * Every failure is retried (SPEC Retries 2, a 410 included); an endpoint is switched off only after sustained
 * failure: a delivery to it fails for good (its last allowed attempt failed) while no attempt to it has had a 2xx
 * for SWITCH_OFF_AFTER_DAYS, i.e. its current run of failed attempts (`failing_since`) began at least that long
 * ago. The endpoint then reads `isActive: false` with `disabledReason` and `disabledAt`, and its pending deliveries
 * are cancelled, as when the customer switches it off; re-activating it clears all three and starts afresh.
 *
 * `failing_since` changes only when an endpoint's health changes (its first failure after a 2xx, or its first 2xx
 * after failures), so on a healthy or a steadily failing endpoint the attempt records cost nothing extra.
 */
import type { MikroORM } from '@mikro-orm/postgresql';
import type { EntityManager } from '@lectern/db';
import { boundQuery } from '@lectern/db';
import { cancelPending } from './deliveries.js';
import type { AttemptRecord, RecordedAttempts } from './attempt-records.js';

export const SWITCH_OFF_AFTER_DAYS = 5;
const DAY_MS = 86_400_000;

/**
 * The start of an endpoint's run of failed attempts after a batch in which its latest 2xx started at `okAt`
 * (null: none) and its earliest failure after that started at `failAt` (null: none). Attempt start times, not
 * the order they are recorded in, decide: a 2xx clears a run that began before it, never one that began after.
 */
export function nextFailingSince(current: Date | null, okAt: Date | null, failAt: Date | null): Date | null {
  if (okAt !== null && (current === null || current <= okAt)) return failAt;
  return current ?? failAt;
}

/** Per endpoint of the written records: the latest 2xx start, and the earliest failure start after it. */
function batchHealth(
  records: AttemptRecord[],
  written: boolean[],
): Map<string, { okAt: Date | null; failAt: Date | null }> {
  const okAt = new Map<string, Date>();
  records.forEach((r, i) => {
    if (!written[i] || r.outcome.status !== 'delivered') return;
    const seen = okAt.get(r.cmd.endpointId);
    if (!seen || seen < r.startedAt) okAt.set(r.cmd.endpointId, r.startedAt);
  });
  const out = new Map<string, { okAt: Date | null; failAt: Date | null }>();
  records.forEach((r, i) => {
    if (!written[i]) return;
    const id = r.cmd.endpointId;
    const ok = okAt.get(id) ?? null;
    const entry = out.get(id) ?? { okAt: ok, failAt: null };
    const failedAfterOk = r.outcome.status !== 'delivered' && (ok === null || r.startedAt > ok);
    if (failedAfterOk && (entry.failAt === null || r.startedAt < entry.failAt)) entry.failAt = r.startedAt;
    out.set(id, entry);
  });
  return out;
}

/**
 * Writes the health changes of a batch of recorded attempts, then switches off the endpoints whose run of
 * failures is long enough and whose delivery just failed for good. Returns the ids switched off.
 */
export async function trackEndpointHealth(
  orm: MikroORM,
  records: AttemptRecord[],
  recorded: RecordedAttempts,
  now: number = Date.now(),
): Promise<string[]> {
  const health = batchHealth(records, recorded.written);
  const changes: { id: string; okAt: Date | null; failAt: Date | null }[] = [];
  const failingSince = new Map<string, Date | null>();
  for (const [id, h] of health) {
    const current = recorded.failingSince.get(id) ?? null;
    const next = nextFailingSince(current, h.okAt, h.failAt);
    failingSince.set(id, next);
    if (next?.getTime() !== current?.getTime()) changes.push({ id, ...h });
  }
  if (changes.length) await writeFailingSince(orm.em.fork(), changes);

  const due = new Set<string>();
  records.forEach((r, i) => {
    const since = failingSince.get(r.cmd.endpointId);
    if (
      recorded.written[i] &&
      r.outcome.status === 'failed' &&
      since &&
      now - since.getTime() >= SWITCH_OFF_AFTER_DAYS * DAY_MS
    )
      due.add(r.cmd.endpointId);
  });
  return due.size ? switchOffFailing(orm.em.fork(), [...due]) : [];
}

/** Applies `nextFailingSince` to the current rows; endpoints are locked in id order, so concurrent workers never deadlock. */
async function writeFailingSince(
  em: EntityManager,
  changes: { id: string; okAt: Date | null; failAt: Date | null }[],
): Promise<void> {
  const params: unknown[] = [];
  const values = changes
    .map((c) => {
      params.push(c.id, c.okAt?.toISOString() ?? null, c.failAt?.toISOString() ?? null);
      return '(?::text, ?::timestamptz, ?::timestamptz)';
    })
    .join(', ');
  await boundQuery(
    em,
    `with v(id, ok_at, fail_at) as (values ${values}),
     locked as (select e.id from webhook_endpoints e join v on v.id = e.id order by e.id for update of e)
     update webhook_endpoints e set failing_since =
            case when v.ok_at is not null and (e.failing_since is null or e.failing_since <= v.ok_at) then v.fail_at
                 else coalesce(e.failing_since, v.fail_at) end
       from v
      where e.id = v.id and e.id in (select id from locked)`,
    params,
  );
}

/**
 * Switches off the given endpoints that are still active and have failed for SWITCH_OFF_AFTER_DAYS (checked again
 * under the row lock: a 2xx recorded meanwhile by another worker keeps the endpoint on), and cancels their pending
 * deliveries, in one transaction. Returns the ids switched off.
 */
export async function switchOffFailing(em: EntityManager, endpointIds: string[]): Promise<string[]> {
  return em.transactional(async (tx) => {
    const rows = await boundQuery<{ id: string }>(
      tx,
      `update webhook_endpoints set is_active = false, disabled_at = now(), updated_at = now(),
              disabled_reason = 'Every delivery failed for ' || ?::int || ' days: no 2xx since '
                || to_char(failing_since at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"')
                || '. Fix the receiver, then re-enable with isActive: true'
        where id = any (?::text[]) and is_active
          and failing_since <= now() - make_interval(days => ?::int)
        returning id`,
      [SWITCH_OFF_AFTER_DAYS, endpointIds, SWITCH_OFF_AFTER_DAYS],
    );
    for (const r of rows) await cancelPending(tx, r.id);
    return rows.map((r) => r.id);
  });
}
