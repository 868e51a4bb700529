import type { EntityManager, KeyScope, PlanName, Workspace } from '@lectern/db';
import { newId } from '@lectern/db/ids';
import { generateKey } from '@lectern/auth';
import { AppError, notFound } from '@lectern/errors';
import { isPlanName, PLAN_NAMES } from '@lectern/plans';

/**
 * Workspace and key administration, shared by the CLI, `lectern start` and the test builders.
 *
 * Written against a two-method SQL port rather than the ORM: the CLI's admin verbs run it over one plain `pg`
 * connection (apps/cli/src/shared.ts withSql) and never load MikroORM, which was most of a verb's start-up time.
 * Callers that hold an EntityManager pass it as it is.
 */
export interface AdminSql {
  /** Runs one statement with `?` placeholders; the rows it returns. */
  query<T extends object>(sql: string, params: unknown[]): Promise<T[]>;
}

type Db = AdminSql | EntityManager;

function sqlOf(db: Db): AdminSql {
  if ('query' in db) return db;
  return { query: (sql, params) => db.getConnection().execute(sql, params as never[]) };
}

interface WorkspaceRow {
  id: string;
  name: string;
  plan: PlanName;
  billing_status: Workspace['billingStatus'];
  grace_until: Date | string | null;
  created_at: Date | string;
  updated_at: Date | string;
}

const WORKSPACE_COLUMNS = 'id, name, plan, billing_status, grace_until, created_at, updated_at';
const asDate = (v: Date | string) => (v instanceof Date ? v : new Date(v));

function workspaceOf(row: WorkspaceRow): Workspace {
  return {
    id: row.id,
    name: row.name,
    plan: row.plan,
    billingStatus: row.billing_status,
    graceUntil: row.grace_until === null ? null : asDate(row.grace_until),
    createdAt: asDate(row.created_at),
    updatedAt: asDate(row.updated_at),
  };
}

function checkPlan(plan: string): asserts plan is PlanName {
  if (!isPlanName(plan))
    throw new AppError('invalid_request', `Unknown plan "${plan}"; one of ${PLAN_NAMES.join(', ')}`);
}

async function updateWorkspace(db: Db, workspaceId: string, set: string, params: unknown[]) {
  const [row] = await sqlOf(db).query<WorkspaceRow>(
    `update workspaces set ${set}, updated_at = now() where id = ? returning ${WORKSPACE_COLUMNS}`,
    [...params, workspaceId],
  );
  if (!row) throw notFound('Workspace');
  return workspaceOf(row);
}

export async function createWorkspace(db: Db, name: string, plan: string): Promise<Workspace> {
  if (!name.trim()) throw new AppError('invalid_request', 'A workspace needs a name');
  checkPlan(plan);
  const [row] = await sqlOf(db).query<WorkspaceRow>(
    `insert into workspaces (id, name, plan, billing_status, grace_until, created_at, updated_at)
     values (?, ?, ?, 'ok', null, now(), now()) returning ${WORKSPACE_COLUMNS}`,
    [newId('ws'), name.trim(), plan],
  );
  return workspaceOf(row);
}

export async function setPlan(db: Db, workspaceId: string, plan: string): Promise<Workspace> {
  checkPlan(plan);
  return updateWorkspace(db, workspaceId, 'plan = ?', [plan]);
}

export async function setBilling(
  db: Db,
  workspaceId: string,
  state: { pastDue: true; graceUntil: Date } | { pastDue: false },
): Promise<Workspace> {
  return state.pastDue
    ? updateWorkspace(db, workspaceId, `billing_status = 'past_due', grace_until = ?`, [state.graceUntil])
    : updateWorkspace(db, workspaceId, `billing_status = 'ok', grace_until = null`, []);
}

export async function createKey(db: Db, workspaceId: string, scope: KeyScope) {
  if (scope !== 'read' && scope !== 'write')
    throw new AppError('invalid_request', 'scope must be read or write');
  const { key, lookup, hash } = generateKey();
  const id = newId('key');
  // One statement: the key exists only when its workspace does.
  const rows = await sqlOf(db).query<{ id: string }>(
    `insert into api_keys (id, workspace_id, lookup, hash, scope, created_at, revoked_at)
     select ?, w.id, ?, ?, ?, now(), null from workspaces w where w.id = ? returning id`,
    [id, lookup, hash, scope, workspaceId],
  );
  if (!rows.length) throw notFound('Workspace');
  return { id, key, scope };
}

export async function revokeKey(db: Db, keyId: string) {
  const [row] = await sqlOf(db).query<{ id: string; revoked_at: Date | string }>(
    `update api_keys set revoked_at = coalesce(revoked_at, now()) where id = ? returning id, revoked_at`,
    [keyId],
  );
  if (!row) throw notFound('API key');
  return { id: row.id, revokedAt: asDate(row.revoked_at) };
}
