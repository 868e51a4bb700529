/**
 * Column shapes shared by the entities, spelled the way the migrations spell them: every string is `text` (the
 * ORM's default would be varchar(255), which the database does not have and a 500-character title would not fit),
 * every timestamp `timestamptz`, `created_at`/`updated_at` default `now()`. The drift test
 * (test/integration/db-drift.test.ts) holds the entities to the migrations.
 */
import { DecimalType } from '@mikro-orm/core';

export const text = { type: 'string', columnType: 'text' } as const;
export const timestamptz = { type: 'Date', columnType: 'timestamptz' } as const;
export const createdAt = { ...timestamptz, fieldName: 'created_at', defaultRaw: 'now()' } as const;
export const updatedAt = { ...timestamptz, fieldName: 'updated_at', defaultRaw: 'now()' } as const;
/** A jsonb column with a default (`'{}'` or `'[]'`). */
export const jsonb = (defaultJson: '{}' | '[]') =>
  ({ type: 'json', defaultRaw: `'${defaultJson}'` }) as const;

/**
 * A `numeric` column read as a JS number. A function, not a constant: the ORM binds each property's type
 * instance to that property, so two columns must not share one.
 */
export const numeric = () => ({ type: new DecimalType('number'), columnType: 'numeric' }) as const;

/**
 * A `text` column that references another table's id: a many-to-one relation whose value is the referenced id
 * (`mapToPk`), so rows keep plain `workspaceId: string` fields while the schema carries the foreign key and its
 * ON DELETE rule. `restrict` (a referenced row cannot be deleted while this one exists) compares equal to
 * PostgreSQL's default `no action` in the ORM; it is spelled out where the migration says it.
 */
export const references = (
  entity: string,
  fieldName: string,
  deleteRule: 'cascade' | 'set null' | 'restrict',
) =>
  ({
    kind: 'm:1',
    entity,
    fieldName,
    columnType: 'text',
    mapToPk: true,
    deleteRule,
    // The migrations leave ON UPDATE at PostgreSQL's default; ids never change.
    updateRule: 'no action',
    ...(deleteRule === 'set null' ? { nullable: true } : {}),
  }) as const;

/** A `text` column restricted by a CHECK (… in (…)) to these values, as the migrations write them. */
export const oneOf = (items: readonly string[]) => ({
  enum: true as const,
  items: [...items],
  columnType: 'text',
});
