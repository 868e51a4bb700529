import { EntitySchema } from '@mikro-orm/core';

export type JobStatus = 'queued' | 'processing' | 'completed' | 'failed';

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
  completedAt: Date | null;
}

export const JobSchema = new EntitySchema<Job>({
  name: 'Job',
  tableName: 'jobs',
  properties: {
    id: { type: 'string', primary: true },
    workspaceId: { type: 'string', fieldName: 'workspace_id' },
    kind: { type: 'string' },
    status: { type: 'string' },
    input: { type: 'json' },
    result: { type: 'json', nullable: true },
    error: { type: 'json', nullable: true },
    attempts: { type: 'integer' },
    createdAt: { type: 'Date', fieldName: 'created_at', columnType: 'timestamptz' },
    updatedAt: { type: 'Date', fieldName: 'updated_at', columnType: 'timestamptz' },
    completedAt: { type: 'Date', nullable: true, fieldName: 'completed_at', columnType: 'timestamptz' },
  },
});
