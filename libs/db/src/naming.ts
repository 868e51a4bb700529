import { UnderscoreNamingStrategy } from '@mikro-orm/core';

/**
 * Names constraints the way PostgreSQL names them when a migration leaves the name out (`<table>_<cols>_fkey`,
 * `<table>_<cols>_key`, `<table>_<col>_check`, `<table>_pkey`), so an inline `references …` or `unique (…)` in a
 * migration and the entity describing it agree without spelling every name twice. Indexes are always named in
 * the migrations and in the entities.
 */
export class PostgresNamingStrategy extends UnderscoreNamingStrategy {
  override indexName(
    tableName: string,
    columns: string[],
    type: 'primary' | 'foreign' | 'unique' | 'index' | 'sequence' | 'check',
  ): string {
    if (type === 'foreign') return `${tableName}_${columns.join('_')}_fkey`;
    if (type === 'unique') return `${tableName}_${columns.join('_')}_key`;
    return super.indexName(tableName, columns, type);
  }
}
