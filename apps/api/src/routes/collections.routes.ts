import { z } from 'zod';
import type { ApiRouter } from '../http/router.js';
import type { RouteDeps } from '../deps.js';
import {
  AddCollectionCourse,
  Collection,
  CreateCollection,
  MoveCollectionCourse,
  UpdateCollection,
} from '@lectern/contracts';
import {
  addCollectionCourse,
  createCollection,
  deleteCollection,
  getCollection,
  listCollections,
  moveCollectionCourse,
  removeCollectionCourse,
  updateCollection,
} from '@lectern/authoring';
import { errorResponses } from './shared.js';

export function collectionRoutes(api: ApiRouter, deps: Pick<RouteDeps, 'orm'>) {
  const tags = ['Collections'] as const;
  const em = () => deps.orm.em.fork();
  const one = z.object({ data: Collection });

  api.route(
    {
      method: 'get',
      path: '/collections',
      operationId: 'listCollections',
      summary: 'List collections (newest first, unpaged; each with its courses in display order)',
      description: 'Unpaged; each collection carries its courses in display order.',
      tags,
      responses: {
        200: {
          description: 'Every collection of the workspace',
          schema: z.object({ data: z.array(Collection) }),
        },
        ...errorResponses,
      },
    },
    async (ctx) => {
      ctx.body = { data: await listCollections(em(), ctx.state.auth.workspace.id) };
    },
  );

  api.route(
    {
      method: 'post',
      path: '/collections',
      operationId: 'createCollection',
      summary: 'Create a collection',
      description: 'A new collection starts empty; add courses one at a time.',
      tags,
      body: CreateCollection,
      responses: { 201: { description: 'The created (empty) collection', schema: one }, ...errorResponses },
    },
    async (ctx) => {
      const collection = await createCollection(em(), ctx.state.auth.workspace.id, ctx.state.body);
      ctx.status = 201;
      ctx.set('Location', `${api.prefix}/collections/${encodeURIComponent(collection.id)}`);
      ctx.body = { data: collection };
    },
  );

  api.route(
    {
      method: 'get',
      path: '/collections/:id',
      operationId: 'getCollection',
      summary: 'Get a collection with its courses in display order',
      description:
        '`courses` holds the Course objects in display order, without `screens` (the content is one GET /courses/:id away).',
      tags,
      responses: { 200: { description: 'The collection', schema: one }, ...errorResponses },
    },
    async (ctx) => {
      ctx.body = { data: await getCollection(em(), ctx.state.auth.workspace.id, ctx.params.id) };
    },
  );

  api.route(
    {
      method: 'patch',
      path: '/collections/:id',
      operationId: 'updateCollection',
      summary: 'Update name and/or description',
      description:
        'Any subset of name and description; the courses and their order are changed through the course operations.',
      tags,
      body: UpdateCollection,
      responses: { 200: { description: 'The collection', schema: one }, ...errorResponses },
    },
    async (ctx) => {
      ctx.body = {
        data: await updateCollection(em(), ctx.state.auth.workspace.id, ctx.params.id, ctx.state.body),
      };
    },
  );

  api.route(
    {
      method: 'delete',
      path: '/collections/:id',
      operationId: 'deleteCollection',
      summary: 'Delete a collection (its courses stay)',
      description: 'The courses in it are not touched.',
      tags,
      responses: { 204: { description: 'Deleted', schema: null }, ...errorResponses },
    },
    async (ctx) => {
      await deleteCollection(em(), ctx.state.auth.workspace.id, ctx.params.id);
      ctx.status = 204;
    },
  );

  api.route(
    {
      method: 'post',
      path: '/collections/:id/courses',
      operationId: 'addCourseToCollection',
      summary: 'Add a course at the end (201; 200 and no move when it is already in the collection)',
      description:
        'A courseId that is not a course of this workspace is a 400 invalid_request with the path ["courseId"].',
      tags,
      body: AddCollectionCourse,
      responses: {
        201: { description: 'Added at the end; the collection', schema: one },
        200: { description: 'Already in the collection (position unchanged); the collection', schema: one },
        ...errorResponses,
      },
    },
    async (ctx) => {
      const { collection, added } = await addCollectionCourse(
        em(),
        ctx.state.auth.workspace.id,
        ctx.params.id,
        ctx.state.body.courseId,
      );
      ctx.status = added ? 201 : 200;
      ctx.body = { data: collection };
    },
  );

  api.route(
    {
      method: 'patch',
      path: '/collections/:id/courses/:courseId',
      operationId: 'moveCourseInCollection',
      summary: 'Move a course one position (direction -1 earlier, 1 later)',
      description:
        'Moving the first course up or the last down changes nothing (200). Any direction other than -1 or 1 is a 400. 404 when the course is not in the collection.',
      tags,
      body: MoveCollectionCourse,
      responses: { 200: { description: 'The collection in its new order', schema: one }, ...errorResponses },
    },
    async (ctx) => {
      ctx.body = {
        data: await moveCollectionCourse(
          em(),
          ctx.state.auth.workspace.id,
          ctx.params.id,
          ctx.params.courseId,
          ctx.state.body.direction,
        ),
      };
    },
  );

  api.route(
    {
      method: 'delete',
      path: '/collections/:id/courses/:courseId',
      operationId: 'removeCourseFromCollection',
      summary: 'Take a course out of the collection (the course is not deleted)',
      description: '404 when the course is not in the collection.',
      tags,
      responses: { 204: { description: 'Removed', schema: null }, ...errorResponses },
    },
    async (ctx) => {
      await removeCollectionCourse(em(), ctx.state.auth.workspace.id, ctx.params.id, ctx.params.courseId);
      ctx.status = 204;
    },
  );
}
