import { AppError } from '@lectern/errors';
import { boundQuery, type EntityManager } from '@lectern/db';
import { PLANS, PLAN_NAMES, type PlanName } from '@lectern/plans';

/**
 * The storage line of each plan, with the test-only override (docs/media.md "Quota"): `MEDIA_STORAGE_LIMITS`
 * replaces some plans' lines, e.g. `sandbox=1000000,build=5000000`, so tests cross the line without writing a
 * gigabyte. Refused in production (config).
 */
export type StorageLimits = Partial<Record<PlanName, number | null>>;

export function storageLimit(plan: PlanName, override: StorageLimits = {}): number | null {
  return Object.hasOwn(override, plan) ? (override[plan] ?? null) : PLANS[plan].storageBytes;
}

/** Parses `sandbox=1000,build=5000` (an empty value = unbounded). */
export function parseStorageLimits(text: string | undefined): StorageLimits {
  const out: StorageLimits = {};
  for (const part of (text ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)) {
    const [name, value] = part.split('=').map((s) => s.trim());
    if (!name || !(PLAN_NAMES as string[]).includes(name) || value === undefined || !/^\d*$/.test(value))
      throw new RangeError(`MEDIA_STORAGE_LIMITS: "${part}" is not <plan>=<bytes>`);
    out[name as PlanName] = value === '' ? null : Number(value);
  }
  return out;
}

export interface StorageUse {
  usedBytes: number;
  reservedBytes: number;
}

export async function storageUse(em: EntityManager, workspaceId: string): Promise<StorageUse> {
  const rows = await boundQuery<{ used_bytes: string; reserved_bytes: string }>(
    em,
    'select used_bytes, reserved_bytes from workspace_storage where workspace_id = ?',
    [workspaceId],
  );
  return { usedBytes: Number(rows[0]?.used_bytes ?? 0), reservedBytes: Number(rows[0]?.reserved_bytes ?? 0) };
}

const GB = 1024 ** 3;
const human = (n: number) => (n % GB === 0 ? `${n / GB} GB` : `${n.toLocaleString('en-US')} bytes`);

/**
 * Reserves `bytes` before an upload is read: one statement that adds them only while settled + reserved + bytes
 * stays within the line, so concurrent uploads at the edge cannot together pass it. Refused → 403
 * `plan_required` naming the lowest plan whose line would hold the workspace's files plus this one.
 */
export async function reserveStorage(
  em: EntityManager,
  ws: { id: string; plan: PlanName },
  bytes: number,
  override: StorageLimits = {},
): Promise<void> {
  const limit = storageLimit(ws.plan, override);
  await boundQuery(
    em,
    'insert into workspace_storage (workspace_id) values (?) on conflict (workspace_id) do nothing',
    [ws.id],
  );
  const rows = await boundQuery<{ workspace_id: string }>(
    em,
    `update workspace_storage set reserved_bytes = reserved_bytes + ?::bigint
      where workspace_id = ? and (?::bigint is null or used_bytes + reserved_bytes + ?::bigint <= ?::bigint)
      returning workspace_id`,
    [bytes, ws.id, limit, bytes, limit],
  );
  if (rows.length > 0) return;
  const use = await storageUse(em, ws.id);
  const need = use.usedBytes + use.reservedBytes + bytes;
  const fits =
    PLAN_NAMES.map((n) => PLANS[n]).find((p) => {
      const l = storageLimit(p.name, override);
      return p.rank > PLANS[ws.plan].rank && (l === null || l >= need);
    }) ?? PLANS.partner;
  throw new AppError(
    'plan_required',
    `The ${PLANS[ws.plan].label} plan stores ${human(limit ?? 0)} of media; this upload would take the workspace past it ` +
      `(${use.usedBytes.toLocaleString('en-US')} bytes stored). The ${fits.label} plan holds it`,
    { details: { requiredPlan: fits.name, limit } },
  );
}

/** Ends a reservation: `stored` bytes (0 when the upload was refused) move to the settled count. */
export async function settleStorage(
  em: EntityManager,
  workspaceId: string,
  reserved: number,
  stored: number,
) {
  await boundQuery(
    em,
    `update workspace_storage set reserved_bytes = greatest(reserved_bytes - ?::bigint, 0),
       used_bytes = used_bytes + ?::bigint where workspace_id = ?`,
    [reserved, stored, workspaceId],
  );
}

/** A deleted file frees its bytes. */
export async function freeStorage(em: EntityManager, workspaceId: string, bytes: number) {
  await boundQuery(
    em,
    'update workspace_storage set used_bytes = greatest(used_bytes - ?::bigint, 0) where workspace_id = ?',
    [bytes, workspaceId],
  );
}
