import { expect } from 'chai';
import { boundQuery } from '@lectern/db';
import { lazyPlayerKeys } from '@lectern/api';
import { usageMonth } from '@lectern/plans';
import { FIRST_TRACKING_VERSION, countView, getUsage, uncountView, usageDay } from '@lectern/learner-runs';
import type { OpenRunResult, PlayerSettingsDto, UsageDto } from '@lectern/contracts';
import { makeWorkspace, type TestWorkspace } from '../support/context.js';
import { startCustomApp, outboxOf, type CustomApp } from '../support/spine.js';
import { api, expectIssue } from '../support/authoring.js';
import { call } from '../support/http.js';
import { anonymousId, createEmbedKey, playerApi, publishedCourse, signIdentity } from '../support/player.js';

/**
 * Issue 20 point 3: who may spend a workspace's views. Allowed origins (embed framing and run opens), the switch
 * that refuses anonymous runs, the anonymous limits that leave signed learners alone, and the views per day.
 * Every refusal counts nothing: no view, no row, no course.viewed.
 */
describe('learner runs: who may open runs and spend views (issue 20)', () => {
  let app: CustomApp;
  let player: ReturnType<typeof playerApi>;
  before(async () => {
    app = await startCustomApp();
    player = playerApi(app.url);
  });
  after(async () => app?.close());
  const em = () => app.rt.orm.em.fork();

  const OWN_ORIGIN = 'http://lectern.test'; // PUBLIC_URL of the test configuration
  const SCHOOL = 'https://school.example';

  async function setup(plan: 'sandbox' | 'scale' = 'scale') {
    const ws = await makeWorkspace(em(), plan);
    const courseId = await publishedCourse(app.base, ws.key);
    return { ws, courseId, req: api(app.base, ws.key) };
  }
  const settle = async (ws: TestWorkspace, body: Record<string, unknown>) => {
    const res = await api(app.base, ws.key)<PlayerSettingsDto>('PATCH', '/settings/player', body);
    expect(res.status, res.text).to.equal(200);
    return res.body.data;
  };
  const open = (body: Record<string, unknown>, origin?: string) =>
    player<OpenRunResult>('POST', '/runs', { body, headers: origin ? { origin } : {} });
  const views = async (wsId: string) =>
    Number(
      (
        await boundQuery<{ count: string }>(
          em(),
          `select count from usage_counters where workspace_id = ? and month = ? and metric = 'views'`,
          [wsId, usageMonth()],
        )
      )[0]?.count ?? 0,
    );
  /** Views, completion rows and course.viewed events of a workspace: what a refused open must leave alone. */
  const spent = async (wsId: string) => ({
    views: await views(wsId),
    runs: (await boundQuery(em(), 'select id from completions where workspace_id = ?', [wsId])).length,
    viewed: (await outboxOf(em(), wsId)).filter((e) => e.type === 'course.viewed').length,
  });

  describe('player settings (GET/PATCH /api/v1/settings/player)', () => {
    it('defaults to any origin and anonymous runs; PATCH normalises origins, keeps absent fields, null resets', async () => {
      const { ws, req } = await setup();
      const got = await req<PlayerSettingsDto>('GET', '/settings/player');
      expect(got.status).to.equal(200);
      expect(got.body.data).to.deep.equal({ allowedOrigins: null, anonymousRuns: true });
      const set = await settle(ws, {
        allowedOrigins: [
          'HTTPS://School.Example:443',
          'https://*.lms.example',
          'http://localhost:8080',
          SCHOOL,
        ],
      });
      expect(set).to.deep.equal({
        allowedOrigins: [SCHOOL, 'https://*.lms.example', 'http://localhost:8080'],
        anonymousRuns: true,
      });
      expect(await settle(ws, { anonymousRuns: false })).to.deep.equal({ ...set, anonymousRuns: false });
      expect(
        (await req<PlayerSettingsDto>('GET', '/settings/player')).body.data.allowedOrigins,
      ).to.have.length(3);
      expect(await settle(ws, { allowedOrigins: null })).to.deep.equal({
        allowedOrigins: null,
        anonymousRuns: false,
      });
      // Another workspace is untouched.
      const other = await setup();
      expect((await other.req<PlayerSettingsDto>('GET', '/settings/player')).body.data).to.deep.equal({
        allowedOrigins: null,
        anonymousRuns: true,
      });
    });

    it('refuses what is not an origin (400 with the index), unknown fields, too many, and read-only keys', async () => {
      const { ws, req } = await setup();
      for (const bad of [
        'https://a.example/path',
        'ftp://a.example',
        '*',
        'a.example',
        'https://*',
        'https://u@a.example',
      ]) {
        const res = await req('PATCH', '/settings/player', { allowedOrigins: [SCHOOL, bad] });
        expect(res.status, bad).to.equal(400);
        expectIssue(res, ['allowedOrigins', 1]);
      }
      expect((await req('PATCH', '/settings/player', { allowedOrigin: [SCHOOL] })).status).to.equal(400);
      const many = Array.from({ length: 101 }, (_, i) => `https://s${i}.example`);
      expect((await req('PATCH', '/settings/player', { allowedOrigins: many })).status).to.equal(400);
      const readOnly = await api(app.base, ws.readKey)('PATCH', '/settings/player', { anonymousRuns: false });
      expect(readOnly.status).to.equal(403);
      expect((await req<PlayerSettingsDto>('GET', '/settings/player')).body.data).to.deep.equal({
        allowedOrigins: null,
        anonymousRuns: true,
      });
    });
  });

  describe('allowed origins', () => {
    it('a foreign origin (or none) is refused with 403 origin_not_allowed and counts nothing; listed ones open', async () => {
      const { ws, courseId } = await setup();
      const ek = await createEmbedKey(app.base, ws.key);
      const keys = lazyPlayerKeys(app.rt.cfg)();
      const tracking = await keys.tracking.sign({
        courseId,
        workspaceId: ws.id,
        version: FIRST_TRACKING_VERSION,
      });
      // No list: any origin, as before.
      expect((await open({ courseId, anonymousId: anonymousId(1) }, 'https://evil.example')).status).to.equal(
        201,
      );
      await settle(ws, { allowedOrigins: [SCHOOL, 'https://*.lms.example'] });
      const before = await spent(ws.id);
      const refusedBodies = [
        { courseId, anonymousId: anonymousId(2) },
        { courseId, identity: await signIdentity(ek, {}, { sub: 'learner-9' }) },
        { courseId, tracking: { token: tracking, learnerId: 'lms-1' } },
      ];
      for (const body of refusedBodies)
        for (const origin of [
          'https://evil.example',
          'https://lms.example',
          'http://school.example',
          'null',
          undefined,
        ]) {
          const res = await open(body, origin);
          expect(res.status, `${origin} ${Object.keys(body).join()}`).to.equal(403);
          expect(res.body.error).to.equal('origin_not_allowed');
        }
      expect(await spent(ws.id)).to.deep.equal(before);

      for (const [i, origin] of [
        SCHOOL,
        'https://moodle.lms.example',
        'https://a.b.lms.example',
        OWN_ORIGIN,
      ].entries())
        expect((await open({ courseId, anonymousId: anonymousId(10 + i) }, origin)).status, origin).to.equal(
          201,
        );
      // A SCORM package in a listed LMS reports as before.
      expect(
        (
          await open(
            { courseId, tracking: { token: tracking, learnerId: 'lms-1' } },
            'https://moodle.lms.example',
          )
        ).status,
      ).to.equal(201);
      expect((await spent(ws.id)).views).to.equal(before.views + 5);
    });

    it("the embed page sends frame-ancestors from the workspace's list (any site without one)", async () => {
      const { ws, courseId } = await setup();
      /** The frame-ancestors directive of the embed page's Content-Security-Policy (the rest is the page's own). */
      const ancestors = async () => {
        const res = await call(app.url, 'GET', `/embed/${courseId}`);
        expect(res.status).to.equal(200);
        const csp = res.headers.get('content-security-policy') ?? '';
        expect(csp).to.include("script-src 'self'");
        return csp
          .split(';')
          .map((d) => d.trim())
          .filter((d) => d.startsWith('frame-ancestors'));
      };
      expect(await ancestors()).to.deep.equal(['frame-ancestors *']);
      await settle(ws, { allowedOrigins: [SCHOOL, 'https://*.lms.example'] });
      expect(await ancestors()).to.deep.equal([`frame-ancestors 'self' ${SCHOOL} https://*.lms.example`]);
      await settle(ws, { allowedOrigins: [] });
      expect(await ancestors()).to.deep.equal(["frame-ancestors 'self'"]);
    });

    it('the Sandbox lockout (402) cannot be reached from a foreign origin', async () => {
      const { ws, courseId } = await setup('sandbox');
      await settle(ws, { allowedOrigins: [SCHOOL] });
      await boundQuery(
        em(),
        `insert into usage_counters (workspace_id, month, metric, count) values (?, ?, 'views', 490)`,
        [ws.id, usageMonth()],
      );
      const flood = await Promise.all(
        Array.from({ length: 40 }, (_, i) =>
          open({ courseId, anonymousId: anonymousId(100 + i) }, 'https://evil.example'),
        ),
      );
      expect(flood.map((r) => r.status)).to.deep.equal(Array(40).fill(403));
      expect(await views(ws.id)).to.equal(490);
      // The workspace still serves: its API, its embed page and its learners.
      expect((await call(app.base, 'GET', '/completions', { key: ws.key })).status).to.equal(200);
      expect((await call(app.url, 'GET', `/embed/${courseId}`)).status).to.equal(200);
      expect((await open({ courseId, anonymousId: anonymousId(1) }, SCHOOL)).status).to.equal(201);
      expect(await views(ws.id)).to.equal(491);
    });
  });

  describe('anonymous runs switched off', () => {
    it('an anonymous open answers 401 and counts nothing; signed learners and tracked packages still open', async () => {
      const { ws, courseId } = await setup();
      const ek = await createEmbedKey(app.base, ws.key);
      const resumed = (await open({ courseId, anonymousId: anonymousId(1) })).body.data;
      expect(resumed.completion.id).to.be.a('string');
      await settle(ws, { anonymousRuns: false });
      const before = await spent(ws.id);
      for (const id of [anonymousId(1), anonymousId(2)]) {
        const res = await open({ courseId, anonymousId: id });
        expect(res.status).to.equal(401);
        expect(res.body.error).to.equal('unauthorized');
        expect(res.body.message).to.match(/signed/);
      }
      expect(await spent(ws.id)).to.deep.equal(before);
      expect((await open({ courseId, identity: await signIdentity(ek) })).status).to.equal(201);
      const keys = lazyPlayerKeys(app.rt.cfg)();
      const tracking = await keys.tracking.sign({
        courseId,
        workspaceId: ws.id,
        version: FIRST_TRACKING_VERSION,
      });
      expect((await open({ courseId, tracking: { token: tracking, learnerId: 'lms-7' } })).status).to.equal(
        201,
      );
      expect((await spent(ws.id)).views).to.equal(before.views + 2);
      await settle(ws, { anonymousRuns: true });
      expect((await open({ courseId, anonymousId: anonymousId(2) })).status).to.equal(201);
    });
  });

  describe('views per day (GET /api/v1/usage)', () => {
    it("shows this month's views and today's, refused opens not among them", async function () {
      const { ws, courseId, req } = await setup();
      const dayBefore = usageDay(new Date());
      for (let i = 0; i < 3; i++)
        expect((await open({ courseId, anonymousId: anonymousId(i) })).status).to.equal(201);
      await settle(ws, { anonymousRuns: false });
      expect((await open({ courseId, anonymousId: anonymousId(9) })).status).to.equal(401);
      const res = await req<UsageDto>('GET', '/usage');
      // The opens and the answer on two UTC days (midnight between them): what "today" means is ambiguous.
      if (usageDay(new Date()) !== dayBefore) this.skip();
      expect(res.status, res.text).to.equal(200);
      const usage = res.body.data;
      expect(usage.month).to.equal(dayBefore.slice(0, 7));
      expect(usage.views).to.equal(3);
      expect(usage.viewsAllowance).to.equal(150_000);
      expect(usage.hardCap).to.equal(false);
      expect(usage.days).to.have.length(Number(dayBefore.slice(8)));
      expect(usage.days.at(-1)).to.deep.equal({ date: dayBefore, views: 3 });
      expect(usage.days.reduce((n, d) => n + d.views, 0)).to.equal(3);
      // Another workspace sees its own.
      const other = await setup('sandbox');
      const theirs = (await other.req<UsageDto>('GET', '/usage')).body.data;
      expect(theirs.views).to.equal(0);
      expect(theirs).to.include({ viewsAllowance: 500, hardCap: true });
    });

    it('counts each view on its UTC day with the month, gives back a failed open on its day (injected clock)', async () => {
      const ws = await makeWorkspace(em(), 'sandbox');
      const access = { id: ws.id, plan: 'sandbox' as const, billingStatus: 'ok' as const, graceUntil: null };
      const d3 = new Date('2031-03-03T23:59:59.999Z');
      const d4 = new Date('2031-03-04T00:00:00.000Z');
      await countView(em(), access, d3);
      await countView(em(), access, d3);
      await countView(em(), access, d4);
      await uncountView(em(), access, d3);
      const usage = await getUsage(em(), { id: ws.id, plan: 'sandbox' }, new Date('2031-03-05T12:00:00Z'));
      expect(usage).to.deep.equal({
        month: '2031-03',
        views: 2,
        viewsAllowance: 500,
        hardCap: true,
        days: [
          { date: '2031-03-01', views: 0 },
          { date: '2031-03-02', views: 0 },
          { date: '2031-03-03', views: 1 },
          { date: '2031-03-04', views: 1 },
          { date: '2031-03-05', views: 0 },
        ],
      });
      // A view the Sandbox cap refuses is counted on no day either.
      await boundQuery(
        em(),
        `update usage_counters set count = 500 where workspace_id = ? and month = '2031-03'`,
        [ws.id],
      );
      let refused: unknown;
      await countView(em(), access, d4).catch((e: unknown) => (refused = e));
      expect(refused).to.have.property('code', 'plan_blocked');
      const after = await getUsage(em(), { id: ws.id, plan: 'sandbox' }, d4);
      expect(after.days.at(-1)).to.deep.equal({ date: '2031-03-04', views: 1 });
    });
  });
});

