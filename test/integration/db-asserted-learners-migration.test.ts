import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { context } from '../support/context.js';
import { boundQuery, createOrm, dropDatabase, ensureDatabase, type MikroORM } from '@lectern/db';

/**
 * Migration20261126000900_asserted_learners on a database with data: learners an LMS made before move to their
 * course's scope (keeping their id, so their runs and certificates stay theirs), every other learner stays the
 * workspace's own, and issued certificates take their run's source.
 */
describe('db: migrating learners an LMS asserted before LMS scopes existed', function () {
  this.timeout(60_000);
  let url: string;
  let orm: MikroORM;
  const sql = <T extends object>(q: string, params: unknown[] = []) =>
    boundQuery<T>(orm.em.fork(), q, params);

  before(async () => {
    const u = new URL(context().cfg.DATABASE_URL);
    u.pathname = `/${u.pathname.slice(1)}_scopes_${randomBytes(3).toString('hex')}`;
    url = u.toString();
    await ensureDatabase(url);
    orm = await createOrm({ url, poolMax: 2 });
    await orm.getMigrator().up({ to: 'Migration20261126000800_async_jobs' });
  });

  after(async () => {
    await orm?.close(true);
    if (url) await dropDatabase(url);
  });

  it('moves LMS-only learners of one course to its scope; signed, mixed and multi-course learners stay', async () => {
    await sql(`insert into workspaces (id, name, plan) values ('ws1', 'W', 'scale')`);
    for (const c of ['crsA', 'crsB'])
      await sql(`insert into courses (id, workspace_id, title, content_hash) values (?, 'ws1', 'T', 'h')`, [
        c,
      ]);
    const learners = ['lms-only', 'signed', 'mixed', 'two-courses', 'api-only'];
    for (const l of learners)
      await sql(`insert into identities (id, workspace_id, external_id) values (?, 'ws1', ?)`, [
        `idn_${l}`,
        l,
      ]);
    const run = (id: string, course: string, identity: string, source: 'embed' | 'scorm') =>
      sql(
        `insert into completions (id, workspace_id, course_id, identity_id, source, pass_started_at, content_hash,
           locale, started_at, last_seen_at, last_event_at, rate_window_start)
         values (?, 'ws1', ?, ?, ?, now(), 'h', 'en', now(), now(), now(), now())`,
        [id, course, `idn_${identity}`, source],
      );
    await run('cmp1', 'crsA', 'lms-only', 'scorm');
    await run('cmp2', 'crsA', 'signed', 'embed');
    await run('cmp3', 'crsA', 'mixed', 'scorm');
    await run('cmp4', 'crsB', 'mixed', 'embed');
    await run('cmp5', 'crsA', 'two-courses', 'scorm');
    await run('cmp6', 'crsB', 'two-courses', 'scorm');
    for (const [id, cmp, identity] of [
      ['crt1', 'cmp1', 'lms-only'],
      ['crt2', 'cmp2', 'signed'],
    ])
      await sql(
        `insert into issued_certificates (id, workspace_id, serial, completion_id, course_id, identity_id,
           identity_external_id, learner_name, course_title, issuer_name, locale, direction, design)
         values (?, 'ws1', ?, ?, 'crsA', ?, ?, 'N', 'T', 'I', 'en', 'ltr', '{}'::jsonb)`,
        [id, `LC-${id}`, cmp, `idn_${identity}`, identity],
      );

    await orm.getMigrator().up({ to: 'Migration20261126000900_asserted_learners' });

    const scopes = await sql<{ external_id: string; scope: string }>(
      'select external_id, scope from identities order by external_id',
    );
    expect(scopes.map((r) => [r.external_id, r.scope])).to.deep.equal([
      ['api-only', ''],
      ['lms-only', 'course:crsA'],
      ['mixed', ''],
      ['signed', ''],
      ['two-courses', ''],
    ]);
    const certs = await sql<{ id: string; source: string }>(
      'select id, source from issued_certificates order by id',
    );
    expect(certs.map((r) => [r.id, r.source])).to.deep.equal([
      ['crt1', 'scorm'],
      ['crt2', 'embed'],
    ]);
    const [course] = await sql<{ tracking_version: number; tracking_rotated_at: Date | null }>(
      `select tracking_version, tracking_rotated_at from courses where id = 'crsA'`,
    );
    expect(course).to.deep.equal({ tracking_version: 1, tracking_rotated_at: null });
    // The workspace's own learner and the moved one may now share an id: two learners, not a clash.
    await sql(`insert into identities (id, workspace_id, external_id) values ('idn_new', 'ws1', 'lms-only')`);
  });
});
