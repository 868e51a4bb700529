import { expect } from 'chai';
import { makeWorkspace, startTestApp, type TestApp, type TestWorkspace } from '../support/context.js';
import { call } from '../support/http.js';
import { boundQuery } from '@lectern/db';
import { createKey } from '@lectern/admin';

interface Page {
  data: { id: string; externalId: string; name: string | null; email: string | null; createdAt: string }[];
  pagination: { limit: number; offset: number; total: number; hasMore: boolean };
}

describe('spine: paging and search on GET /identities (SPEC "Paging rules")', () => {
  let app: TestApp;
  before(async () => {
    app = await startTestApp();
  });
  after(async () => app?.close());
  const em = () => app.rt.orm.em.fork();
  const page = (key: string, qs: string) => call<Page>(app.base, 'GET', `/identities${qs}`, { key });

  describe('a workspace with 10,001 identities', () => {
    let ws: TestWorkspace;
    let key: string;
    const TOTAL = 10_001;
    before(async function () {
      this.timeout(30_000);
      ws = await makeWorkspace(em(), 'scale', 'Big');
      // ext-000001 is the newest, ext-010001 the oldest.
      await boundQuery(
        em(),
        `insert into identities (id, workspace_id, external_id, name, email, created_at, updated_at)
         select 'idn_p' || lpad(g::text, 6, '0'), ?, 'ext-' || lpad(g::text, 6, '0'), 'Name ' || g, null,
                now() - g * interval '1 second', now()
           from generate_series(1, ?) g`,
        [ws.id, TOTAL],
      );
    });
    // The rows are a shared read-only fixture; every test still uses a key of its own.
    beforeEach(async () => {
      key = (await createKey(em(), ws.id, 'read')).key;
    });

    it('no limit → the default 50, newest first, with pagination', async () => {
      const res = await page(key, '');
      expect(res.status).to.equal(200);
      expect(res.body.data).to.have.length(50);
      expect(res.body.pagination).to.deep.equal({ limit: 50, offset: 0, total: TOTAL, hasMore: true });
      expect(res.body.data[0].externalId).to.equal('ext-000001');
      expect(res.body.data[49].externalId).to.equal('ext-000050');
    });

    it('limit=10000 is served in full (the maximum)', async () => {
      const res = await page(key, '?limit=10000');
      expect(res.status).to.equal(200);
      expect(res.body.data).to.have.length(10_000);
      expect(res.body.pagination).to.deep.equal({ limit: 10_000, offset: 0, total: TOTAL, hasMore: true });
      expect(res.body.data[9999].externalId).to.equal('ext-010000');
    });

    it('limit above the maximum is served at the maximum, not refused', async () => {
      for (const limit of ['20000', '999999999999']) {
        const res = await page(key, `?limit=${limit}`);
        expect(res.status, limit).to.equal(200);
        expect(res.body.pagination.limit, limit).to.equal(10_000);
        expect(res.body.data, limit).to.have.length(10_000);
      }
    });

    it('the last page: offset past the maximum page, hasMore false', async () => {
      const res = await page(key, '?limit=20000&offset=10000');
      expect(res.body.data.map((i) => i.externalId)).to.deep.equal(['ext-010001']);
      expect(res.body.pagination).to.deep.equal({
        limit: 10_000,
        offset: 10_000,
        total: TOTAL,
        hasMore: false,
      });
    });

    it('nonsense limits fall back to 50 (never an error)', async () => {
      for (const limit of ['abc', '-5', '0', '1.5', '', '1e3', '0x10', '%20', '10abc', 'null', '-0']) {
        const res = await page(key, `?limit=${limit}`);
        expect(res.status, `limit=${limit}: ${res.text.slice(0, 200)}`).to.equal(200);
        expect(res.body.pagination.limit, `limit=${limit}`).to.equal(50);
        expect(res.body.data, `limit=${limit}`).to.have.length(50);
      }
    });

    it('a repeated limit parameter is not an error either', async () => {
      const res = await page(key, '?limit=3&limit=7');
      expect(res.status).to.equal(200);
      expect(res.body.pagination.limit).to.equal(3);
    });

    it('nonsense offsets fall back to 0', async () => {
      for (const offset of ['abc', '-5', '1.5']) {
        const res = await page(key, `?limit=2&offset=${offset}`);
        expect(res.status).to.equal(200);
        expect(res.body.pagination.offset, `offset=${offset}`).to.equal(0);
        expect(res.body.data[0].externalId).to.equal('ext-000001');
      }
    });
  });

  describe('offset, hasMore and total on a small workspace', () => {
    it('pages concatenate to the full newest-first list', async () => {
      const ws = await makeWorkspace(em());
      const created: string[] = [];
      for (let i = 1; i <= 7; i++) {
        const r = await call<{ data: { id: string } }>(app.base, 'POST', '/identities', {
          key: ws.key,
          body: { externalId: `s-${i}` },
        });
        expect(r.status).to.equal(201);
        created.push(r.body.data.id);
      }
      const newestFirst = [...created].reverse();
      const all = await page(ws.key, '');
      expect(all.body.data.map((i) => i.id)).to.deep.equal(newestFirst);
      expect(all.body.pagination).to.deep.equal({ limit: 50, offset: 0, total: 7, hasMore: false });

      const seen: string[] = [];
      const expectMore = [true, true, false];
      for (const [n, offset] of [0, 3, 6].entries()) {
        const res = await page(ws.key, `?limit=3&offset=${offset}`);
        expect(res.body.pagination).to.deep.equal({ limit: 3, offset, total: 7, hasMore: expectMore[n] });
        seen.push(...res.body.data.map((i) => i.id));
      }
      expect(seen).to.deep.equal(newestFirst);

      const exact = await page(ws.key, '?limit=7');
      expect(exact.body.pagination.hasMore).to.equal(false);
      const oneShort = await page(ws.key, '?limit=6');
      expect(oneShort.body.pagination.hasMore).to.equal(true);

      const past = await page(ws.key, '?offset=100');
      expect(past.status).to.equal(200);
      expect(past.body.data).to.deep.equal([]);
      expect(past.body.pagination).to.deep.equal({ limit: 50, offset: 100, total: 7, hasMore: false });
    });

    it('an empty workspace pages to nothing', async () => {
      const ws = await makeWorkspace(em());
      const res = await page(ws.readKey, '');
      expect(res.body).to.deep.equal({
        data: [],
        pagination: { limit: 50, offset: 0, total: 0, hasMore: false },
      });
    });
  });

  describe('search', () => {
    let ws: TestWorkspace;
    let key: string;
    before(async () => {
      ws = await makeWorkspace(em(), 'build', 'Search');
      const people = [
        { externalId: 'u-1', name: 'Ada Lovelace', email: 'ada@example.com' },
        { externalId: 'u-2', name: 'Grace Hopper', email: 'grace@NAVY.mil' },
        { externalId: 'ADA-77', name: 'Someone Else', email: 'someone@example.org' },
        { externalId: 'pct', name: '100% Sure' },
        { externalId: 'pctx', name: '100X Sure' },
        { externalId: 'snake_case', name: 'Underscore' },
        { externalId: 'snakeXcase', name: 'No underscore' },
        { externalId: 'back\\slash', name: 'Backslash' },
      ];
      for (const p of people)
        expect((await call(app.base, 'POST', '/identities', { key: ws.key, body: p })).status).to.equal(201);
    });
    beforeEach(async () => {
      key = (await createKey(em(), ws.id, 'read')).key;
    });
    const search = async (term: string, extra = '') => {
      const res = await page(key, `?search=${encodeURIComponent(term)}${extra}`);
      expect(res.status, res.text).to.equal(200);
      return res.body;
    };
    const ids = (b: Page) => b.data.map((i) => i.externalId);

    it('matches name, email and external id, case-insensitively, newest first', async () => {
      expect(ids(await search('ada'))).to.deep.equal(['ADA-77', 'u-1']);
      expect(ids(await search('LOVELACE'))).to.deep.equal(['u-1']);
      expect(ids(await search('navy.MIL'))).to.deep.equal(['u-2']);
      expect(ids(await search('example.org'))).to.deep.equal(['ADA-77']);
      expect(ids(await search('u-2'))).to.deep.equal(['u-2']);
      expect(ids(await search('nobody-matches-this'))).to.deep.equal([]);
    });

    it('% and _ are literal characters, not wildcards', async () => {
      expect(ids(await search('%'))).to.deep.equal(['pct']);
      expect(ids(await search('100%'))).to.deep.equal(['pct']);
      expect(ids(await search('_'))).to.deep.equal(['snake_case']);
      expect(ids(await search('e_c'))).to.deep.equal(['snake_case']);
      expect(ids(await search('\\'))).to.deep.equal(['back\\slash']);
    });

    it('search results are paged with a filtered total', async () => {
      const first = await search('Sure', '&limit=1');
      expect(first.pagination).to.deep.equal({ limit: 1, offset: 0, total: 2, hasMore: true });
      expect(ids(first)).to.deep.equal(['pctx']);
      const second = await search('Sure', '&limit=1&offset=1');
      expect(second.pagination).to.deep.equal({ limit: 1, offset: 1, total: 2, hasMore: false });
      expect(ids(second)).to.deep.equal(['pct']);
    });

    it('an empty search lists everything', async () => {
      expect((await search('')).pagination.total).to.equal(8);
    });
  });
});
