import { DecimalType, EntitySchema } from '@mikro-orm/core';

/**
 * Learner runs (migration Migration20261123000400_learner_runs), column for column. libs/learner-runs owns the
 * rows and writes the hot paths in SQL; these schemas serve reads and keep the ORM's picture of the tables true.
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
  properties: {
    id: { type: 'string', primary: true },
    workspaceId: { type: 'string', fieldName: 'workspace_id' },
    name: { type: 'string' },
    secretEncrypted: { type: 'string', fieldName: 'secret_encrypted', lazy: true },
    createdAt: { type: 'Date', fieldName: 'created_at', columnType: 'timestamptz' },
    revokedAt: { type: 'Date', nullable: true, fieldName: 'revoked_at', columnType: 'timestamptz' },
  },
});

export type CompletionStatus = 'in_progress' | 'completed';
export type RunSource = 'embed' | 'scorm';

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

const numeric = (nullable: boolean, fieldName: string) => ({
  type: new DecimalType('number'),
  nullable,
  fieldName,
  columnType: 'numeric',
});
const timestamptz = (fieldName: string, nullable = false) => ({
  type: 'Date',
  fieldName,
  columnType: 'timestamptz',
  nullable,
});

export const CompletionSchema = new EntitySchema<Completion>({
  name: 'Completion',
  tableName: 'completions',
  properties: {
    id: { type: 'string', primary: true },
    workspaceId: { type: 'string', fieldName: 'workspace_id' },
    courseId: { type: 'string', fieldName: 'course_id' },
    identityId: { type: 'string', nullable: true, fieldName: 'identity_id' },
    anonymousId: { type: 'string', nullable: true, fieldName: 'anonymous_id' },
    source: { type: 'string' },
    status: { type: 'string' },
    score: numeric(true, 'score'),
    passedAtCompletion: { type: 'boolean', nullable: true, fieldName: 'passed_at_completion' },
    passingScoreAtCompletion: numeric(true, 'passing_score_at_completion'),
    attempt: { type: 'integer', nullable: true },
    pass: { type: 'integer' },
    passStartedAt: timestamptz('pass_started_at'),
    passTimeSeconds: { type: 'integer', fieldName: 'pass_time_seconds' },
    contentHash: { type: 'string', fieldName: 'content_hash' },
    timeSpentSeconds: { type: 'integer', fieldName: 'time_spent_seconds' },
    lastScreenId: { type: 'string', nullable: true, fieldName: 'last_screen_id' },
    progressPercent: numeric(false, 'progress_percent'),
    locale: { type: 'string' },
    answers: { type: 'json' },
    startedAt: timestamptz('started_at'),
    lastSeenAt: timestamptz('last_seen_at'),
    completedAt: timestamptz('completed_at', true),
    lastEventAt: timestamptz('last_event_at'),
    rateWindowStart: timestamptz('rate_window_start'),
    rateWindowCount: { type: 'integer', fieldName: 'rate_window_count' },
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
  properties: {
    id: { type: 'string', primary: true },
    workspaceId: { type: 'string', fieldName: 'workspace_id' },
    completionId: { type: 'string', fieldName: 'completion_id' },
    courseId: { type: 'string', fieldName: 'course_id' },
    identityId: { type: 'string', nullable: true, fieldName: 'identity_id' },
    attempt: { type: 'integer' },
    score: numeric(true, 'score'),
    passed: { type: 'boolean', nullable: true },
    passingScore: numeric(true, 'passing_score'),
    contentHash: { type: 'string', fieldName: 'content_hash' },
    source: { type: 'string' },
    locale: { type: 'string' },
    timeSpentSeconds: { type: 'integer', fieldName: 'time_spent_seconds' },
    startedAt: timestamptz('started_at'),
    completedAt: timestamptz('completed_at'),
    answers: { type: 'json' },
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
    completionId: { type: 'string', primary: true, fieldName: 'completion_id' },
    batchId: { type: 'string', primary: true, fieldName: 'batch_id' },
    response: { type: 'json', nullable: true },
    createdAt: timestamptz('created_at'),
  },
});
