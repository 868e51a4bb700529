import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { context } from '../support/context.js';
import { boundQuery, createOrm, dropDatabase, ensureDatabase, migrate, type MikroORM } from '@lectern/db';

/**
 * The migrations are the source of truth for the schema; the EntitySchemas must describe exactly what they
 * build (docs/data-access.md). A database migrated from nothing is compared with the entities by the ORM's own
 * schema comparator: any statement it would run to make the database match the entities is drift.
 */
describe('db: the entities describe the migrated schema exactly', function () {
  this.timeout(60_000);
  let url: string;
  let orm: MikroORM;

  const updateStatements = async (): Promise<string[]> => {
    const text = await orm.getSchemaGenerator().getUpdateSchemaSQL({ wrap: false });
    return text
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => l !== '');
  };

  before(async () => {
    const u = new URL(context().cfg.DATABASE_URL);
    u.pathname = `/${u.pathname.slice(1)}_drift_${randomBytes(3).toString('hex')}`;
    url = u.toString();
    await ensureDatabase(url);
    orm = await createOrm({ url, poolMax: 2 });
    await migrate(orm);
  });

  after(async () => {
    await orm?.close(true);
    if (url) await dropDatabase(url);
  });

  it('a freshly migrated database yields an empty getUpdateSchemaSQL()', async () => {
    const statements = await updateStatements();
    expect(
      statements,
      `the entities and the migrations disagree; the ORM would run:\n${statements.join('\n')}`,
    ).to.deep.equal([]);
  });

  it('indexes the comparator matches by name only (descending or partial) have the definition the migration built', async () => {
    // The comparator does not look inside an index given as an `expression`, so the definitions are compared
    // here with what PostgreSQL reports, spelling differences aside.
    const norm = (def: string) =>
      def
        .toLowerCase()
        .replace(/\bpublic\./g, '')
        .replace(/\busing btree\b/g, '')
        .replace(/::text\b/g, '')
        .replace(/[()"]/g, ' ')
        .replace(/\s+/g, ' ')
        .trim();
    const declared = Object.values(orm.getMetadata().getAll()).flatMap((meta) =>
      meta.indexes.flatMap((ix) =>
        typeof ix.expression === 'string' ? [{ name: ix.name!, expression: ix.expression }] : [],
      ),
    );
    expect(declared.length, 'expression indexes declared by the entities').to.be.greaterThan(5);
    for (const ix of declared) {
      const [row] = await boundQuery<{ indexdef: string }>(
        orm.em.fork(),
        'select indexdef from pg_indexes where schemaname = current_schema() and indexname = ?',
        [ix.name],
      );
      expect(row, `index ${ix.name} exists`).to.not.equal(undefined);
      expect(norm(ix.expression), ix.name).to.equal(norm(row.indexdef));
    }
  });

  it('only the unlogged tables are left out of the comparison', async () => {
    const skipped = orm.config.get('schemaGenerator').skipTables ?? [];
    const rows = await boundQuery<{ relname: string; relpersistence: string }>(
      orm.em.fork(),
      `select c.relname, c.relpersistence from pg_class c join pg_namespace n on n.oid = c.relnamespace
        where n.nspname = current_schema() and c.relkind = 'r' and c.relname <> 'lectern_migrations'`,
    );
    const unlogged = rows.filter((r) => r.relpersistence === 'u').map((r) => r.relname);
    expect([...skipped].map(String).sort()).to.deep.equal(unlogged.sort());
    const mapped = new Set(Object.values(orm.getMetadata().getAll()).map((m) => m.tableName));
    const logged = rows.filter((r) => r.relpersistence !== 'u').map((r) => r.relname);
    expect(
      logged.filter((t) => !mapped.has(t)),
      'tables without an entity',
    ).to.deep.equal([]);
  });

  // Last: it changes this test's own database.
  it('the comparison sees drift: a type, a default, a nullability, a check and a foreign key changed by hand', async () => {
    const em = orm.em.fork();
    await boundQuery(em, 'alter table courses alter column locale drop default');
    await boundQuery(em, 'alter table identities alter column email set not null');
    await boundQuery(em, 'alter table api_keys alter column hash type varchar(255)');
    await boundQuery(em, 'alter table jobs drop constraint jobs_status_check');
    await boundQuery(em, 'alter table themes drop constraint themes_workspace_id_fkey');
    const statements = (await updateStatements()).join('\n');
    expect(statements).to.match(/"courses" alter column "locale" set default 'en'/);
    expect(statements).to.match(/"identities" alter column "email" drop not null/);
    expect(statements).to.match(/"api_keys" alter column "hash" type text/);
    expect(statements).to.match(/jobs_status_check/);
    expect(statements).to.match(/"themes" add constraint "themes_workspace_id_fkey"/);
  });
});
