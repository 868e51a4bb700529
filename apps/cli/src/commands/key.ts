import { parseArgs } from 'node:util';
import { DbEnv, parseEnv } from '@lectern/config';
import { createKey, revokeKey } from '@lectern/admin';
import { UsageError, print, withSql } from '../shared.js';

/** lectern key create | revoke */
export async function keyCommand([sub, ...rest]: string[]): Promise<void> {
  switch (sub) {
    case 'create':
      return create(rest);
    case 'revoke':
      return revoke(rest);
    default:
      throw new UsageError(`unknown command: key ${sub ?? ''}`.trim(), 2);
  }
}

async function create(args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    options: {
      workspace: { type: 'string' },
      scope: { type: 'string', default: 'write' },
      json: { type: 'boolean' },
    },
  });
  const workspace = values.workspace;
  if (!workspace) throw new UsageError('--workspace is required');
  const cfg = parseEnv([DbEnv], process.env);
  const k = await withSql(cfg, (sql) => createKey(sql, workspace, values.scope as 'read' | 'write'));
  print(
    values.json ? JSON.stringify(k) : `created ${k.scope} key ${k.id}\n${k.key}\n(shown once; store it now)`,
  );
}

async function revoke([id]: string[]): Promise<void> {
  if (!id) throw new UsageError('usage: lectern key revoke KEY_ID');
  const cfg = parseEnv([DbEnv], process.env);
  await withSql(cfg, (sql) => revokeKey(sql, id));
  print(`revoked ${id}`);
}
