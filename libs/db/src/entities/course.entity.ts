import { DecimalType, EntitySchema } from '@mikro-orm/core';

export type CourseStatus = 'draft' | 'published';
export type CourseDirection = 'ltr' | 'rtl';
export type QuizFeedback = 'deferred' | 'immediate';
export type CourseNavigation = 'default' | 'hidden';

export interface Course {
  id: string;
  workspaceId: string;
  title: string;
  status: CourseStatus;
  /** Stored as sent (unknown fields included) once libs/courses `validateScreens` accepted it. */
  screens: unknown[];
  /** `manual`, `csv`, `scorm`, `generated`. */
  sourceKind: string;
  direction: CourseDirection;
  /** Source language (BCP-47, canonical form). */
  locale: string;
  customFonts: unknown[];
  themeId: string | null;
  certificateId: string | null;
  /** Percentage 0–100; null = any completion passes. */
  passingScore: number | null;
  quizFeedback: QuizFeedback;
  navigation: CourseNavigation;
  /** libs/courses `contentHash` of title, screens, direction and locale; kept in step on every write. */
  contentHash: string;
  createdAt: Date;
  updatedAt: Date;
}

export const CourseSchema = new EntitySchema<Course>({
  name: 'Course',
  tableName: 'courses',
  properties: {
    id: { type: 'string', primary: true },
    workspaceId: { type: 'string', fieldName: 'workspace_id' },
    title: { type: 'string' },
    status: { type: 'string' },
    screens: { type: 'json' },
    sourceKind: { type: 'string', fieldName: 'source_kind' },
    direction: { type: 'string' },
    locale: { type: 'string' },
    customFonts: { type: 'json', fieldName: 'custom_fonts' },
    themeId: { type: 'string', nullable: true, fieldName: 'theme_id' },
    certificateId: { type: 'string', nullable: true, fieldName: 'certificate_id' },
    passingScore: {
      type: new DecimalType('number'),
      nullable: true,
      fieldName: 'passing_score',
      columnType: 'numeric',
    },
    quizFeedback: { type: 'string', fieldName: 'quiz_feedback' },
    navigation: { type: 'string' },
    contentHash: { type: 'string', fieldName: 'content_hash' },
    createdAt: { type: 'Date', fieldName: 'created_at', columnType: 'timestamptz' },
    updatedAt: { type: 'Date', fieldName: 'updated_at', columnType: 'timestamptz' },
  },
});
