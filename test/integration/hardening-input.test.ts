import { expect } from 'chai';
import { request } from 'node:http';
import { makeWorkspace, startTestApp, type TestApp, type TestWorkspace } from '../support/context.js';
import { call } from '../support/http.js';
import { api, expectIssue, expectStatus, type CourseDto } from '../support/authoring.js';
import { COURSE_LIMITS } from '@lectern/courses';
import { MAX_ISSUES, MAX_JSON_DEPTH } from '@lectern/errors';
import { boundQuery } from '@lectern/db';

interface ErrBody {
  error: string;
  message: string;
  issues?: { code: string; path: (string | number)[]; message: string }[];
  issuesOmitted?: number;
}

/** The 8.3 MB body of the report: one screen of 640,000 blocks `{"type":"x"}`. */
function hugeCourseBody(): Buffer {
  const block = '{"type":"x"}';
  const blocks = new Array<string>(640_000).fill(block).join(',');
  return Buffer.from(`{"title":"Huge","screens":[{"id":"s1","title":"S","blocks":[${blocks}]}]}`);
}

/** A raw request with exactly the headers given (fetch would merge or refuse some). */
function rawRequest(
  url: string,
  method: string,
  headers: [string, string][],
  body?: string,
): Promise<{ status: number; body: string }> {
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: u.hostname,
        port: u.port,
        path: u.pathname + u.search,
        method,
        // Raw pairs, so a header can repeat; HTTP/1.1 needs Host, which Node adds only for object headers.
        headers: [['Host', u.host], ...headers].flat(),
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
      },
    );
    req.on('error', reject);
    if (body !== undefined) req.write(body);
    req.end();
  });
}

