import { EntitySchema } from '@mikro-orm/core';
import { createdAt, jsonb, numeric, oneOf, references, text, timestamptz } from './columns.js';

/**
 * Learner runs (migration Migration20261123000400_learner_runs), column for column. libs/learner-runs owns the
 * rows and writes the hot paths in SQL; these schemas serve reads and keep the ORM's picture of the tables true.
 * `player_rate`, the player's unlogged rate counter, has no entity (see `skipTables` in ../index.ts).
 */

export interface EmbedKey {
  id: string;
  workspaceId: string;
  name: string;
  /** `encryptSecret(secret, key, id)`; the plain secret is shown once at creation. */
  secretEncrypted: string;
  createdAt: Date;
  revokedAt: Date | null;
}

export const EmbedKeySchema = new EntitySchema<EmbedKey>({
  name: 'EmbedKey',
  tableName: 'embed_keys',
  indexes: [
    {
      name: 'embed_keys_ws_created_idx',
      expression:
        'create index embed_keys_ws_created_idx on embed_keys (workspace_id, created_at desc, id desc)',
    },
  ],
  properties: {
    id: { ...text, primary: true },
    workspaceId: { ...references('Workspace', 'workspace_id', 'cascade') },
    name: { ...text },
    secretEncrypted: { ...text, fieldName: 'secret_encrypted', lazy: true },
    createdAt: { ...createdAt },
    revokedAt: { ...timestamptz, nullable: true, fieldName: 'revoked_at' },
  },
});

export const COMPLETION_STATUSES = ['in_progress', 'completed'] as const;
export const RUN_SOURCES = ['embed', 'scorm'] as const;
export type CompletionStatus = (typeof COMPLETION_STATUSES)[number];
export type RunSource = (typeof RUN_SOURCES)[number];

export interface Completion {
  id: string;
  workspaceId: string;
  courseId: string;
  /** Null for an anonymous run (then `anonymousId` is set). */
  identityId: string | null;
  anonymousId: string | null;
  source: RunSource;
  status: CompletionStatus;
  /** Percentage of the last finish; null when the course had no graded block. */
  score: number | null;
  passedAtCompletion: boolean | null;
  passingScoreAtCompletion: number | null;
  /** Finishes so far (the last one's number); null until the first. */
  attempt: number | null;
  /** The pass in progress: 1, then attempt + 1 after a retake. The pass is finished when attempt = pass. */
  pass: number;
  passStartedAt: Date;
  passTimeSeconds: number;
  contentHash: string;
  timeSpentSeconds: number;
  lastScreenId: string | null;
  progressPercent: number;
  locale: string;
  answers: Record<string, unknown>;
  startedAt: Date;
  lastSeenAt: Date;
  completedAt: Date | null;
  /** Caps reported time: a batch adds at most the wall time since this instant. */
  lastEventAt: Date;
  rateWindowStart: Date;
  rateWindowCount: number;
}

