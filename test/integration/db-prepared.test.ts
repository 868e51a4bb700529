import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { context } from '../support/context.js';
import { boundQuery, createOrm, type MikroORM } from '@lectern/db';

/**
 * `boundQuery(…, { prepared: true })`: the hot paths' statements are prepared once per pooled connection and then
 * executed by name. What must hold: the same answers as unprepared, a name per text (two texts never collide),
 * values still bound (never spliced), and a schema change under a prepared statement does not break it.
 */
describe('db: prepared statements (boundQuery { prepared: true })', function () {
  this.timeout(30_000);
  let orm: MikroORM;
  const table = `prep_${randomBytes(4).toString('hex')}`;
  const em = () => orm.em.fork();

  before(async () => {
    // One connection: every call below reuses the statement prepared on it.
    orm = await createOrm({ url: context().cfg.DATABASE_URL, poolMax: 1 });
    await boundQuery(em(), `create table ${table} (id int primary key, name text not null)`);
    await boundQuery(em(), `insert into ${table} values (1, 'one'), (2, 'two'), (3, 'it''s')`);
  });
  after(async () => {
    await boundQuery(em(), `drop table if exists ${table}`);
    await orm.close(true);
  });

  const preparedNames = async () =>
    (
      await boundQuery<{ name: string }>(
        em(),
        `select name from pg_prepared_statements where name like 'lq\\_%'`,
      )
    ).map((r) => r.name);

  it('answers as the unprepared statement does, preparing it once on the connection', async () => {
    const text = `select id, name from ${table} where id = ?`;
    for (const id of [1, 2, 3, 1]) {
      const [plain] = await boundQuery(em(), text, [id]);
      const [prepared] = await boundQuery(em(), text, [id], { prepared: true });
      expect(prepared).to.deep.equal(plain);
    }
    expect(await preparedNames()).to.have.length(1);
    // A second text is a second statement, not a collision with the first.
    const rows = await boundQuery(
      em(),
      `select name from ${table} where id = any (?::int[]) order by id`,
      [[1, 3]],
      {
        prepared: true,
      },
    );
    expect(rows).to.deep.equal([{ name: 'one' }, { name: "it's" }]);
    expect(await preparedNames()).to.have.length(2);
  });

  it('binds values as parameters, never splicing them into the text', async () => {
    const text = `select count(*)::int as n from ${table} where name = ?`;
    const [hostile] = await boundQuery<{ n: number }>(em(), text, ["' or '1'='1"], { prepared: true });
    expect(hostile.n).to.equal(0);
    const [quoted] = await boundQuery<{ n: number }>(em(), text, ["it's"], { prepared: true });
    expect(quoted.n).to.equal(1);
  });

  it('survives a column added under a prepared `select *` (retried unprepared outside a transaction)', async () => {
    const text = `select * from ${table} where id = ?`;
    const [before] = await boundQuery(em(), text, [1], { prepared: true });
    expect(before).to.deep.equal({ id: 1, name: 'one' });
    await boundQuery(em(), `alter table ${table} add column extra text not null default 'x'`);
    const [after] = await boundQuery(em(), text, [1], { prepared: true });
    expect(after).to.deep.equal({ id: 1, name: 'one', extra: 'x' });
  });

  it('inside a transaction, runs on the transaction and rolls back with it', async () => {
    const text = `update ${table} set name = ? where id = ? returning name`;
    await em()
      .transactional(async (tx) => {
        const [r] = await boundQuery<{ name: string }>(tx, text, ['changed', 2], { prepared: true });
        expect(r.name).to.equal('changed');
        throw new Error('roll back');
      })
      .catch((err: Error) => expect(err.message).to.equal('roll back'));
    const [r] = await boundQuery<{ name: string }>(em(), `select name from ${table} where id = 2`);
    expect(r.name).to.equal('two');
  });
});
