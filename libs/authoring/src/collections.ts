import { LockMode } from '@mikro-orm/core';
import {
  CollectionSchema,
  CourseSchema,
  newId,
  boundQuery,
  type Collection,
  type Course,
  type EntityManager,
} from '@lectern/db';
import { notFound } from '@lectern/errors';
import { type CollectionDto, type CreateCollection, type UpdateCollection } from '@lectern/contracts';
import { collectionDto, courseDto } from './dto.js';
import { assertRefsInWorkspace } from './refs.js';

type Member = CollectionDto['courses'][number];

/**
 * Courses of each collection, in display order (`position`, then the time added), as Course objects without
 * `screens` (docs/authoring.md: a collection lists courses, it does not carry their content).
 */
async function membersOf(em: EntityManager, collectionIds: string[]): Promise<Map<string, Member[]>> {
  const out = new Map<string, Member[]>(collectionIds.map((id) => [id, []]));
  if (collectionIds.length === 0) return out;
  const rows = await boundQuery<{ collection_id: string; course_id: string }>(
    em,
    `select cc.collection_id, cc.course_id
       from collection_courses cc
      where cc.collection_id = any (?::text[])
      order by cc.collection_id, cc.position, cc.added_at, cc.course_id`,
    [collectionIds],
  );
  if (rows.length === 0) return out;
  const courses = await em.find(
    CourseSchema,
    { id: { $in: [...new Set(rows.map((r) => r.course_id))] } },
    { exclude: ['screens'] },
  );
  const byId = new Map(
    courses.map((c) => {
      // Loaded without its screens column, which the summary leaves out anyway.
      const { screens: _content, ...summary } = courseDto(c as Course);
      return [c.id, summary];
    }),
  );
  for (const r of rows) {
    const course = byId.get(r.course_id);
    if (course) out.get(r.collection_id)?.push(course);
  }
  return out;
}

async function render(em: EntityManager, collection: Collection): Promise<CollectionDto> {
  const members = await membersOf(em, [collection.id]);
  return collectionDto(collection, members.get(collection.id) ?? []);
}

/** Every collection of the workspace, newest first, each with its courses in display order. */
export async function listCollections(em: EntityManager, workspaceId: string): Promise<CollectionDto[]> {
  const rows = await em.find(
    CollectionSchema,
    { workspaceId },
    { orderBy: { createdAt: 'desc', id: 'desc' } },
  );
  const members = await membersOf(
    em,
    rows.map((r) => r.id),
  );
  return rows.map((r) => collectionDto(r, members.get(r.id) ?? []));
}

export async function getCollection(
  em: EntityManager,
  workspaceId: string,
  id: string,
): Promise<CollectionDto> {
  const row = await em.findOne(CollectionSchema, { id, workspaceId });
  if (!row) throw notFound('Collection');
  return render(em, row);
}

export async function createCollection(
  em: EntityManager,
  workspaceId: string,
  input: CreateCollection,
): Promise<CollectionDto> {
  const now = new Date();
  const row = em.create(CollectionSchema, {
    id: newId('col'),
    workspaceId,
    name: input.name,
    description: input.description ?? null,
    createdAt: now,
    updatedAt: now,
  });
  await em.flush();
  return collectionDto(row, []);
}

export async function updateCollection(
  em: EntityManager,
  workspaceId: string,
  id: string,
  patch: UpdateCollection,
): Promise<CollectionDto> {
  const row = await em.findOne(CollectionSchema, { id, workspaceId });
  if (!row) throw notFound('Collection');
  if (patch.name !== undefined) row.name = patch.name;
  if (patch.description !== undefined) row.description = patch.description;
  row.updatedAt = new Date();
  await em.flush();
  return render(em, row);
}

/** The courses themselves stay; only the memberships go (cascade). */
export async function deleteCollection(em: EntityManager, workspaceId: string, id: string): Promise<void> {
  const n = await em.nativeDelete(CollectionSchema, { id, workspaceId });
  if (!n) throw notFound('Collection');
}

/**
 * The collection row locked for the rest of the transaction: membership
 * changes of one collection run one at a time, so positions never collide.
 */
async function lockCollection(tx: EntityManager, workspaceId: string, id: string): Promise<Collection> {
  const row = await tx.findOne(
    CollectionSchema,
    { id, workspaceId },
    { lockMode: LockMode.PESSIMISTIC_WRITE },
  );
  if (!row) throw notFound('Collection');
  return row;
}

const notMember = () => notFound('Course in this collection');

/**
 * Appends a course. A course already in the collection keeps its place and the
 * call succeeds (`added: false`, 200): adding is idempotent. A course of
 * another workspace (or none) is a 400 with the path `["courseId"]`.
 */
export async function addCollectionCourse(
  em: EntityManager,
  workspaceId: string,
  id: string,
  courseId: string,
): Promise<{ collection: CollectionDto; added: boolean }> {
  return em.transactional(async (tx) => {
    const row = await lockCollection(tx, workspaceId, id);
    await assertRefsInWorkspace(tx, workspaceId, { courseId });
    const inserted = await boundQuery(
      tx,
      `insert into collection_courses (collection_id, course_id, position, added_at)
       select ?, ?, coalesce(max(position), 0) + 1, now() from collection_courses where collection_id = ?
       on conflict (collection_id, course_id) do nothing
       returning course_id`,
      [id, courseId, id],
    );
    const added = inserted.length > 0;
    if (added) {
      row.updatedAt = new Date();
      await tx.flush();
    }
    return { collection: await render(tx, row), added };
  });
}

/**
 * Moves a course one step: -1 earlier, 1 later. Moving the first up or the
 * last down changes nothing (and still answers the collection).
 */
export async function moveCollectionCourse(
  em: EntityManager,
  workspaceId: string,
  id: string,
  courseId: string,
  direction: -1 | 1,
): Promise<CollectionDto> {
  return em.transactional(async (tx) => {
    const row = await lockCollection(tx, workspaceId, id);
    const members = await boundQuery<{ course_id: string; position: number }>(
      tx,
      'select course_id, position from collection_courses where collection_id = ? order by position, added_at, course_id',
      [id],
    );
    const i = members.findIndex((m) => m.course_id === courseId);
    if (i < 0) throw notMember();
    const j = i + direction;
    if (j >= 0 && j < members.length) {
      // Renumber 1..n in the new order: one statement, and any tie left by older data disappears.
      const order = members.map((m) => m.course_id);
      [order[i], order[j]] = [order[j], order[i]];
      const cases = order.map(() => 'when ? then ?::int').join(' ');
      await boundQuery(
        tx,
        `update collection_courses set position = case course_id ${cases} end where collection_id = ?`,
        [...order.flatMap((c, k) => [c, k + 1]), id],
      );
      row.updatedAt = new Date();
      await tx.flush();
    }
    return render(tx, row);
  });
}

/** Takes a course out of the collection; the course itself is not deleted. */
export async function removeCollectionCourse(
  em: EntityManager,
  workspaceId: string,
  id: string,
  courseId: string,
): Promise<void> {
  await em.transactional(async (tx) => {
    const row = await lockCollection(tx, workspaceId, id);
    const removed = await boundQuery(
      tx,
      'delete from collection_courses where collection_id = ? and course_id = ? returning course_id',
      [id, courseId],
    );
    if (removed.length === 0) throw notMember();
    row.updatedAt = new Date();
    await tx.flush();
  });
}
