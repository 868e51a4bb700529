import { EntitySchema } from '@mikro-orm/core';
import { createdAt, oneOf, references, text, timestamptz, updatedAt } from './columns.js';

export const PLAN_NAMES = ['sandbox', 'build', 'scale', 'partner'] as const;
export type PlanName = (typeof PLAN_NAMES)[number];
export const BILLING_STATUSES = ['ok', 'past_due'] as const;
export type BillingStatus = (typeof BILLING_STATUSES)[number];

export interface Workspace {
  id: string;
  name: string;
  plan: PlanName;
  billingStatus: BillingStatus;
  graceUntil: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

export const WorkspaceSchema = new EntitySchema<Workspace>({
  name: 'Workspace',
  tableName: 'workspaces',
  properties: {
    id: { ...text, primary: true },
    name: { ...text },
    plan: { ...oneOf(PLAN_NAMES) },
    billingStatus: { ...oneOf(BILLING_STATUSES), fieldName: 'billing_status', default: 'ok' },
    graceUntil: { ...timestamptz, nullable: true, fieldName: 'grace_until' },
    createdAt: { ...createdAt },
    updatedAt: { ...updatedAt },
  },
});

/** A workspace's count of one metered thing in one month (`YYYY-MM`); written by libs/plans in SQL. */
export interface UsageCounter {
  workspaceId: string;
  month: string;
  metric: string;
  count: string;
}

export const UsageCounterSchema = new EntitySchema<UsageCounter>({
  name: 'UsageCounter',
  tableName: 'usage_counters',
  properties: {
    workspaceId: { ...references('Workspace', 'workspace_id', 'cascade'), primary: true },
    month: { ...text, primary: true },
    metric: { ...text, primary: true },
    // bigint arrives from node-postgres as a string; nothing reads this entity through the ORM today.
    count: { type: 'bigint', default: 0 },
  },
});

/** A workspace's count of one metered thing on one UTC day; written with `usage_counters` in one statement. */
export interface UsageDay {
  workspaceId: string;
  day: string;
  metric: string;
  count: string;
}

export const UsageDaySchema = new EntitySchema<UsageDay>({
  name: 'UsageDay',
  tableName: 'usage_daily',
  properties: {
    workspaceId: { ...references('Workspace', 'workspace_id', 'cascade'), primary: true },
    day: { type: 'string', columnType: 'date', primary: true },
    metric: { ...text, primary: true },
    count: { type: 'bigint', default: 0 },
  },
});

/** Who may spend the workspace's views (no row: any origin, anonymous runs allowed); libs/learner-runs. */
export interface PlayerSettings {
  workspaceId: string;
  /** Origins allowed to embed and to open runs; null: any. */
  allowedOrigins: string[] | null;
  anonymousRuns: boolean;
  updatedAt: Date;
}

export const PlayerSettingsSchema = new EntitySchema<PlayerSettings>({
  name: 'PlayerSettings',
  tableName: 'player_settings',
  properties: {
    workspaceId: { ...references('Workspace', 'workspace_id', 'cascade'), primary: true },
    allowedOrigins: { type: 'json', nullable: true, fieldName: 'allowed_origins' },
    anonymousRuns: { type: 'boolean', fieldName: 'anonymous_runs', default: true },
    updatedAt: { ...updatedAt },
  },
});
