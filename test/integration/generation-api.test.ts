import { expect } from 'chai';
import { boundQuery, type EntityManager } from '@lectern/db';
import { makeWorkspace, startTestApp, type TestApp, type TestWorkspace } from '../support/context.js';
import { call, clientFor } from '../support/http.js';
import { csvText } from '../support/csv.js';
import { thirdPartyPackage } from '../support/scorm-import.js';
import { startTestWorkers, type TestWorkers } from '../support/context.js';
import { startCsvWorker } from '@lectern/csv-import';
import { startScormImportWorker } from '@lectern/scorm';

type Queued = { data: { id: string; status: string } };

async function generationJobs(em: EntityManager, workspaceId: string): Promise<number> {
  const [{ n }] = await boundQuery<{ n: number }>(
    em,
    "select count(*)::int as n from jobs where workspace_id = ? and kind = 'generation.run'",
    [workspaceId],
  );
  return n;
}

/** `count` finished generation jobs of this month, written as the worker would leave them. */
async function spend(em: EntityManager, workspaceId: string, count: number, status: 'completed' | 'failed') {
  await boundQuery(
    em,
    `insert into jobs (id, workspace_id, kind, status, input, attempts, created_at, updated_at, completed_at)
     select 'job_spent_' || ? || '_' || g, ?, 'generation.run', ?, '{}'::jsonb, 1, now(), now(), now()
       from generate_series(1, ?) g`,
    [`${workspaceId}_${status}`, workspaceId, status, count],
  );
}

