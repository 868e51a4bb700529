import { EntitySchema } from '@mikro-orm/core';

/** One locale of one course. */
export interface CourseTranslation {
  id: string;
  courseId: string;
  workspaceId: string;
  /** BCP-47, canonical form; unique per course. */
  locale: string;
  /** Translatable path → translated text; only non-empty strings are kept. */
  content: Record<string, string>;
  /** Content hash of the course when the translation was last written. */
  sourceHash: string;
  /** Per translated path, the fingerprint of the source text it was translated from. */
  sourceFingerprints: Record<string, string>;
  createdAt: Date;
  updatedAt: Date;
}

export const CourseTranslationSchema = new EntitySchema<CourseTranslation>({
  name: 'CourseTranslation',
  tableName: 'course_translations',
  properties: {
    id: { type: 'string', primary: true },
    courseId: { type: 'string', fieldName: 'course_id' },
    workspaceId: { type: 'string', fieldName: 'workspace_id' },
    locale: { type: 'string' },
    content: { type: 'json' },
    sourceHash: { type: 'string', fieldName: 'source_hash' },
    sourceFingerprints: { type: 'json', fieldName: 'source_fingerprints' },
    createdAt: { type: 'Date', fieldName: 'created_at', columnType: 'timestamptz' },
    updatedAt: { type: 'Date', fieldName: 'updated_at', columnType: 'timestamptz' },
  },
});
