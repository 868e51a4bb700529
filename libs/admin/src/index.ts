import type { EntityManager } from '@lectern/db';
import { ApiKeySchema, WorkspaceSchema, newId, type KeyScope, type PlanName } from '@lectern/db';
import { generateKey } from '@lectern/auth';
import { AppError, notFound } from '@lectern/errors';
import { isPlanName, PLAN_NAMES } from '@lectern/plans';

/** Workspace and key administration, shared by the CLI and the test builders. */
export async function createWorkspace(em: EntityManager, name: string, plan: string) {
  if (!name.trim()) throw new AppError('invalid_request', 'A workspace needs a name');
  if (!isPlanName(plan))
    throw new AppError('invalid_request', `Unknown plan "${plan}"; one of ${PLAN_NAMES.join(', ')}`);
  const now = new Date();
  const ws = em.create(WorkspaceSchema, {
    id: newId('ws'),
    name: name.trim(),
    plan,
    billingStatus: 'ok',
    graceUntil: null,
    createdAt: now,
    updatedAt: now,
  });
  await em.flush();
  return ws;
}

export async function setPlan(em: EntityManager, workspaceId: string, plan: string) {
  if (!isPlanName(plan))
    throw new AppError('invalid_request', `Unknown plan "${plan}"; one of ${PLAN_NAMES.join(', ')}`);
  const ws = await em.findOne(WorkspaceSchema, { id: workspaceId });
  if (!ws) throw notFound('Workspace');
  ws.plan = plan as PlanName;
  ws.updatedAt = new Date();
  await em.flush();
  return ws;
}

export async function setBilling(
  em: EntityManager,
  workspaceId: string,
  state: { pastDue: true; graceUntil: Date } | { pastDue: false },
) {
  const ws = await em.findOne(WorkspaceSchema, { id: workspaceId });
  if (!ws) throw notFound('Workspace');
  ws.billingStatus = state.pastDue ? 'past_due' : 'ok';
  ws.graceUntil = state.pastDue ? state.graceUntil : null;
  ws.updatedAt = new Date();
  await em.flush();
  return ws;
}

export async function createKey(em: EntityManager, workspaceId: string, scope: KeyScope) {
  if (scope !== 'read' && scope !== 'write')
    throw new AppError('invalid_request', 'scope must be read or write');
  const ws = await em.findOne(WorkspaceSchema, { id: workspaceId });
  if (!ws) throw notFound('Workspace');
  const { key, lookup, hash } = generateKey();
  const row = em.create(ApiKeySchema, {
    id: newId('key'),
    workspaceId,
    lookup,
    hash,
    scope,
    createdAt: new Date(),
    revokedAt: null,
  });
  await em.flush();
  return { id: row.id, key, scope };
}

export async function revokeKey(em: EntityManager, keyId: string) {
  const row = await em.findOne(ApiKeySchema, { id: keyId });
  if (!row) throw notFound('API key');
  row.revokedAt ??= new Date();
  await em.flush();
  return row;
}
