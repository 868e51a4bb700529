import { expect } from 'chai';
import { makeWorkspace, startTestApp, type TestApp } from '../support/context.js';
import { call, type Res } from '../support/http.js';
import { boundQuery } from '@lectern/db';

function expectLimited(res: Res) {
  expect(res.status, res.text).to.equal(429);
  expect(res.body.error).to.equal('rate_limited');
  expect(res.body.message).to.be.a('string');
  const retry = res.headers.get('retry-after');
  expect(retry, 'Retry-After header').to.match(/^\d+$/);
  expect(Number(retry)).to.be.within(1, 60);
}

describe('spine: rate limit per key per rolling minute, shared by every API process', () => {
  describe('at the default of 120', () => {
    let a: TestApp;
    let b: TestApp;
    before(async () => {
      [a, b] = await Promise.all([startTestApp(), startTestApp()]);
      expect(a.rt.cfg.RATE_LIMIT_PER_MINUTE).to.equal(120);
    });
    after(async () => Promise.all([a?.close(), b?.close()]));

    it('120 requests alternating between two instances pass; the 121st gets 429 with Retry-After; other keys are unaffected', async function () {
      this.timeout(30_000);
      const ws = await makeWorkspace(a.rt.orm.em.fork());
      const other = await makeWorkspace(a.rt.orm.em.fork());
      for (let i = 0; i < 120; i++) {
        const res = await call((i % 2 ? b : a).base, 'GET', '/me', { key: ws.key });
        expect(res.status, `request ${i + 1}`).to.equal(200);
      }
      expectLimited(await call(a.base, 'GET', '/me', { key: ws.key }));
      expectLimited(await call(b.base, 'GET', '/identities', { key: ws.key }));
      expectLimited(await call(b.base, 'POST', '/identities', { key: ws.key, body: { externalId: 'x' } }));
      // Per key: the same workspace's other key and another workspace's key still pass.
      expect((await call(a.base, 'GET', '/me', { key: ws.readKey })).status).to.equal(200);
      expect((await call(b.base, 'GET', '/me', { key: other.key })).status).to.equal(200);
    });
  });

  describe('with RATE_LIMIT_PER_MINUTE=10', () => {
    let a: TestApp;
    let b: TestApp;
    before(async () => {
      [a, b] = await Promise.all([
        startTestApp({ RATE_LIMIT_PER_MINUTE: '10' }),
        startTestApp({ RATE_LIMIT_PER_MINUTE: '10' }),
      ]);
    });
    after(async () => Promise.all([a?.close(), b?.close()]));
    const em = () => a.rt.orm.em.fork();

    it('a concurrent burst across two instances lets exactly 10 through', async () => {
      const ws = await makeWorkspace(em());
      const results = await Promise.all(
        Array.from({ length: 30 }, (_, i) => call((i % 2 ? b : a).base, 'GET', '/me', { key: ws.key })),
      );
      const statuses = results.map((r) => r.status);
      expect(statuses.filter((s) => s === 200)).to.have.length(10);
      expect(statuses.filter((s) => s === 429)).to.have.length(20);
      for (const r of results.filter((x) => x.status === 429)) expectLimited(r);
    });

    it('refused requests do not extend the window; the window rolls', async () => {
      const ws = await makeWorkspace(em());
      for (let i = 0; i < 10; i++)
        expect((await call((i % 2 ? b : a).base, 'GET', '/me', { key: ws.key })).status).to.equal(200);
      for (let i = 0; i < 5; i++) expectLimited(await call(a.base, 'GET', '/me', { key: ws.key }));

      // Age the recorded hits instead of waiting a minute: 30 s old → Retry-After about 30.
      await boundQuery(em(), `update rate_hits set at = at - interval '30 seconds' where key_id = ?`, [
        ws.keyId,
      ]);
      const half = await call(b.base, 'GET', '/me', { key: ws.key });
      expectLimited(half);
      expect(Number(half.headers.get('retry-after'))).to.be.within(29, 31);

      // 61 s old → out of the rolling minute: the key may send 10 more, then not the 11th.
      await boundQuery(em(), `update rate_hits set at = at - interval '31 seconds' where key_id = ?`, [
        ws.keyId,
      ]);
      for (let i = 0; i < 10; i++)
        expect(
          (await call((i % 2 ? b : a).base, 'GET', '/me', { key: ws.key })).status,
          `after roll ${i}`,
        ).to.equal(200);
      expectLimited(await call(a.base, 'GET', '/me', { key: ws.key }));
    });

    it('unauthenticated requests are not counted against a key', async () => {
      const ws = await makeWorkspace(em());
      for (let i = 0; i < 15; i++)
        expect(
          (
            await call(a.base, 'GET', '/me', {
              key: ws.key.slice(0, -1) + (ws.key.endsWith('0') ? '1' : '0'),
            })
          ).status,
        ).to.equal(401);
      expect((await call(a.base, 'GET', '/me', { key: ws.key })).status).to.equal(200);
    });
  });
});
