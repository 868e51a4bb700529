import type { EntityManager } from '@lectern/db';
import { IdentitySchema, newId, boundQuery, type Identity } from '@lectern/db';
import { AppError, notFound } from '@lectern/errors';
import { recordEvent } from '@lectern/events';
import type { UpsertIdentity } from '@lectern/contracts';
import { LMS_SCOPE_PREFIX, eventIdentity } from './dto.js';

export { identityDto, eventIdentity } from './dto.js';

interface Row {
  id: string;
  workspace_id: string;
  external_id: string;
  scope: string;
  name: string | null;
  email: string | null;
  created_at: Date;
  updated_at: Date;
  inserted: boolean;
}

function fromRow(r: Row): Identity {
  return {
    id: r.id,
    workspaceId: r.workspace_id,
    externalId: r.external_id,
    scope: r.scope,
    name: r.name,
    email: r.email,
    createdAt: new Date(r.created_at),
    updatedAt: new Date(r.updated_at),
  };
}

const norm = (v: string | null | undefined): string | null | undefined => (v === '' ? null : v);

/** The scope of the learners a workspace vouches for: created through the API or by a signed embed. */
export const OWN_SCOPE = '';

/**
 * The scope of the learner ids an LMS asserts through one course's tracking token: that course's alone, so an
 * asserted `victim-42` is never the workspace's own `victim-42`, nor an asserted one of another course.
 */
export const lmsScope = (courseId: string): string => `${LMS_SCOPE_PREFIX}${courseId}`;

/**
 * Upserts many identities of one scope (default: the workspace's own learners) in one statement.
 * `INSERT … ON CONFLICT DO UPDATE … RETURNING (xmax = 0)` tells inserted from updated rows atomically: no
 * check-then-insert race when two requests upsert the same learner. A field left out keeps its stored value.
 * Emits identity.created for each row actually inserted, in the same transaction.
 */
export async function upsertIdentities(
  em: EntityManager,
  workspaceId: string,
  items: UpsertIdentity[],
  scope: string = OWN_SCOPE,
): Promise<{ identity: Identity; created: boolean }[]> {
  const seen = new Map<string, number>();
  items.forEach((it, i) => {
    const prev = seen.get(it.externalId);
    if (prev !== undefined) {
      throw new AppError('invalid_request', `externalId "${it.externalId}" appears more than once`, {
        issues: [
          {
            code: 'duplicate',
            path: ['identities', i, 'externalId'],
            message: `same externalId as identities[${prev}]`,
          },
        ],
      });
    }
    seen.set(it.externalId, i);
  });
  return em.transactional(async (tx) => {
    const now = new Date();
    const values: unknown[] = [];
    const tuples = items.map((it) => {
      const name = norm(it.name);
      const email = norm(it.email);
      values.push(
        newId('idn'),
        workspaceId,
        it.externalId,
        scope,
        name ?? null,
        email ?? null,
        name !== undefined,
        email !== undefined,
        now,
        now,
      );
      return '(?, ?, ?, ?, ?, ?, ?::boolean, ?::boolean, ?::timestamptz, ?::timestamptz)';
    });
    const rows = await boundQuery<Row>(
      tx,
      `with input(id, workspace_id, external_id, scope, name, email, has_name, has_email, created_at, updated_at) as (values ${tuples.join(', ')})
       insert into identities as t (id, workspace_id, external_id, scope, name, email, created_at, updated_at)
       select id, workspace_id, external_id, scope, name, email, created_at, updated_at from input
       on conflict (workspace_id, scope, external_id) do update set
         name = case when (select has_name from input i where i.external_id = excluded.external_id) then excluded.name else t.name end,
         email = case when (select has_email from input i where i.external_id = excluded.external_id) then excluded.email else t.email end,
         updated_at = excluded.updated_at
       returning t.*, (xmax = 0) as inserted`,
      values,
    );
    const byExt = new Map(rows.map((r) => [r.external_id, r]));
    const out = items.map((it) => {
      const r = byExt.get(it.externalId)!;
      return { identity: fromRow(r), created: r.inserted };
    });
    for (const o of out) {
      if (o.created)
        recordEvent(tx, workspaceId, 'identity.created', { identity: eventIdentity(o.identity) });
    }
    return out;
  });
}

export async function searchIdentities(
  em: EntityManager,
  workspaceId: string,
  opts: { search?: string; limit: number; offset: number },
): Promise<{ rows: Identity[]; total: number }> {
  const where: Record<string, unknown> = { workspaceId };
  const term = opts.search?.trim();
  if (term) {
    const like = `%${term.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
    where.$or = [{ name: { $ilike: like } }, { email: { $ilike: like } }, { externalId: { $ilike: like } }];
  }
  const [rows, total] = await em.findAndCount(IdentitySchema, where, {
    orderBy: { createdAt: 'desc', id: 'desc' },
    limit: opts.limit,
    offset: opts.offset,
  });
  return { rows, total };
}

export async function getIdentity(em: EntityManager, workspaceId: string, id: string): Promise<Identity> {
  const row = await em.findOne(IdentitySchema, { id, workspaceId });
  if (!row) throw notFound('Identity');
  return row;
}

export async function deleteIdentity(em: EntityManager, workspaceId: string, id: string): Promise<void> {
  const n = await em.nativeDelete(IdentitySchema, { id, workspaceId });
  if (!n) throw notFound('Identity');
}

export async function bulkDeleteIdentities(
  em: EntityManager,
  workspaceId: string,
  keys: { ids?: string[]; externalIds?: string[] },
): Promise<{ deleted: number; requested: number; identities: { id: string; externalId: string }[] }> {
  const ids = [...new Set(keys.ids ?? [])];
  const ext = [...new Set(keys.externalIds ?? [])];
  const requested = (keys.ids?.length ?? 0) + (keys.externalIds?.length ?? 0);
  const conds: string[] = [];
  const params: unknown[] = [workspaceId];
  if (ids.length) {
    conds.push('id = any (?::text[])');
    params.push(ids);
  }
  if (ext.length) {
    conds.push('external_id = any (?::text[])');
    params.push(ext);
  }
  const rows = await boundQuery<{ id: string; external_id: string }>(
    em,
    `delete from identities where workspace_id = ? and (${conds.join(' or ')}) returning id, external_id`,
    params,
  );
  return {
    deleted: rows.length,
    requested,
    identities: rows.map((r) => ({ id: r.id, externalId: r.external_id })),
  };
}
