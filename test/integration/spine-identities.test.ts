import { expect } from 'chai';
import {
  makeWorkspace,
  startTestApp,
  testConfig,
  type TestApp,
  type TestWorkspace,
} from '../support/context.js';
import { call, clientFor, waitFor } from '../support/http.js';
import { outboxOf, readStream } from '../support/spine.js';
import { boundQuery } from '@lectern/db';

interface IdentityDto {
  id: string;
  externalId: string;
  name: string | null;
  email: string | null;
  createdAt: string;
  updatedAt: string;
}
interface BulkResult {
  data: { created: number; updated: number; identities: IdentityDto[] };
}
interface BulkDeleteResult {
  data: { deleted: number; requested: number; identities: { id: string; externalId: string }[] };
}
interface Envelope {
  id: string;
  type: string;
  createdAt: string;
  workspaceId: string;
  data: { identity: { id: string; externalId: string; name: string | null; email: string | null } };
}

const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

describe('spine: identities (SPEC "Identities")', () => {
  let app: TestApp;
  before(async () => {
    app = await startTestApp();
  });
  after(async () => app?.close());
  const em = () => app.rt.orm.em.fork();
  const fresh = () => makeWorkspace(em(), 'build', 'Identities');
  const countIn = async (workspaceId: string) =>
    Number(
      (
        await boundQuery<{ n: string }>(em(), 'select count(*) as n from identities where workspace_id = ?', [
          workspaceId,
        ])
      )[0].n,
    );

  describe('upsert', () => {
    it('201 on first creation, 200 afterwards, same id', async () => {
      const ws = await fresh();
      const first = await call<{ data: IdentityDto }>(app.base, 'POST', '/identities', {
        key: ws.key,
        body: { externalId: 'l-1', name: 'Ada', email: 'ada@example.com' },
      });
      expect(first.status).to.equal(201);
      expect(first.body.data).to.include({ externalId: 'l-1', name: 'Ada', email: 'ada@example.com' });
      expect(first.body.data.id).to.be.a('string').and.not.equal('');
      expect(first.body.data.createdAt).to.match(ISO_MS);

      const second = await call<{ data: IdentityDto }>(app.base, 'POST', '/identities', {
        key: ws.key,
        body: { externalId: 'l-1', name: 'Ada L.' },
      });
      expect(second.status).to.equal(200);
      expect(second.body.data.id).to.equal(first.body.data.id);
      expect(second.body.data.createdAt).to.equal(first.body.data.createdAt);
      expect(second.body.data.name).to.equal('Ada L.');
      expect(await countIn(ws.id)).to.equal(1);
    });

    it('a field left out keeps its value; null clears it', async () => {
      const ws = await fresh();
      const lectern = clientFor(app, ws.key);
      await lectern.upsertIdentity({
        body: { externalId: 'keep', name: 'Keep Me', email: 'keep@example.com' },
      });
      const nameOnly = await lectern.upsertIdentity({ body: { externalId: 'keep', name: 'Renamed' } });
      expect(nameOnly.data).to.include({ name: 'Renamed', email: 'keep@example.com' });
      const nothing = await call<{ data: IdentityDto }>(app.base, 'POST', '/identities', {
        key: ws.key,
        body: { externalId: 'keep' },
      });
      expect(nothing.status).to.equal(200);
      expect(nothing.body.data).to.include({ name: 'Renamed', email: 'keep@example.com' });
      const cleared = await lectern.upsertIdentity({ body: { externalId: 'keep', email: null } });
      expect(cleared.data).to.include({ name: 'Renamed', email: null });
      const fetched = await clientFor(app, ws.readKey).getIdentity({ params: { id: cleared.data.id } });
      expect(fetched.data).to.deep.equal(cleared.data);
    });

    it('the same externalId in two workspaces is two identities', async () => {
      const a = await fresh();
      const b = await fresh();
      const ra = await call<{ data: IdentityDto }>(app.base, 'POST', '/identities', {
        key: a.key,
        body: { externalId: 'shared' },
      });
      const rb = await call<{ data: IdentityDto }>(app.base, 'POST', '/identities', {
        key: b.key,
        body: { externalId: 'shared' },
      });
      expect(ra.status).to.equal(201);
      expect(rb.status).to.equal(201);
      expect(ra.body.data.id).to.not.equal(rb.body.data.id);
    });

    it('concurrent upserts of one new externalId create exactly one row and one 201', async () => {
      const ws = await fresh();
      const results = await Promise.all(
        Array.from({ length: 8 }, () =>
          call<{ data: IdentityDto }>(app.base, 'POST', '/identities', {
            key: ws.key,
            body: { externalId: 'race' },
          }),
        ),
      );
      expect(results.map((r) => r.status).sort()).to.deep.equal([200, 200, 200, 200, 200, 200, 200, 201]);
      expect(new Set(results.map((r) => r.body.data.id)).size).to.equal(1);
      expect((await outboxOf(em(), ws.id)).filter((e) => e.type === 'identity.created')).to.have.length(1);
    });
  });

  describe('get and delete by id', () => {
    it('GET returns it; DELETE 204 then 404, and GET 404', async () => {
      const ws = await fresh();
      const created = await clientFor(app, ws.key).upsertIdentity({ body: { externalId: 'gone' } });
      const id = created.data.id;
      // The client throws on an error; the contract check refuses any success but the documented 200.
      const got = await clientFor(app, ws.key).getIdentity({ params: { id } });
      expect(got.data).to.deep.equal(created.data);

      const del = await call(app.base, 'DELETE', `/identities/${id}`, { key: ws.key });
      expect(del.status).to.equal(204);
      expect(del.text).to.equal('');
      const again = await call(app.base, 'DELETE', `/identities/${id}`, { key: ws.key });
      expect(again.status).to.equal(404);
      expect(again.body.error).to.equal('not_found');
      expect((await call(app.base, 'GET', `/identities/${id}`, { key: ws.key })).status).to.equal(404);
    });
  });

  describe('bulk upsert', () => {
    it('creates up to 500 in one call: 201 with counts', async () => {
      const ws = await fresh();
      const identities = Array.from({ length: 500 }, (_, i) => ({ externalId: `b-${i}`, name: `Bulk ${i}` }));
      const res = await call<BulkResult>(app.base, 'POST', '/identities/bulk', {
        key: ws.key,
        body: { identities },
      });
      expect(res.status).to.equal(201);
      expect(res.body.data.created).to.equal(500);
      expect(res.body.data.updated).to.equal(0);
      expect(res.body.data.identities.map((i) => i.externalId)).to.deep.equal(
        identities.map((i) => i.externalId),
      );
      expect(await countIn(ws.id)).to.equal(500);
    });

    it('501 → 400 and nothing written', async () => {
      const ws = await fresh();
      const identities = Array.from({ length: 501 }, (_, i) => ({ externalId: `o-${i}` }));
      const res = await call<{ error: string; issues: { path: unknown[] }[] }>(
        app.base,
        'POST',
        '/identities/bulk',
        { key: ws.key, body: { identities } },
      );
      expect(res.status).to.equal(400);
      expect(res.body.error).to.equal('invalid_request');
      expect(res.body.issues.map((i) => i.path)).to.deep.include(['identities']);
      expect(await countIn(ws.id)).to.equal(0);
    });

    it('an empty list → 400', async () => {
      const ws = await fresh();
      const res = await call(app.base, 'POST', '/identities/bulk', { key: ws.key, body: { identities: [] } });
      expect(res.status).to.equal(400);
    });

    it('mixed: 201 with created/updated counts; a field left out keeps its value', async () => {
      const ws = await fresh();
      await clientFor(app, ws.key).upsertIdentity({
        body: { externalId: 'old-1', name: 'Old', email: 'old@example.com' },
      });
      const res = await call<BulkResult>(app.base, 'POST', '/identities/bulk', {
        key: ws.key,
        body: {
          identities: [
            { externalId: 'old-1', name: 'Old renamed' },
            { externalId: 'new-1' },
            { externalId: 'new-2', email: 'n2@example.com' },
          ],
        },
      });
      expect(res.status).to.equal(201);
      expect(res.body.data).to.include({ created: 2, updated: 1 });
      expect(res.body.data.identities[0]).to.include({
        externalId: 'old-1',
        name: 'Old renamed',
        email: 'old@example.com',
      });
    });

    it('all existing → 200 with created 0', async () => {
      const ws = await fresh();
      const body = { identities: [{ externalId: 'e-1' }, { externalId: 'e-2' }] };
      expect((await call(app.base, 'POST', '/identities/bulk', { key: ws.key, body })).status).to.equal(201);
      const again = await call<BulkResult>(app.base, 'POST', '/identities/bulk', { key: ws.key, body });
      expect(again.status).to.equal(200);
      expect(again.body.data).to.include({ created: 0, updated: 2 });
    });

    it('a repeated externalId → 400 naming it, and NOTHING is written (not even the other rows)', async () => {
      const ws = await fresh();
      const lectern = clientFor(app, ws.key);
      await lectern.upsertIdentity({ body: { externalId: 'exists', name: 'Before' } });
      const before = await outboxOf(em(), ws.id);
      const res = await call<{ error: string; message: string; issues: { path: unknown[] }[] }>(
        app.base,
        'POST',
        '/identities/bulk',
        {
          key: ws.key,
          body: {
            identities: [
              { externalId: 'fresh-1' },
              { externalId: 'exists', name: 'After' },
              { externalId: 'dup' },
              { externalId: 'dup' },
            ],
          },
        },
      );
      expect(res.status).to.equal(400);
      expect(res.body.error).to.equal('invalid_request');
      expect(res.body.message).to.include('dup');
      expect(res.body.issues.map((i) => i.path)).to.deep.include(['identities', 3, 'externalId']);
      expect(await countIn(ws.id)).to.equal(1);
      const list = await lectern.listIdentities();
      expect(list.data.map((i) => [i.externalId, i.name])).to.deep.equal([['exists', 'Before']]);
      expect(await outboxOf(em(), ws.id)).to.have.length(before.length);
    });
  });

  describe('bulk delete (keys in the body)', () => {
    async function seed(ws: TestWorkspace, n: number) {
      const res = await clientFor(app, ws.key).upsertIdentitiesInBulk({
        body: { identities: Array.from({ length: n }, (_, i) => ({ externalId: `d-${i}` })) },
      });
      return res.data.identities;
    }

    it('by externalIds: deleted counts only rows removed; unknown keys are not errors', async () => {
      const ws = await fresh();
      await seed(ws, 4);
      const res = await call<BulkDeleteResult>(app.base, 'DELETE', '/identities/bulk', {
        key: ws.key,
        body: { externalIds: ['d-0', 'd-1', 'nope'] },
      });
      expect(res.status).to.equal(200);
      expect(res.body.data.deleted).to.equal(2);
      expect(res.body.data.requested).to.equal(3);
      expect(res.body.data.identities.map((i) => i.externalId).sort()).to.deep.equal(['d-0', 'd-1']);
      expect(await countIn(ws.id)).to.equal(2);
    });

    it('by ids, and an already-gone id is not an error and not counted', async () => {
      const ws = await fresh();
      const rows = await seed(ws, 3);
      const first = await call<BulkDeleteResult>(app.base, 'DELETE', '/identities/bulk', {
        key: ws.key,
        body: { ids: [rows[0].id] },
      });
      expect(first.body.data.deleted).to.equal(1);
      const again = await call<BulkDeleteResult>(app.base, 'DELETE', '/identities/bulk', {
        key: ws.key,
        body: { ids: [rows[0].id, rows[1].id] },
      });
      expect(again.status).to.equal(200);
      expect(again.body.data.deleted).to.equal(1);
      expect(again.body.data.identities).to.deep.equal([{ id: rows[1].id, externalId: rows[1].externalId }]);
      const onlyGone = await call<BulkDeleteResult>(app.base, 'DELETE', '/identities/bulk', {
        key: ws.key,
        body: { ids: [rows[0].id] },
      });
      expect(onlyGone.status).to.equal(200);
      expect(onlyGone.body.data.deleted).to.equal(0);
    });

    it('ids and externalIds together; a row named twice is counted once', async () => {
      const ws = await fresh();
      const rows = await seed(ws, 4);
      const res = await clientFor(app, ws.key).deleteIdentitiesInBulk({
        body: { ids: [rows[0].id, rows[1].id], externalIds: [rows[1].externalId, rows[2].externalId] },
      });
      expect(res.data.deleted).to.equal(3);
      expect(await countIn(ws.id)).to.equal(1);
    });

    it('up to 500 keys; 501 → 400; none → 400', async () => {
      const ws = await fresh();
      await seed(ws, 2);
      const ok = await call<BulkDeleteResult>(app.base, 'DELETE', '/identities/bulk', {
        key: ws.key,
        body: {
          externalIds: Array.from({ length: 250 }, (_, i) => `d-${i}`),
          ids: Array.from({ length: 250 }, (_, i) => `idn_none_${i}`),
        },
      });
      expect(ok.status).to.equal(200);
      expect(ok.body.data.deleted).to.equal(2);
      const over = await call(app.base, 'DELETE', '/identities/bulk', {
        key: ws.key,
        body: {
          externalIds: Array.from({ length: 251 }, (_, i) => `x-${i}`),
          ids: Array.from({ length: 250 }, (_, i) => `y-${i}`),
        },
      });
      expect(over.status).to.equal(400);
      expect(over.body.error).to.equal('invalid_request');
      for (const body of [{}, { ids: [] }, { externalIds: [] }]) {
        const none = await call(app.base, 'DELETE', '/identities/bulk', { key: ws.key, body });
        expect(none.status, JSON.stringify(body)).to.equal(400);
      }
    });

    it('keys in the query string are not used', async () => {
      const ws = await fresh();
      await seed(ws, 1);
      const res = await call(app.base, 'DELETE', '/identities/bulk?externalIds=d-0', { key: ws.key });
      expect(res.status).to.equal(400);
      expect(await countIn(ws.id)).to.equal(1);
    });
  });

  describe('identity.created', () => {
    it('is written to the outbox on first creation only, with the SPEC payload', async () => {
      const ws = await fresh();
      const lectern = clientFor(app, ws.key);
      const created = await lectern.upsertIdentity({
        body: { externalId: 'ev-1', name: 'Eve', email: 'eve@example.com' },
      });
      await lectern.upsertIdentity({ body: { externalId: 'ev-1', name: 'Eve 2' } });
      const rows = await outboxOf(em(), ws.id);
      expect(rows).to.have.length(1);
      expect(rows[0].type).to.equal('identity.created');
      expect(rows[0].data).to.deep.equal({
        identity: { id: created.data.id, externalId: 'ev-1', name: 'Eve', email: 'eve@example.com' },
      });
    });

    it('bulk: one event per row actually created, none for updates', async () => {
      const ws = await fresh();
      const lectern = clientFor(app, ws.key);
      await lectern.upsertIdentity({ body: { externalId: 'pre' } });
      const res = await lectern.upsertIdentitiesInBulk({
        body: {
          identities: [
            { externalId: 'pre', name: 'Updated' },
            { externalId: 'bk-1', name: 'One' },
            { externalId: 'bk-2' },
          ],
        },
      });
      expect(res.data.created).to.equal(2);
      const rows = await outboxOf(em(), ws.id);
      expect(rows.map((r) => (r.data as Envelope['data']).identity.externalId).sort()).to.deep.equal([
        'bk-1',
        'bk-2',
        'pre',
      ]);
      const bk1 = res.data.identities.find((i) => i.externalId === 'bk-1')!;
      expect(
        rows.find((r) => (r.data as Envelope['data']).identity.externalId === 'bk-1')!.data,
      ).to.deep.equal({
        identity: { id: bk1.id, externalId: 'bk-1', name: 'One', email: null },
      });
      // A second identical bulk creates nothing, so it records nothing.
      await lectern.upsertIdentitiesInBulk({
        body: { identities: [{ externalId: 'bk-1' }, { externalId: 'bk-2' }] },
      });
      expect(await outboxOf(em(), ws.id)).to.have.length(3);
    });

    it('is published to the EVENTS stream once per event id, with the envelope', async () => {
      const ws = await fresh();
      const lectern = clientFor(app, ws.key);
      const single = await lectern.upsertIdentity({ body: { externalId: 'js-1', name: 'Jet' } });
      await lectern.upsertIdentitiesInBulk({
        body: { identities: [{ externalId: 'js-2' }, { externalId: 'js-3', email: 'j3@example.com' }] },
      });
      const rows = await waitFor(
        async () => {
          const r = await outboxOf(em(), ws.id);
          return r.length === 3 && r.every((x) => x.published_at) ? r : null;
        },
        { what: 'the relay to publish 3 events' },
      );

      const cfg = testConfig();
      const messages = await readStream<Envelope>(
        cfg.NATS_URL,
        `${cfg.BUS_PREFIX}_EVENTS`,
        `${cfg.BUS_PREFIX}.events.identity.created`,
      );
      const mine = messages.filter((m) => m.body.workspaceId === ws.id);
      expect(mine).to.have.length(3);
      expect(mine.map((m) => m.body.id).sort()).to.deep.equal(rows.map((r) => r.id).sort());
      for (const m of mine) {
        expect(m.subject).to.equal(`${cfg.BUS_PREFIX}.events.identity.created`);
        expect(m.msgId).to.equal(m.body.id);
        expect(m.body).to.have.all.keys('id', 'type', 'createdAt', 'workspaceId', 'data');
        expect(m.body.type).to.equal('identity.created');
        expect(m.body.createdAt).to.match(ISO_MS);
        expect(m.body.data).to.have.all.keys('identity');
        expect(m.body.data.identity).to.have.all.keys('id', 'externalId', 'name', 'email');
      }
      const js1 = mine.find((m) => m.body.data.identity.externalId === 'js-1')!;
      expect(js1.body.data.identity).to.deep.equal({
        id: single.data.id,
        externalId: 'js-1',
        name: 'Jet',
        email: null,
      });
    });
  });
});
