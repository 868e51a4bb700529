import { EntitySchema } from '@mikro-orm/core';
import { createdAt, references, text, timestamptz, updatedAt } from './columns.js';

export interface Collection {
  id: string;
  workspaceId: string;
  name: string;
  description: string | null;
  createdAt: Date;
  updatedAt: Date;
}

export const CollectionSchema = new EntitySchema<Collection>({
  name: 'Collection',
  tableName: 'collections',
  indexes: [
    {
      name: 'collections_ws_created_idx',
      expression:
        'create index collections_ws_created_idx on collections (workspace_id, created_at desc, id desc)',
    },
  ],
  properties: {
    id: { ...text, primary: true },
    workspaceId: { ...references('Workspace', 'workspace_id', 'cascade') },
    name: { ...text },
    description: { ...text, nullable: true },
    createdAt: { ...createdAt },
    updatedAt: { ...updatedAt },
  },
});

/** A course's place in a collection; display order is `position` ascending (gaps allowed). */
export interface CollectionCourse {
  collectionId: string;
  courseId: string;
  position: number;
  addedAt: Date;
}

export const CollectionCourseSchema = new EntitySchema<CollectionCourse>({
  name: 'CollectionCourse',
  tableName: 'collection_courses',
  indexes: [
    { name: 'collection_courses_order_idx', properties: ['collectionId', 'position'] },
    { name: 'collection_courses_course_idx', properties: ['courseId'] },
  ],
  properties: {
    collectionId: { ...references('Collection', 'collection_id', 'cascade'), primary: true },
    courseId: { ...references('Course', 'course_id', 'cascade'), primary: true },
    position: { type: 'integer' },
    addedAt: { ...timestamptz, fieldName: 'added_at', defaultRaw: 'now()' },
  },
});
