import { EntitySchema } from '@mikro-orm/core';
import { createdAt, jsonb, references, text, updatedAt } from './columns.js';

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
  uniques: [{ properties: ['courseId', 'locale'] }],
  properties: {
    id: { ...text, primary: true },
    courseId: { ...references('Course', 'course_id', 'cascade') },
    workspaceId: { ...references('Workspace', 'workspace_id', 'cascade') },
    locale: { ...text },
    content: { ...jsonb('{}') },
    sourceHash: { ...text, fieldName: 'source_hash' },
    sourceFingerprints: { ...jsonb('{}'), fieldName: 'source_fingerprints' },
    createdAt: { ...createdAt },
    updatedAt: { ...updatedAt },
  },
});
