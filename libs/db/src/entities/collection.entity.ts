import { EntitySchema } from '@mikro-orm/core';

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
  properties: {
    id: { type: 'string', primary: true },
    workspaceId: { type: 'string', fieldName: 'workspace_id' },
    name: { type: 'string' },
    description: { type: 'string', nullable: true },
    createdAt: { type: 'Date', fieldName: 'created_at', columnType: 'timestamptz' },
    updatedAt: { type: 'Date', fieldName: 'updated_at', columnType: 'timestamptz' },
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
  properties: {
    collectionId: { type: 'string', primary: true, fieldName: 'collection_id' },
    courseId: { type: 'string', primary: true, fieldName: 'course_id' },
    position: { type: 'integer' },
    addedAt: { type: 'Date', fieldName: 'added_at', columnType: 'timestamptz' },
  },
});