describe('generation API: plan gate, allowance, provider settings, Idempotency-Key', function () {
  this.timeout(60_000);
  let app: TestApp;
  let bare: TestApp;
  let ws: TestWorkspace;
  const em = () => app.rt.orm.em.fork();
  // No generation worker runs here: jobs stay queued, which is all these rules need.
  const env = {
    GENERATION_BASE_URL: 'http://127.0.0.1:9/v1',
    GENERATION_MODEL: 'fake',
    RATE_LIMIT_PER_MINUTE: '100000',
  };

  before(async () => {
    app = await startTestApp(env);
    bare = await startTestApp({ RATE_LIMIT_PER_MINUTE: '100000' });
    ws = await makeWorkspace(em(), 'build', 'Generation API');
  });
  after(async () => {
    await app?.close();
    await bare?.close();
  });

  describe('who may generate', () => {
    it('Sandbox → 403 plan_required naming Build, on both routes, and no job', async () => {
      const sb = await makeWorkspace(em(), 'sandbox', 'Sandbox');
      const res = await call(app.base, 'POST', '/generate', { key: sb.key, body: { prompt: 'x' } });
      expect(res.status).to.equal(403);
      expect(res.body.error).to.equal('plan_required');
      expect(res.body.message).to.match(/Build/);
      const get = await call(app.base, 'GET', '/generate/job_nope', { key: sb.key });
      expect(get.status).to.equal(403);
      expect(await generationJobs(em(), sb.id)).to.equal(0);
    });

    it('a read-only key → 403 insufficient_scope', async () => {
      const res = await call(app.base, 'POST', '/generate', { key: ws.readKey, body: { prompt: 'x' } });
      expect(res.status).to.equal(403);
      expect(res.body.error).to.equal('insufficient_scope');
    });

    it("another workspace's job → 404; the owner sees every field", async () => {
      const res = await call<Queued>(app.base, 'POST', '/generate', {
        key: ws.key,
        body: { prompt: 'Mine' },
      });
      expect(res.status).to.equal(202);
      const other = await makeWorkspace(em(), 'scale', 'Other');
      const get = await call(app.base, 'GET', `/generate/${res.body.data.id}`, { key: other.key });
      expect(get.status).to.equal(404);
      expect(get.body.error).to.equal('not_found');
      // The client throws on an error; its contract check fails any success but the documented 200.
      const mine = await clientFor(app, ws.key).getGenerationJob({ params: { id: res.body.data.id } });
      expect(mine.data).to.include({
        status: 'queued',
        prompt: 'Mine',
        courseId: null,
        error: null,
        sourceUrl: null,
        audience: null,
        screensTarget: 6,
        completedAt: null,
      });
    });

    it('bad bodies → 400 with issues and nothing queued', async () => {
      const before = await generationJobs(em(), ws.id);
      const bad: [unknown, string][] = [
        [{}, 'prompt'],
        [{ prompt: '' }, 'prompt'],
        [{ prompt: 'x'.repeat(2001) }, 'prompt'],
        [{ prompt: 'x', screensTarget: 21 }, 'screensTarget'],
        [{ prompt: 'x', screensTarget: 0 }, 'screensTarget'],
        [{ prompt: 'x', screensTarget: 2.5 }, 'screensTarget'],
        [{ prompt: 'x', sourceUrl: 'file:///etc/passwd' }, 'sourceUrl'],
        [{ prompt: 'x', sourceUrl: 'javascript:alert(1)' }, 'sourceUrl'],
        [{ prompt: 'x', sourceUrl: 'http://user:pw@example.com/' }, 'sourceUrl'],
        [{ prompt: 'x', locale: 'not a locale!!' }, 'locale'],
        [{ prompt: 'x', direction: 'rtl' }, ''],
      ];
      for (const [body, field] of bad) {
        const res = await call<{ error: string; issues: { path: string[] }[] }>(
          app.base,
          'POST',
          '/generate',
          { key: ws.key, body },
        );
        expect(res.status, JSON.stringify(body)).to.equal(400);
        expect(res.body.error).to.equal('invalid_request');
        if (field) expect(res.body.issues.map((i) => i.path[0])).to.include(field);
      }
      expect(await generationJobs(em(), ws.id)).to.equal(before);
    });

    it('no provider configured → 503 service_unavailable naming the settings; nothing queued or spent', async () => {
      const res = await call(bare.base, 'POST', '/generate', {
        key: ws.key,
        body: { prompt: 'No provider' },
      });
      expect(res.status).to.equal(503);
      expect(res.body.error).to.equal('service_unavailable');
      expect(res.body.message)
        .to.match(/GENERATION_BASE_URL/)
        .and.match(/GENERATION_MODEL/);
    });
  });

  describe('monthly allowance (Build: 100)', () => {
    it('the 100th is queued, the 101st is 429 naming the limit and creates no job; a failed job gives its allowance back; /me shows both', async () => {
      const b = await makeWorkspace(em(), 'build', 'Allowance');
      await spend(em(), b.id, 99, 'completed');
      await spend(em(), b.id, 3, 'failed');
      let me = await call(app.base, 'GET', '/me', { key: b.key });
      expect(me.body).to.include({ generations_used: 99, generations_allowance: 100 });
      const hundredth = await call<Queued>(app.base, 'POST', '/generate', {
        key: b.key,
        body: { prompt: '100th' },
      });
      expect(hundredth.status).to.equal(202);
      const jobs = await generationJobs(em(), b.id);
      const over = await call(app.base, 'POST', '/generate', { key: b.key, body: { prompt: '101st' } });
      expect(over.status).to.equal(429);
      expect(over.body.error).to.equal('rate_limited');
      expect(over.body.message).to.match(/100 AI generations per month/);
      expect(await generationJobs(em(), b.id)).to.equal(jobs);
      me = await call(app.base, 'GET', '/me', { key: b.key });
      expect(me.body).to.include({ generations_used: 100, generations_allowance: 100 });
      // The queued one fails (as the worker or sweeper would leave it): its generation is given back.
      await boundQuery(em(), "update jobs set status = 'failed', completed_at = now() where id = ?", [
        hundredth.body.data.id,
      ]);
      const again = await call(app.base, 'POST', '/generate', {
        key: b.key,
        body: { prompt: 'after refund' },
      });
      expect(again.status).to.equal(202);
    });

    it('last month’s generations do not count; Partner is unlimited', async () => {
      const b = await makeWorkspace(em(), 'build', 'Last month');
      await spend(em(), b.id, 100, 'completed');
      await boundQuery(
        em(),
        "update jobs set created_at = date_trunc('month', now()) - interval '1 day' where workspace_id = ?",
        [b.id],
      );
      expect(
        (await call(app.base, 'POST', '/generate', { key: b.key, body: { prompt: 'new month' } })).status,
      ).to.equal(202);
      const p = await makeWorkspace(em(), 'partner', 'Partner');
      await spend(em(), p.id, 600, 'completed');
      const me = await call(app.base, 'GET', '/me', { key: p.key });
      expect(me.body).to.include({ generations_used: 600, generations_allowance: null });
      expect(
        (await call(app.base, 'POST', '/generate', { key: p.key, body: { prompt: 'unlimited' } })).status,
      ).to.equal(202);
    });

    it('concurrent requests for the last generation: exactly one is queued', async () => {
      const b = await makeWorkspace(em(), 'build', 'Race');
      await spend(em(), b.id, 99, 'completed');
      const results = await Promise.all(
        Array.from({ length: 5 }, (_, i) =>
          call(app.base, 'POST', '/generate', { key: b.key, body: { prompt: `race ${i}` } }),
        ),
      );
      expect(results.map((r) => r.status).sort()).to.deep.equal([202, 429, 429, 429, 429]);
    });
  });

  describe('Idempotency-Key', () => {
    const key = (k: string) => ({ 'idempotency-key': k });

    it('POST /generate: same key and body → 200 with the first job, nothing spent; other body → 409; no key → new jobs', async () => {
      const b = await makeWorkspace(em(), 'build', 'Idem');
      const body = { prompt: 'Idempotent', screensTarget: 3 };
      const first = await call<Queued>(app.base, 'POST', '/generate', {
        key: b.key,
        body,
        headers: key('k-1'),
      });
      expect(first.status).to.equal(202);
      const again = await call<Queued>(app.base, 'POST', '/generate', {
        key: b.key,
        body: { screensTarget: 3, prompt: 'Idempotent' },
        headers: key('k-1'),
      });
      expect(again.status).to.equal(200);
      expect(again.body).to.deep.equal(first.body);
      expect(again.headers.get('idempotent-replayed')).to.equal('true');
      expect(await generationJobs(em(), b.id)).to.equal(1);
      const other = await call(app.base, 'POST', '/generate', {
        key: b.key,
        body: { prompt: 'Other' },
        headers: key('k-1'),
      });
      expect(other.status).to.equal(409);
      expect(other.body.error).to.equal('conflict');
      expect(await generationJobs(em(), b.id)).to.equal(1);
      const me = await call(app.base, 'GET', '/me', { key: b.key });
      expect(me.body).to.include({ generations_used: 1 });
      // Another workspace's same key is its own.
      const c = await makeWorkspace(em(), 'build', 'Idem other');
      expect(
        (await call(app.base, 'POST', '/generate', { key: c.key, body, headers: key('k-1') })).status,
      ).to.equal(202);
    });

    it('a refused request frees its key; a key older than 24 h is used afresh; malformed keys → 400', async () => {
      const b = await makeWorkspace(em(), 'build', 'Idem refusals');
      await spend(em(), b.id, 100, 'completed');
      const refused = await call(app.base, 'POST', '/generate', {
        key: b.key,
        body: { prompt: 'x' },
        headers: key('k-r'),
      });
      expect(refused.status).to.equal(429);
      await boundQuery(em(), "update jobs set status = 'failed' where workspace_id = ?", [b.id]);
      const ok = await call<Queued>(app.base, 'POST', '/generate', {
        key: b.key,
        body: { prompt: 'x' },
        headers: key('k-r'),
      });
      expect(ok.status).to.equal(202);
      await boundQuery(
        em(),
        "update idempotency_keys set created_at = now() - interval '25 hours' where workspace_id = ?",
        [b.id],
      );
      const fresh = await call<Queued>(app.base, 'POST', '/generate', {
        key: b.key,
        body: { prompt: 'y' },
        headers: key('k-r'),
      });
      expect(fresh.status).to.equal(202);
      expect(fresh.body.data.id).not.to.equal(ok.body.data.id);
      for (const bad of ['x'.repeat(256), 'has space', 'ünïcode']) {
        const res = await fetch(`${app.base}/generate`, {
          method: 'POST',
          headers: {
            authorization: `Bearer ${b.key}`,
            'content-type': 'application/json',
            'idempotency-key': encodeURI(bad) === bad ? bad : 'a b',
          },
          body: JSON.stringify({ prompt: 'z' }),
        });
        expect(res.status, bad).to.equal(400);
      }
    });
  });

  describe('Idempotency-Key on the imports', () => {
    let workers: TestWorkers;
    before(async () => {
      workers = await startTestWorkers('import-workers', startCsvWorker, startScormImportWorker);
    });
    after(async () => workers?.stop());

    async function courses(id: string): Promise<number> {
      const [{ n }] = await boundQuery<{ n: number }>(
        em(),
        'select count(*)::int as n from courses where workspace_id = ?',
        [id],
      );
      return n;
    }

    it('CSV: same key and file → 200 with the first course, one course; another file → 409', async () => {
      const s = await makeWorkspace(em(), 'scale', 'CSV idem');
      const file = csvText([
        ['screen', 'type', 'text'],
        ['One', 'text', 'Hello'],
      ]);
      const post = (raw: string) =>
        call<{ data: { id: string } }>(app.base, 'POST', '/courses/import/csv', {
          key: s.key,
          raw,
          headers: { 'content-type': 'text/csv', 'idempotency-key': 'csv-1' },
        });
      const first = await post(file);
      expect(first.status, first.text).to.equal(201);
      const again = await post(file);
      expect(again.status).to.equal(200);
      expect(again.body.data.id).to.equal(first.body.data.id);
      expect(await courses(s.id)).to.equal(1);
      const other = await post(
        csvText([
          ['screen', 'type', 'text'],
          ['Two', 'text', 'Bye'],
        ]),
      );
      expect(other.status).to.equal(409);
      expect(await courses(s.id)).to.equal(1);
    });

    it('SCORM: same key and package → 200 with the first course, one course; another package → 409', async () => {
      const s = await makeWorkspace(em(), 'scale', 'SCORM idem');
      const pkg = await thirdPartyPackage('adl2004-api');
      const post = (raw: Buffer, title?: string) =>
        call<{ data: { id: string } }>(
          app.base,
          'POST',
          `/courses/import/scorm${title ? `?title=${title}` : ''}`,
          {
            key: s.key,
            raw,
            headers: { 'content-type': 'application/zip', 'idempotency-key': 'scorm-1' },
          },
        );
      const first = await post(pkg);
      expect(first.status, first.text).to.equal(201);
      const again = await post(pkg);
      expect(again.status, again.text).to.equal(200);
      expect(again.body.data.id).to.equal(first.body.data.id);
      expect(await courses(s.id)).to.equal(1);
      const retitled = await post(pkg, 'Another');
      expect(retitled.status).to.equal(409);
      const other = await post(Buffer.concat([pkg, Buffer.from('trailing')]));
      expect(other.status).to.equal(409);
      expect(await courses(s.id)).to.equal(1);
    });
  });
});
