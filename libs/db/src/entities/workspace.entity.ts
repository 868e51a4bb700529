import { EntitySchema } from '@mikro-orm/core';

export type PlanName = 'sandbox' | 'build' | 'scale' | 'partner';
export type BillingStatus = 'ok' | 'past_due';

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
    id: { type: 'string', primary: true },
    name: { type: 'string' },
    plan: { type: 'string' },
    billingStatus: { type: 'string', fieldName: 'billing_status' },
    graceUntil: { type: 'Date', nullable: true, fieldName: 'grace_until', columnType: 'timestamptz' },
    createdAt: { type: 'Date', fieldName: 'created_at', columnType: 'timestamptz' },
    updatedAt: { type: 'Date', fieldName: 'updated_at', columnType: 'timestamptz' },
  },
});
