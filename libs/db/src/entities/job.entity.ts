import { EntitySchema } from '@mikro-orm/core';
import { createdAt, jsonb, oneOf, references, text, timestamptz, updatedAt } from './columns.js';

export const JOB_STATUSES = ['queued', 'processing', 'completed', 'failed'] as const;
export type JobStatus = (typeof JOB_STATUSES)[number];

export interface Job {
  id: string;
  workspaceId: string;
  kind: string;
  status: JobStatus;
  input: Record<string, unknown>;
  result: Record<string, unknown> | null;
  error: { code: string; message: string; details?: Record<string, unknown> } | null;
  attempts: number;
  createdAt: Date;
  updatedAt: Date;
  /** The first claim; null while the job has never been claimed. */
  startedAt: Date | null;
  completedAt: Date | null;
  /** Asynchronous jobs only: past it the sweeper fails the job (`timeout`). */
  deadlineAt: Date | null;
  /** Asynchronous jobs only: claims allowed before the job fails. */
  maxAttempts: number | null;
}

export const JobSchema = new EntitySchema<Job>({
  name: 'Job',
  tableName: 'jobs',
  indexes: [
    {
      name: 'jobs_ws_kind_idx',
      expression: 'create index jobs_ws_kind_idx on jobs (workspace_id, kind, created_at desc)',
    },
    {
      name: 'jobs_open_deadline_idx',
      expression:
        "create index jobs_open_deadline_idx on jobs (deadline_at) where deadline_at is not null and status = any (array['queued', 'processing'])",
    },
  ],
  properties: {
    id: { ...text, primary: true },
    workspaceId: { ...references('Workspace', 'workspace_id', 'cascade') },
    kind: { ...text },
    status: { ...oneOf(JOB_STATUSES) },
    input: { ...jsonb('{}') },
    result: { type: 'json', nullable: true },
    error: { type: 'json', nullable: true },
    attempts: { type: 'integer', default: 0 },
    createdAt: { ...createdAt },
    updatedAt: { ...updatedAt },
    startedAt: { ...timestamptz, nullable: true, fieldName: 'started_at' },
    completedAt: { ...timestamptz, nullable: true, fieldName: 'completed_at' },
    deadlineAt: { ...timestamptz, nullable: true, fieldName: 'deadline_at' },
    maxAttempts: { type: 'integer', nullable: true, fieldName: 'max_attempts' },
  },
});