describe('hardening: hostile input never crashes, never 500s (issue 8)', function () {
  this.timeout(120_000);
  let app: TestApp;
  let ws: TestWorkspace;
  let req: ReturnType<typeof api>;
  before(async () => {
    app = await startTestApp({ RATE_LIMIT_PER_MINUTE: '0' });
    ws = await makeWorkspace(app.rt.orm.em.fork(), 'scale', 'Hardening');
    req = api(app.base, ws.key);
  });
  after(async () => app?.close());
  const courseCount = async () => {
    const [{ n }] = await boundQuery<{ n: number }>(
      app.rt.orm.em.fork(),
      'select count(*)::int as n from courses where workspace_id = ?',
      [ws.id],
    );
    return n;
  };

  describe('1. validation work and answers are bounded', () => {
    it('8 concurrent 8 MB bodies of 640,000 unknown blocks: each a small 400, and the server still answers', async () => {
      const body = hugeCourseBody();
      expect(body.length)
        .to.be.greaterThan(8_000_000)
        .and.lessThan(8 * 1024 * 1024);
      const answers = await Promise.all(
        Array.from({ length: 8 }, () =>
          call<ErrBody>(app.base, 'POST', '/courses', {
            key: ws.key,
            raw: body,
            headers: { 'content-type': 'application/json' },
          }),
        ),
      );
      for (const res of answers) {
        expect(res.status, res.text.slice(0, 300)).to.equal(400);
        expect(res.text.length).to.be.lessThan(2000);
        expect(res.body.issues).to.have.length(1);
        expect(res.body.issues![0]).to.include({ code: 'too_many_items' });
        expect(res.body.issues![0].path).to.deep.equal(['screens', 0, 'blocks']);
        expect(res.body.issues![0].message).to.contain(String(COURSE_LIMITS.blocksPerScreen));
      }
      expect(await courseCount()).to.equal(0);
      const after = await req('GET', '/courses');
      expectStatus(after, 200);
    });

    it('past the screen limit: one issue at ["screens"]', async () => {
      const screens = Array.from({ length: COURSE_LIMITS.screens + 1 }, (_, i) => ({
        id: `s${i}`,
        title: 'S',
        blocks: [],
      }));
      const res = await req('POST', '/courses', { title: 'Too many screens', screens });
      expectIssue(res, ['screens'], 'too_many_items');
      expect(res.body.issues).to.have.length(1);
    });

    it('past the blocks-per-course limit: one issue at ["screens"]', async () => {
      const per = COURSE_LIMITS.blocksPerScreen;
      const n = Math.ceil((COURSE_LIMITS.blocks + 1) / per);
      const screens = Array.from({ length: n }, (_, s) => ({
        id: `s${s}`,
        title: 'S',
        blocks: Array.from({ length: per }, (_, b) => ({ id: `s${s}b${b}`, type: 'divider' })),
      }));
      const res = await req('POST', '/courses', { title: 'Too many blocks', screens });
      expectIssue(res, ['screens'], 'too_many_items');
    });

    it('many invalid blocks under the limits: the first 100 issues plus a count of the rest, short messages', async () => {
      const blocks = Array.from({ length: 300 }, (_, b) => ({ id: `b${b}`, type: 'x' }));
      const res = await call<ErrBody>(app.base, 'POST', '/courses', {
        key: ws.key,
        body: { title: 'Unknown types', screens: [{ id: 's1', title: 'S', blocks }] },
      });
      expect(res.status, res.text.slice(0, 300)).to.equal(400);
      expect(res.body.issues).to.have.length(MAX_ISSUES);
      expect(res.body.issuesOmitted).to.equal(300 - MAX_ISSUES);
      expect(res.body.issues![0].path).to.deep.equal(['screens', 0, 'blocks', 0, 'type']);
      for (const i of res.body.issues!) expect(i.message.length).to.be.lessThan(120);
      expect(res.body.issues![0].message).to.not.contain('quiz_single_choice');
    });
  });

  describe('3. NUL and lone surrogates: 400 naming the field, nothing stored', () => {
    it('title "a\\u0000b" → 400 at ["title"]', async () => {
      const res = await call<ErrBody>(app.base, 'POST', '/courses', {
        key: ws.key,
        raw: '{"title":"a\\u0000b"}',
        headers: { 'content-type': 'application/json' },
      });
      expect(res.status, res.text).to.equal(400);
      expect(res.body.issues![0]).to.deep.include({ code: 'invalid_string', path: ['title'] });
      expect(await courseCount()).to.equal(0);
    });

    it('a lone surrogate deep in a block → 400 at its path', async () => {
      const raw =
        '{"title":"ok","screens":[{"id":"s1","title":"S","blocks":[{"id":"b1","type":"text","text":"x\\ud800y"}]}]}';
      const res = await call<ErrBody>(app.base, 'POST', '/courses', {
        key: ws.key,
        raw,
        headers: { 'content-type': 'application/json' },
      });
      expect(res.status, res.text).to.equal(400);
      expect(res.body.issues![0]).to.deep.include({
        code: 'invalid_string',
        path: ['screens', 0, 'blocks', 0, 'text'],
      });
      expect(res.body.issues![0].message).to.contain('surrogate');
      expect(await courseCount()).to.equal(0);
    });

    it('a NUL in an object key → 400', async () => {
      const res = await call<ErrBody>(app.base, 'POST', '/identities', {
        key: ws.key,
        raw: '{"externalId":"e1","a\\u0000":1}',
        headers: { 'content-type': 'application/json' },
      });
      expect(res.status, res.text).to.equal(400);
      expect(res.body.issues![0].code).to.equal('invalid_string');
    });

    it('GET /courses/crs_%00x → 400 at ["params", "id"]', async () => {
      const res = await call<ErrBody>(app.base, 'GET', '/courses/crs_%00x', { key: ws.key });
      expect(res.status, res.text).to.equal(400);
      expect(res.body.issues![0]).to.deep.include({ code: 'invalid_string', path: ['params', 'id'] });
    });

    it('GET /identities?search=a%00b → 400 at ["query", "search"]', async () => {
      const res = await call<ErrBody>(app.base, 'GET', '/identities?search=a%00b', { key: ws.key });
      expect(res.status, res.text).to.equal(400);
      expect(res.body.issues![0]).to.deep.include({ code: 'invalid_string', path: ['query', 'search'] });
    });

    it('a well-formed astral character (a surrogate pair) is stored and returned as sent', async () => {
      const res = await req<CourseDto>('POST', '/courses', { title: 'Émoji 😀 ok' });
      expectStatus(res, 201);
      expect(res.body.data.title).to.equal('Émoji 😀 ok');
      const got = await req<CourseDto>('GET', `/courses/${res.body.data.id}`);
      expect(got.body.data.title).to.equal('Émoji 😀 ok');
      await req('DELETE', `/courses/${res.body.data.id}`);
    });
  });

  describe('4. deep nesting', () => {
    it('10,000 levels inside an unknown block field → 400 too_deep, not a stack overflow', async () => {
      const deep = '['.repeat(10_000) + ']'.repeat(10_000);
      const raw = `{"title":"Deep","screens":[{"id":"s1","title":"S","blocks":[{"id":"b1","type":"text","extra":${deep}}]}]}`;
      const res = await call<ErrBody>(app.base, 'POST', '/courses', {
        key: ws.key,
        raw,
        headers: { 'content-type': 'application/json' },
      });
      expect(res.status, res.text.slice(0, 300)).to.equal(400);
      expect(res.body.issues![0].code).to.equal('too_deep');
      expect(res.body.issues![0].path.slice(0, 6)).to.deep.equal(['screens', 0, 'blocks', 0, 'extra', 0]);
      expect(await courseCount()).to.equal(0);
    });

    it(`nesting within ${MAX_JSON_DEPTH} levels is stored as sent`, async () => {
      let extra: unknown = 'leaf';
      for (let i = 0; i < 40; i++) extra = { k: extra };
      const res = await req<CourseDto>('POST', '/courses', {
        title: 'Nested ok',
        screens: [{ id: 's1', title: 'S', blocks: [{ id: 'b1', type: 'text', extra }] }],
      });
      expectStatus(res, 201);
      expect(res.body.data.screens[0].blocks[0].extra).to.deep.equal(extra);
      await req('DELETE', `/courses/${res.body.data.id}`);
    });
  });

  describe('7 and 12. the Authorization header', () => {
    it('two Authorization headers → 401, even when both carry the right key', async () => {
      const res = await rawRequest(`${app.base}/me`, 'GET', [
        ['Authorization', `Bearer ${ws.key}`],
        ['Authorization', `Bearer ${ws.key}`],
      ]);
      expect(res.status, res.body).to.equal(401);
      expect(JSON.parse(res.body).error).to.equal('unauthorized');
    });

    it('the Bearer scheme is case-insensitive; the rest stays strict', async () => {
      for (const scheme of ['bearer', 'BEARER', 'bEaReR']) {
        const res = await call(app.base, 'GET', '/me', { headers: { authorization: `${scheme} ${ws.key}` } });
        expect(res.status, `${scheme}: ${res.text}`).to.equal(200);
      }
      for (const header of [
        `Bearer  ${ws.key}`,
        `Basic ${ws.key}`,
        `Bearer ${ws.key} x`,
        `Bearer${ws.key}`,
      ]) {
        const res = await call(app.base, 'GET', '/me', { headers: { authorization: header } });
        expect(res.status, header).to.equal(401);
      }
    });
  });

  describe('12. JSON bodies without Content-Type: application/json', () => {
    const send = (contentType: string | null, raw: string) =>
      rawRequest(
        `${app.base}/identities`,
        'POST',
        [
          ['Authorization', `Bearer ${ws.key}`],
          ...(contentType === null ? [] : [['Content-Type', contentType] as [string, string]]),
          ['Content-Length', String(Buffer.byteLength(raw))],
        ],
        raw,
      );

    for (const type of [
      null,
      'text/plain',
      'text/plain;charset=UTF-8',
      'application/x-www-form-urlencoded',
    ]) {
      it(`${type ?? 'no Content-Type'}: a body that parses as JSON is accepted`, async () => {
        const externalId = `ct-${type ?? 'none'}`;
        const res = await send(type, JSON.stringify({ externalId, name: 'Ada' }));
        expect(res.status, res.body).to.equal(201);
        expect(JSON.parse(res.body).data.externalId).to.equal(externalId);
      });
    }

    it('text/plain that is not JSON → 400 malformed JSON; a form body → 415', async () => {
      const bad = await send('text/plain', '{nope');
      expect(bad.status, bad.body).to.equal(400);
      const form = await send('application/x-www-form-urlencoded', 'externalId=a&name=b');
      expect(form.status, form.body).to.equal(415);
    });

    for (const type of ['text/csv', 'multipart/form-data; boundary=x', 'application/xml']) {
      it(`${type}: still 415, nothing stored`, async () => {
        const res = await send(type, JSON.stringify({ externalId: 'never' }));
        expect(res.status, res.body).to.equal(415);
        const list = await req<{ externalId: string }[]>('GET', '/identities?search=never');
        expect(list.body.data).to.have.length(0);
      });
    }
  });
});
