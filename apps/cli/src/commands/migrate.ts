import { DbEnv, parseEnv, type DbConfig } from '@lectern/config';
import { createOrm, ensureDatabase, migrate } from '@lectern/db';
import { print } from '../shared.js';

/** Creates the database if missing and applies pending migrations; returns their names. */
export async function runMigrate(cfg: DbConfig): Promise<string[]> {
  const created = await ensureDatabase(cfg.DATABASE_URL);
  if (created) print(`created database ${new URL(cfg.DATABASE_URL).pathname.slice(1)}`);
  const orm = await createOrm({ url: cfg.DATABASE_URL, poolMax: 2 });
  try {
    return await migrate(orm);
  } finally {
    await orm.close(true);
  }
}

/** lectern migrate */
export async function migrateCommand(): Promise<void> {
  const applied = await runMigrate(parseEnv([DbEnv], process.env));
  print(applied.length ? `applied ${applied.join(', ')}` : 'schema is up to date');
}
