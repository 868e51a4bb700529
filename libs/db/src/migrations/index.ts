import type { MigrationObject } from '@mikro-orm/core';
import { Migration20261121000001_spine } from './Migration20261121000001_spine.js';

/**
 * Every migration, in order. Listed explicitly (no directory scan) so the same list
 * works from TypeScript sources under tsx and from the compiled build.
 * Add new migrations at the end; never edit one that has shipped.
 */
export const migrationsList: MigrationObject[] = [
  { name: 'Migration20261121000001_spine', class: Migration20261121000001_spine },
];
