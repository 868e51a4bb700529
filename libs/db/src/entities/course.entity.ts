import { DecimalType, EntitySchema, type OptionalProps } from '@mikro-orm/core';
import { createdAt, jsonb, oneOf, references, text, timestamptz, updatedAt } from './columns.js';

const COURSE_STATUSES = ['draft', 'published'] as const;
const COURSE_DIRECTIONS = ['ltr', 'rtl'] as const;
const QUIZ_FEEDBACK = ['deferred', 'immediate'] as const;
const COURSE_NAVIGATION = ['default', 'hidden'] as const;
const COURSE_COMPLETION = ['free', 'sequential'] as const;
export type CourseStatus = (typeof COURSE_STATUSES)[number];
export type CourseDirection = (typeof COURSE_DIRECTIONS)[number];
export type QuizFeedback = (typeof QUIZ_FEEDBACK)[number];
export type CourseNavigation = (typeof COURSE_NAVIGATION)[number];
export type CourseCompletion = (typeof COURSE_COMPLETION)[number];

export interface Course {
  /** Written by the database's defaults on insert; only a tracking-secret rotation changes them. */
  [OptionalProps]?: 'trackingVersion' | 'trackingRotatedAt' | 'completion' | 'reviewShowCorrectAnswers';
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
  /** `free`: screens in any order; `sequential`: in order, graded blocks answered first (docs/authoring.md). */
  completion: CourseCompletion;
  /** The review after a finished run shows the correct answers (docs/authoring.md "Review"). */
  reviewShowCorrectAnswers: boolean;
  /** libs/courses `contentHash` of title, screens, direction and locale; kept in step on every write. */
  contentHash: string;
  /** Version of the tracking secret: tracking tokens of another version are refused (docs/scorm.md "Tracking"). */
  trackingVersion: number;
  /** When the tracking secret was last rotated; null: never. */
  trackingRotatedAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

export const CourseSchema = new EntitySchema<Course>({
  name: 'Course',
  tableName: 'courses',
  checks: [
    { name: 'courses_passing_score_check', expression: 'passing_score >= 0 and passing_score <= 100' },
  ],
  indexes: [
    {
      name: 'courses_ws_created_idx',
      expression: 'create index courses_ws_created_idx on courses (workspace_id, created_at desc, id desc)',
    },
    {
      name: 'courses_theme_idx',
      expression: 'create index courses_theme_idx on courses (theme_id) where theme_id is not null',
    },
    {
      name: 'courses_certificate_idx',
      expression:
        'create index courses_certificate_idx on courses (certificate_id) where certificate_id is not null',
    },
  ],
  properties: {
    id: { ...text, primary: true },
    workspaceId: { ...references('Workspace', 'workspace_id', 'cascade') },
    title: { ...text },
    status: { ...oneOf(COURSE_STATUSES), default: 'draft' },
    screens: { ...jsonb('[]') },
    sourceKind: { ...text, fieldName: 'source_kind', default: 'manual' },
    direction: { ...oneOf(COURSE_DIRECTIONS), default: 'ltr' },
    locale: { ...text, default: 'en' },
    customFonts: { ...jsonb('[]'), fieldName: 'custom_fonts' },
    // Deleting a theme or certificate template falls back to none / the built-in design (ON DELETE SET NULL).
    themeId: { ...references('Theme', 'theme_id', 'set null') },
    certificateId: { ...references('CertificateTemplate', 'certificate_id', 'set null') },
    passingScore: {
      type: new DecimalType('number'),
      nullable: true,
      fieldName: 'passing_score',
      columnType: 'numeric',
    },
    quizFeedback: { ...oneOf(QUIZ_FEEDBACK), fieldName: 'quiz_feedback', default: 'deferred' },
    navigation: { ...oneOf(COURSE_NAVIGATION), default: 'default' },
    completion: { ...oneOf(COURSE_COMPLETION), default: 'free' },
    reviewShowCorrectAnswers: { type: 'boolean', fieldName: 'review_show_correct_answers', default: false },
    contentHash: { ...text, fieldName: 'content_hash' },
    trackingVersion: { type: 'integer', fieldName: 'tracking_version', default: 1 },
    trackingRotatedAt: { ...timestamptz, nullable: true, fieldName: 'tracking_rotated_at' },
    createdAt: { ...createdAt },
    updatedAt: { ...updatedAt },
  },
});
