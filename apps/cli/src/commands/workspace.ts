import { parseArgs } from 'node:util';
import { DbEnv, parseEnv } from '@lectern/config';
import { createWorkspace, setBilling, setPlan } from '@lectern/admin';
import { UsageError, print, withSql } from '../shared.js';

/** lectern workspace create | set-plan | billing */
export async function workspaceCommand([sub, ...rest]: string[]): Promise<void> {
  switch (sub) {
    case 'create':
      return create(rest);
    case 'set-plan':
      return updatePlan(rest);
    case 'billing':
      return billing(rest);
    default:
      throw new UsageError(`unknown command: workspace ${sub ?? ''}`.trim(), 2);
  }
}

async function create(args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    options: {
      name: { type: 'string' },
      plan: { type: 'string', default: 'sandbox' },
      json: { type: 'boolean' },
    },
  });
  const name = values.name;
  if (!name) throw new UsageError('--name is required');
  const cfg = parseEnv([DbEnv], process.env);
  const ws = await withSql(cfg, (sql) => createWorkspace(sql, name, values.plan!));
  print(
    values.json
      ? JSON.stringify({ id: ws.id, name: ws.name, plan: ws.plan })
      : `created workspace ${ws.id} (${ws.name}, ${ws.plan})`,
  );
}

async function updatePlan([id, plan]: string[]): Promise<void> {
  if (!id || !plan) throw new UsageError('usage: lectern workspace set-plan WORKSPACE_ID PLAN');
  const cfg = parseEnv([DbEnv], process.env);
  const ws = await withSql(cfg, (sql) => setPlan(sql, id, plan));
  print(`workspace ${ws.id} is now on ${ws.plan}`);
}

async function billing(args: string[]): Promise<void> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: {
      'past-due': { type: 'boolean' },
      'grace-until': { type: 'string' },
      paid: { type: 'boolean' },
    },
  });
  const id = positionals[0];
  if (!id)
    throw new UsageError(
      'usage: lectern workspace billing WORKSPACE_ID (--past-due --grace-until ISO | --paid)',
    );
  if (values.paid === values['past-due']) throw new UsageError('give exactly one of --past-due or --paid');
  let graceUntil: Date | undefined;
  if (values['past-due']) {
    graceUntil = new Date(values['grace-until'] ?? '');
    if (!values['grace-until'] || Number.isNaN(graceUntil.getTime()))
      throw new UsageError('--past-due needs --grace-until with an ISO 8601 timestamp');
  }
  const cfg = parseEnv([DbEnv], process.env);
  const ws = await withSql(cfg, (sql) =>
    setBilling(sql, id, values.paid ? { pastDue: false } : { pastDue: true, graceUntil: graceUntil! }),
  );
  print(
    `workspace ${ws.id} billing: ${ws.billingStatus}${ws.graceUntil ? ` (grace until ${ws.graceUntil.toISOString()})` : ''}`,
  );
}
