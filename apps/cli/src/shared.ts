import type { DbConfig } from '@lectern/config';
import { createOrm, type EntityManager } from '@lectern/db';

export { UsageError } from './usage-error.js';

/** A short-lived pool (2 connections) for one admin command. */
export async function withOrm<T>(cfg: DbConfig, fn: (em: EntityManager) => Promise<T>): Promise<T> {
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
