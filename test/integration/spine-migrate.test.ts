import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { context } from '../support/context.js';
import { createOrm, dropDatabase, ensureDatabase, migrate } from '@lectern/db';
import { migrationsList } from '@lectern/db';

describe('spine: migrations', () => {
  it('processes migrating one new database at once take turns: every migration runs exactly once', async () => {
    const url = new URL(context().cfg.DATABASE_URL);
    url.pathname = `/${url.pathname.slice(1)}_mig_${randomBytes(3).toString('hex')}`;
    await ensureDatabase(url.toString());
    const orms = await Promise.all([1, 2, 3].map(() => createOrm({ url: url.toString(), poolMax: 2 })));
    try {
      const applied = await Promise.all(orms.map((orm) => migrate(orm)));
      const all = applied.flat();
      expect(all).to.have.length(migrationsList.length);
      expect([...all].sort()).to.deep.equal(migrationsList.map((m) => m.name).sort());
      expect(await migrate(orms[0])).to.deep.equal([]);
    } finally {
      await Promise.all(orms.map((orm) => orm.close(true)));
      await dropDatabase(url.toString());
    }
  });
});