export const CompletionSchema = new EntitySchema<Completion>({
  name: 'Completion',
  tableName: 'completions',
  // A signed identity or an anonymous player id, never both (the migration's unnamed table check).
  checks: [{ name: 'completions_check', expression: '(identity_id is null) <> (anonymous_id is null)' }],
  uniques: [{ properties: ['courseId', 'identityId'] }, { properties: ['courseId', 'anonymousId'] }],
  indexes: [
    {
      name: 'completions_ws_started_idx',
      expression:
        'create index completions_ws_started_idx on completions (workspace_id, started_at desc, id desc)',
    },
    {
      name: 'completions_ws_completed_idx',
      expression:
        'create index completions_ws_completed_idx on completions (workspace_id, completed_at desc, id desc) where completed_at is not null',
    },
    {
      name: 'completions_identity_idx',
      expression:
        'create index completions_identity_idx on completions (identity_id) where identity_id is not null',
    },
  ],
  properties: {
    id: { ...text, primary: true },
    workspaceId: { ...references('Workspace', 'workspace_id', 'cascade') },
    courseId: { ...references('Course', 'course_id', 'cascade') },
    // Nullable, yet deleting the identity deletes its runs (ON DELETE CASCADE).
    identityId: { ...references('Identity', 'identity_id', 'cascade'), nullable: true },
    anonymousId: { ...text, nullable: true, fieldName: 'anonymous_id' },
    source: { ...oneOf(RUN_SOURCES) },
    status: { ...oneOf(COMPLETION_STATUSES), default: 'in_progress' },
    score: { ...numeric(), nullable: true },
    passedAtCompletion: { type: 'boolean', nullable: true, fieldName: 'passed_at_completion' },
    passingScoreAtCompletion: { ...numeric(), nullable: true, fieldName: 'passing_score_at_completion' },
    attempt: { type: 'integer', nullable: true },
    pass: { type: 'integer', default: 1 },
    passStartedAt: { ...timestamptz, fieldName: 'pass_started_at' },
    passTimeSeconds: { type: 'integer', fieldName: 'pass_time_seconds', default: 0 },
    contentHash: { ...text, fieldName: 'content_hash' },
    timeSpentSeconds: { type: 'integer', fieldName: 'time_spent_seconds', default: 0 },
    lastScreenId: { ...text, nullable: true, fieldName: 'last_screen_id' },
    progressPercent: { ...numeric(), fieldName: 'progress_percent', default: 0 },
    locale: { ...text },
    answers: { ...jsonb('{}') },
    startedAt: { ...timestamptz, fieldName: 'started_at' },
    lastSeenAt: { ...timestamptz, fieldName: 'last_seen_at' },
    completedAt: { ...timestamptz, nullable: true, fieldName: 'completed_at' },
    lastEventAt: { ...timestamptz, fieldName: 'last_event_at' },
    rateWindowStart: { ...timestamptz, fieldName: 'rate_window_start' },
    rateWindowCount: { type: 'integer', fieldName: 'rate_window_count', default: 0 },
  },
});

/** One finish, as it was when recorded. Append-only. */
export interface Attempt {
  id: string;
  workspaceId: string;
  completionId: string;
  courseId: string;
  identityId: string | null;
  attempt: number;
  score: number | null;
  passed: boolean | null;
  passingScore: number | null;
  contentHash: string;
  source: RunSource;
  locale: string;
  timeSpentSeconds: number;
  startedAt: Date;
  completedAt: Date;
  answers: Record<string, unknown>;
}

export const AttemptSchema = new EntitySchema<Attempt>({
  name: 'Attempt',
  tableName: 'attempts',
  // One finish can never be recorded twice.
  uniques: [{ properties: ['completionId', 'attempt'] }],
  properties: {
    id: { ...text, primary: true },
    workspaceId: { ...references('Workspace', 'workspace_id', 'cascade') },
    completionId: { ...references('Completion', 'completion_id', 'cascade') },
    courseId: { ...references('Course', 'course_id', 'cascade') },
    identityId: { ...references('Identity', 'identity_id', 'cascade'), nullable: true },
    attempt: { type: 'integer' },
    score: { ...numeric(), nullable: true },
    passed: { type: 'boolean', nullable: true },
    passingScore: { ...numeric(), nullable: true, fieldName: 'passing_score' },
    contentHash: { ...text, fieldName: 'content_hash' },
    source: { ...oneOf(RUN_SOURCES) },
    locale: { ...text },
    timeSpentSeconds: { type: 'integer', fieldName: 'time_spent_seconds' },
    startedAt: { ...timestamptz, fieldName: 'started_at' },
    completedAt: { ...timestamptz, fieldName: 'completed_at' },
    answers: { ...jsonb('{}') },
  },
});

/** An event batch id, claimed by inserting it; `response` answers a retry of the same batch. */
export interface CompletionBatch {
  completionId: string;
  batchId: string;
  response: Record<string, unknown> | null;
  createdAt: Date;
}

export const CompletionBatchSchema = new EntitySchema<CompletionBatch>({
  name: 'CompletionBatch',
  tableName: 'completion_batches',
  properties: {
    completionId: { ...references('Completion', 'completion_id', 'cascade'), primary: true },
    batchId: { ...text, primary: true, fieldName: 'batch_id' },
    response: { type: 'json', nullable: true },
    createdAt: { ...createdAt },
  },
});
