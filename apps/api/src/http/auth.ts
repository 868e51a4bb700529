import type { Context, Next } from 'koa';
import { timingSafeEqual } from 'node:crypto';
import { AppError } from '@lectern/errors';
import { boundQuery, type MikroORM } from '@lectern/db';
import type { KeyScope, PlanName, BillingStatus } from '@lectern/db';
import { checkAccess, usageMonth } from '@lectern/plans';
import { hashKey, parseKey } from '@lectern/auth';

export interface AuthState {
  keyId: string;
  scope: KeyScope;
  workspace: {
    id: string;
    name: string;
    plan: PlanName;
    billingStatus: BillingStatus;
    graceUntil: Date | null;
  };
}

interface KeyRow {
  key_id: string;
  hash: string;
  scope: KeyScope;
  revoked_at: Date | null;
  workspace_id: string;
  name: string;
  plan: PlanName;
  billing_status: BillingStatus;
  grace_until: Date | null;
  views: string | number;
  /** Seconds until the key may call again; 0 when the request is allowed (or the limiter is off). */
  retry: number;
}

const READ_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);
const unauthorized = () =>
  new AppError('unauthorized', 'Missing or invalid API key; send Authorization: Bearer <key>');

function authorizationCount(raw: readonly string[]): number {
  let n = 0;
  for (let i = 0; i < raw.length; i += 2) if (raw[i].toLowerCase() === 'authorization') n++;
  return n;
}

/**
 * Bearer API key → workspace. Then, in this order: the shared rate limit (per key, every
 * replica counts against the same window), the 402 access rules, and the read-only scope.
 * `scopeByMethod: false` (the tool server's /mcp, where every message is a POST) leaves the scope to the
 * operations the request runs, each of which passes this check again as its own REST call.
 */
export function authMiddleware(deps: { orm: MikroORM; rateLimitPerMinute: number; scopeByMethod?: boolean }) {
  const dummy = hashKey('lk_timing_padding_value_that_never_matches');
  return async (ctx: Context, next: Next) => {
    // Node keeps only the first of repeated Authorization headers; two credentials are ambiguous, so refuse.
    if (authorizationCount(ctx.req.rawHeaders) > 1) throw unauthorized();
    const header = ctx.get('authorization');
    // RFC 9110: the scheme name is case-insensitive. Everything else stays exact: one space, one token.
    const match = /^bearer (\S+)$/i.exec(header);
    const parsed = match ? parseKey(match[1]) : null;
    if (!parsed) throw unauthorized();
    const em = deps.orm.em.fork();
    const presentedHash = hashKey(parsed.key);
    // One round trip: the key, its workspace, this month's views and — only for a live key whose
    // hash matches — the rate-limit hit. Requests with a wrong or revoked key are never counted.
    // The constant-time comparison below stays the authority on the key.
    const rows = await boundQuery<KeyRow>(
      em,
      `select k.id as key_id, k.hash, k.scope, k.revoked_at, w.id as workspace_id, w.name, w.plan,
              w.billing_status, w.grace_until,
              coalesce((select u.count from usage_counters u
                         where u.workspace_id = w.id and u.month = ? and u.metric = 'views'), 0) as views,
              case when ? > 0 and k.revoked_at is null and k.hash = ?
                   then lectern_rate_hit(k.id, ?, 60000) else 0 end as retry
         from api_keys k join workspaces w on w.id = k.workspace_id
        where k.lookup = ?`,
      [usageMonth(), deps.rateLimitPerMinute, presentedHash, deps.rateLimitPerMinute, parsed.lookup],
    );
    const row = rows[0];
    const presented = Buffer.from(presentedHash, 'hex');
    const stored = Buffer.from(row?.hash ?? dummy, 'hex');
    // Compare even when no row matched, so timing does not reveal which lookups exist.
    const same = stored.length === presented.length && timingSafeEqual(stored, presented);
    if (!row || !same || row.revoked_at) throw unauthorized();
    if (row.retry > 0) {
      throw new AppError(
        'rate_limited',
        `Rate limit of ${deps.rateLimitPerMinute} requests per minute exceeded for this key`,
        { retryAfter: row.retry },
      );
    }
    const workspace = {
      id: row.workspace_id,
      name: row.name,
      plan: row.plan,
      billingStatus: row.billing_status,
      graceUntil: row.grace_until ? new Date(row.grace_until) : null,
    };
    // SPEC: a blocked workspace gets 402 on every endpoint, so this comes before the scope check.
    checkAccess({ workspace, viewsThisMonth: Number(row.views) });
    if (deps.scopeByMethod !== false && row.scope !== 'write' && !READ_METHODS.has(ctx.method)) {
      throw new AppError('insufficient_scope', 'This API key is read-only; use a key with write access');
    }
    ctx.state.auth = { keyId: row.key_id, scope: row.scope, workspace } satisfies AuthState;
    await next();
  };
}