describe('learner runs: anonymous open limits that cannot lock out a workspace (issue 20)', () => {
  const clearWindows = (app: CustomApp) =>
    app.rt.orm.em.fork().getConnection().execute('delete from player_rate');

  it('limits anonymous opens per anonymousId and per address (429), never signed opens from that address', async () => {
    const app = await startCustomApp({
      PLAYER_ANONYMOUS_OPENS_PER_MINUTE_PER_ADDRESS: '5',
      PLAYER_ANONYMOUS_OPENS_PER_MINUTE_PER_ID: '2',
    });
    try {
      const ws = await makeWorkspace(app.rt.orm.em.fork(), 'scale');
      const courseId = await publishedCourse(app.base, ws.key);
      const ek = await createEmbedKey(app.base, ws.key);
      const player = playerApi(app.url);
      const open = (body: Record<string, unknown>) => player<OpenRunResult>('POST', '/runs', { body });
      await clearWindows(app);
      // One anonymousId: 2 a minute.
      expect((await open({ courseId, anonymousId: anonymousId(1) })).status).to.equal(201);
      expect((await open({ courseId, anonymousId: anonymousId(1) })).status).to.equal(200);
      const sameId = await open({ courseId, anonymousId: anonymousId(1) });
      expect(sameId.status).to.equal(429);
      expect(sameId.body.message).to.match(/anonymousId/);
      expect(Number(sameId.headers.get('retry-after'))).to.be.within(1, 60);
      // The address: 5 anonymous opens a minute, whatever the ids (the refused one above counted too).
      expect((await open({ courseId, anonymousId: anonymousId(2) })).status).to.equal(201);
      expect((await open({ courseId, anonymousId: anonymousId(3) })).status).to.equal(201);
      const address = await open({ courseId, anonymousId: anonymousId(4) });
      expect(address.status).to.equal(429);
      expect(address.body.message).to.match(/address/);
      const viewsNow = (
        await boundQuery<{ count: string }>(
          app.rt.orm.em.fork(),
          `select count from usage_counters where workspace_id = ? and metric = 'views'`,
          [ws.id],
        )
      )[0].count;
      expect(Number(viewsNow)).to.equal(4);
      // Signed learners behind the same address are not limited by any of it.
      for (let i = 0; i < 20; i++)
        expect(
          (await open({ courseId, identity: await signIdentity(ek, {}, { sub: `staff-${i}` }) })).status,
        ).to.equal(201);
    } finally {
      await app.close();
    }
  });

  it('with the production defaults, 1,000 signed opens from one address pass while anonymous ones stop at 60', async function () {
    this.timeout(120_000);
    const app = await startCustomApp({
      PLAYER_ANONYMOUS_OPENS_PER_MINUTE_PER_ADDRESS: '60',
      PLAYER_ANONYMOUS_OPENS_PER_MINUTE_PER_ID: '10',
    });
    try {
      const ws = await makeWorkspace(app.rt.orm.em.fork(), 'scale');
      const courseId = await publishedCourse(app.base, ws.key);
      const ek = await createEmbedKey(app.base, ws.key);
      const player = playerApi(app.url);
      const tokens = await Promise.all(
        Array.from({ length: 1000 }, (_, i) => signIdentity(ek, {}, { sub: `office-${i}` })),
      );
      await clearWindows(app);
      const anonymous: number[] = [];
      for (let i = 0; i < 61; i++)
        anonymous.push(
          (await player('POST', '/runs', { body: { courseId, anonymousId: anonymousId(5000 + i) } })).status,
        );
      expect(anonymous.slice(0, 60).every((s) => s === 201)).to.equal(true);
      expect(anonymous[60]).to.equal(429);
      const statuses: number[] = [];
      let next = 0;
      await Promise.all(
        Array.from({ length: 16 }, async () => {
          while (next < tokens.length) {
            const identity = tokens[next++];
            statuses.push((await player('POST', '/runs', { body: { courseId, identity } })).status);
          }
        }),
      );
      expect(statuses).to.have.length(1000);
      expect(statuses.filter((s) => s !== 201)).to.deep.equal([]);
    } finally {
      await app.close();
    }
  });
});
