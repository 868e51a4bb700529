import type { DbConfig } from '@lectern/config';
import type { AdminSql } from '@lectern/admin';
import type { EntityManager } from '@lectern/db';

export { UsageError } from './usage-error.js';

/** A short-lived pool (2 connections) for a command that needs the ORM (loaded only then). */
export async function withOrm<T>(cfg: DbConfig, fn: (em: EntityManager) => Promise<T>): Promise<T> {
  const { createOrm } = await import('@lectern/db');
  const orm = await createOrm({ url: cfg.DATABASE_URL, poolMax: 2 });
  try {
    return await fn(orm.em.fork());
  } finally {
    await orm.close(true);
  }
}

export function print(line: string): void {
  process.stdout.write(`${line}\n`);
}

/**
 * One plain PostgreSQL connection for an admin verb (workspace, key): no ORM, no pool, so the verb starts in a
 * fraction of a second (README "Admin commands").
 */
export async function withSql<T>(cfg: DbConfig, fn: (sql: AdminSql) => Promise<T>): Promise<T> {
  const { default: pg } = await import('pg');
  const client = new pg.Client({ connectionString: cfg.DATABASE_URL, connectionTimeoutMillis: 5000 });
  await client.connect();
  try {
    return await fn({
      query: async <R extends object>(sql: string, params: unknown[]) => {
        let n = 0;
        const res = await client.query(
          sql.replace(/\?/g, () => `$${++n}`),
          params,
        );
        return res.rows as R[];
      },
    });
  } finally {
    await client.end();
  }
}
