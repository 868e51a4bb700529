import { expect } from 'chai';
import { z } from 'zod';
import { makeWorkspace, type TestWorkspace } from '../support/context.js';
import { call } from '../support/http.js';
import { startCustomApp, type CustomApp } from '../support/spine.js';
import { boundQuery } from '@lectern/db';
import { setBilling, setPlan } from '@lectern/admin';
import { requireFeature, usageMonth } from '@lectern/plans';
import type { PlanName } from '@lectern/db';

describe('spine: plans over the API (SPEC "Limits")', () => {
  let app: CustomApp;
  before(async () => {
    app = await startCustomApp({}, ({ api }) => {
      api.route(
        {
          method: 'get',
          path: '/__test/themes-gate',
          operationId: 'getTestThemesGate',
          summary: 'a Scale feature',
          description: 'Registered by this test only.',
          tags: ['Health'],
          responses: { 200: { description: 'ok', schema: z.unknown() } },
        },
        (ctx) => {
          requireFeature(ctx.state.auth.workspace.plan, 'themes');
          ctx.body = { data: { ok: true } };
        },
      );
    });
  });
  after(async () => app?.close());
  const em = () => app.rt.orm.em.fork();

  /** Every keyed route registered on the API router, with made-up path parameters. */
  const everyEndpoint = () =>
    app.built.api.specs
      .filter((s) => s.auth !== 'public' && !s.path.startsWith('/__test'))
      .map((s) => ({
        method: s.method.toUpperCase(),
        path: s.path.replace(/:[A-Za-z0-9_]+/g, 'idn_x'),
        body: s.body ? {} : undefined,
      }));

  async function expectAll402(ws: TestWorkspace) {
    const endpoints = everyEndpoint();
    expect(endpoints.length).to.be.greaterThan(5);
    for (const e of endpoints) {
      for (const key of e.method === 'GET' ? [ws.key, ws.readKey] : [ws.key]) {
        const res = await call(app.base, e.method, e.path, { key, body: e.body });
        expect(res.status, `${e.method} ${e.path}: ${res.text}`).to.equal(402);
        expect(res.body.error).to.equal('plan_required');
        expect(res.body.message).to.be.a('string').and.not.equal('');
      }
    }
  }

  async function setViews(workspaceId: string, count: number, month = usageMonth(), metric = 'views') {
    await boundQuery(
      em(),
      `insert into usage_counters (workspace_id, month, metric, count) values (?, ?, ?, ?)
       on conflict (workspace_id, month, metric) do update set count = excluded.count`,
      [workspaceId, month, metric, count],
    );
  }

  describe('402: a Sandbox workspace past its monthly view allowance', () => {
    it('at 499 views everything works', async () => {
      const ws = await makeWorkspace(em(), 'sandbox');
      await setViews(ws.id, 499);
      expect((await call(app.base, 'GET', '/me', { key: ws.key })).status).to.equal(200);
      expect(
        (await call(app.base, 'POST', '/identities', { key: ws.key, body: { externalId: 'ok' } })).status,
      ).to.equal(201);
    });

    it('at 500 views every endpoint answers 402 plan_required', async () => {
      const ws = await makeWorkspace(em(), 'sandbox');
      await setViews(ws.id, 500);
      await expectAll402(ws);
      const me = await call(app.base, 'GET', '/me', { key: ws.key });
      expect(me.body.message).to.match(/Build/);
    });

    it("last month's views and other metrics do not count", async () => {
      const ws = await makeWorkspace(em(), 'sandbox');
      const now = new Date();
      const lastMonth = usageMonth(new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - 1, 15)));
      await setViews(ws.id, 100_000, lastMonth);
      await setViews(ws.id, 100_000, usageMonth(), 'generations');
      expect((await call(app.base, 'GET', '/me', { key: ws.key })).status).to.equal(200);
    });

    it('paid plans are not cut off for overage; upgrading lifts the 402 at once', async () => {
      for (const plan of ['build', 'scale', 'partner'] as PlanName[]) {
        const ws = await makeWorkspace(em(), plan);
        await setViews(ws.id, 2_000_000);
        expect((await call(app.base, 'GET', '/me', { key: ws.key })).status, plan).to.equal(200);
      }
      const ws = await makeWorkspace(em(), 'sandbox');
      await setViews(ws.id, 600);
      expect((await call(app.base, 'GET', '/me', { key: ws.key })).status).to.equal(402);
      await setPlan(em(), ws.id, 'build');
      expect((await call(app.base, 'GET', '/me', { key: ws.key })).status).to.equal(200);
    });

    it('an unknown key is still 401, not 402', async () => {
      const res = await call(app.base, 'GET', '/me', { key: `lk_${'Z'.repeat(40)}` });
      expect(res.status).to.equal(401);
    });
  });

  describe('402: an unpaid invoice past its grace period', () => {
    it('grace in the past → 402 on every endpoint; in the future → fine; paid → fine again', async () => {
      const ws = await makeWorkspace(em(), 'scale');
      await setBilling(em(), ws.id, { pastDue: true, graceUntil: new Date(Date.now() + 3_600_000) });
      expect((await call(app.base, 'GET', '/me', { key: ws.key })).status, 'within grace').to.equal(200);

      await setBilling(em(), ws.id, { pastDue: true, graceUntil: new Date(Date.now() - 1000) });
      await expectAll402(ws);

      await setBilling(em(), ws.id, { pastDue: false });
      expect((await call(app.base, 'GET', '/me', { key: ws.key })).status, 'paid').to.equal(200);
      expect(
        (await call(app.base, 'POST', '/identities', { key: ws.key, body: { externalId: 'paid' } })).status,
      ).to.equal(201);
    });
  });

  describe('403 plan_required for a feature above the plan', () => {
    it('names the plan needed; the plan that has it passes', async () => {
      for (const plan of ['sandbox', 'build'] as PlanName[]) {
        const ws = await makeWorkspace(em(), plan);
        const res = await call(app.base, 'GET', '/__test/themes-gate', { key: ws.key });
        expect(res.status, plan).to.equal(403);
        expect(res.body.error).to.equal('plan_required');
        expect(res.body.message).to.include('Scale');
      }
      for (const plan of ['scale', 'partner'] as PlanName[]) {
        const ws = await makeWorkspace(em(), plan);
        expect((await call(app.base, 'GET', '/__test/themes-gate', { key: ws.key })).status, plan).to.equal(
          200,
        );
      }
    });
  });
});
