import { expect } from 'chai';
import zlib from 'node:zlib';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { REPO_ROOT } from '../support/spine.js';
import {
  makeWorkspace,
  startTestApp,
  type TestApp,
  type TestWorkspace,
  type TestWorkers,
  startTestWorkers,
} from '../support/context.js';
import { call } from '../support/http.js';
import { bigCsv, courseCount, csvText, importCsv, jobsOf, type ImportBody } from '../support/csv.js';
import { startCsvWorker } from '@lectern/csv-import';
import type { Res } from '../support/http.js';

const MiB = 1024 * 1024;

function expectIssueShape(issues: ImportBody['issues']) {
  for (const i of issues) {
    expect(Object.keys(i).sort()).to.deep.equal(['code', 'message', 'path', 'row']);
    expect(i.path).to.deep.equal(['row', i.row]);
    expect(i.message).to.be.a('string').and.not.equal('');
  }
}

function expectCreated(res: Res<ImportBody>) {
  expect(res.status, res.text).to.equal(201);
  expect(Object.keys(res.body).sort()).to.deep.equal(['data', 'issues']);
  expect(res.body.data.sourceKind).to.equal('csv');
  expect(res.body.data.status).to.equal('draft');
  expect(res.headers.get('location')).to.equal(`/api/v1/courses/${res.body.data.id}`);
  expectIssueShape(res.body.issues);
}

describe('CSV import over HTTP (POST /courses/import/csv → bus → csv worker → DB)', function () {
  this.timeout(60_000);
  let app: TestApp;
  let workers: TestWorkers;
  let ws: TestWorkspace;

  before(async () => {
    app = await startTestApp({ RATE_LIMIT_PER_MINUTE: '100000' });
    workers = await startTestWorkers('csv-worker', startCsvWorker);
    ws = await makeWorkspace(app.rt.orm.em.fork(), 'scale', 'CSV import');
  });
  after(async () => {
    await workers?.stop();
    await app?.close();
  });

  describe('201: the draft course and the unreadable rows', () => {
    it('imports a file end to end: draft, sourceKind csv, blocks, no issues, stored as returned', async () => {
      const file = csvText([
        ['screen', 'type', 'text', 'options', 'correct', 'explanation'],
        ['Capitals', 'heading', 'European capitals', '', '', ''],
        ['Capitals', 'quiz_single_choice', 'Capital of France?', 'Lyon|Paris|Nice', '2', 'Since 987.'],
        ['Rivers', 'quiz_true_false', 'The Rhine flows through Basel.', '', 'true', ''],
      ]);
      const res = await importCsv(app.base, ws.key, file, { title: 'Geography' });
      expectCreated(res);
      expect(res.body.issues).to.deep.equal([]);
      const course = res.body.data;
      expect(course.title).to.equal('Geography');
      expect(course.screens.map((s) => s.title)).to.deep.equal(['Capitals', 'Rivers']);
      expect(course.screens[0].blocks[1]).to.deep.include({
        id: 's1b2',
        type: 'quiz_single_choice',
        question: 'Capital of France?',
      });
      expect(course.screens[1].blocks[0]).to.deep.include({ type: 'quiz_true_false', correct: true });

      const got = await call<{ data: ImportBody['data'] }>(app.base, 'GET', `/courses/${course.id}`, {
        key: ws.key,
      });
      expect(got.status).to.equal(200);
      expect(got.body.data).to.deep.equal(course);

      const [job] = (await jobsOf(app.rt.orm.em.fork(), ws.id)).slice(-1);
      expect(job).to.include({ kind: 'csv.import', status: 'completed', attempts: 1 });
      expect(job.result).to.deep.equal({ courseId: course.id, issues: [] });
      expect(job.error).to.equal(null);
      // The upload sits in the object store under the job id (expired by a lifecycle rule, docs/jobs.md).
      const key = (job.input.blobs as Record<string, string>)['upload.csv'];
      expect(key).to.equal(`jobs/${job.id}/upload.csv`);
      expect((await app.rt.storage.get(key)).toString()).to.equal(file);
    });

    it('imports the documented example file (docs/examples/course.csv) with no issues', async () => {
      const file = await readFile(path.join(REPO_ROOT, 'docs/examples/course.csv'));
      const res = await importCsv(app.base, ws.key, file, { title: 'Example' });
      expectCreated(res);
      expect(res.body.issues).to.deep.equal([]);
      expect(res.body.data.screens.length).to.be.greaterThan(0);
    });

    it('without ?title the course is named after its first screen', async () => {
      const res = await importCsv(app.base, ws.key, 'screen,text\nWelcome aboard,Hello\nNext,World\n');
      expectCreated(res);
      expect(res.body.data.title).to.equal('Welcome aboard');
    });

    it('a blank or overlong ?title is a 400 on the query, before anything is queued', async () => {
      const before = (await jobsOf(app.rt.orm.em.fork(), ws.id)).length;
      const blank = await importCsv(app.base, ws.key, 'screen,text\nA,b\n', { title: '  ' });
      expect(blank.status).to.equal(400);
      expect(blank.body.error).to.equal('invalid_request');
      const long = await importCsv(app.base, ws.key, 'screen,text\nA,b\n', { title: 'x'.repeat(501) });
      expect(long.status).to.equal(400);
      expect((await jobsOf(app.rt.orm.em.fork(), ws.id)).length).to.equal(before);
    });

    it('handles a UTF-8 BOM, CRLF line ends and accents', async () => {
      const file = Buffer.concat([
        Buffer.from([0xef, 0xbb, 0xbf]),
        Buffer.from('screen,type,text\r\nCafé,text,Crème brûlée\r\n'),
      ]);
      const res = await importCsv(app.base, ws.key, file);
      expectCreated(res);
      expect(res.body.issues).to.deep.equal([]);
      expect(res.body.data.screens[0].title).to.equal('Café');
      expect(res.body.data.screens[0].blocks[0]).to.deep.include({ type: 'text', text: 'Crème brûlée' });
    });

    for (const [name, delimiter] of [
      ['semicolon', ';'],
      ['tab', '\t'],
    ] as const) {
      it(`detects the ${name} delimiter`, async () => {
        const file = csvText(
          [
            ['screen', 'type', 'text', 'options', 'correct'],
            ['Maths', 'quiz_single_choice', '1, 2 or 3; which is 2?', 'one|two|three', '2'],
          ],
          delimiter,
        );
        const res = await importCsv(app.base, ws.key, file);
        expectCreated(res);
        expect(res.body.issues).to.deep.equal([]);
        expect(res.body.data.screens[0].blocks[0]).to.deep.include({ question: '1, 2 or 3; which is 2?' });
      });
    }

    it('keeps quoted multi-line cells and numbers later rows by physical line', async () => {
      const file =
        'screen,type,text\nIntro,text,"Line one\nLine two, with a comma\n""quoted"""\nIntro,quizz,Oops\n';
      const res = await importCsv(app.base, ws.key, file);
      expectCreated(res);
      expect(res.body.data.screens[0].blocks[0]).to.deep.include({
        text: 'Line one\nLine two, with a comma\n"quoted"',
      });
      expect(res.body.issues).to.have.length(1);
      expect(res.body.issues[0]).to.include({ row: 5, code: 'unknown_type' });
    });

    it('partial rows: the readable ones are imported, the others listed as {row, code, path, message}', async () => {
      const file = csvText([
        ['screen', 'type', 'text', 'options', 'correct'],
        ['A', 'text', 'Fine', '', ''],
        ['A', 'quiz_single_choice', 'No options?', '', '1'],
        ['B', 'hotspot', 'Click here', '', ''],
        ['B', 'heading', 'Also fine', '', ''],
      ]);
      const res = await importCsv(app.base, ws.key, file);
      expectCreated(res);
      expect(res.body.data.screens.map((s) => s.blocks.length)).to.deep.equal([1, 1]);
      expect(res.body.issues).to.deep.equal([
        { row: 3, code: 'missing_options', path: ['row', 3], message: res.body.issues[0].message },
        { row: 4, code: 'unsupported_type', path: ['row', 4], message: res.body.issues[1].message },
      ]);
      const [job] = (await jobsOf(app.rt.orm.em.fork(), ws.id)).slice(-1);
      expect(job.result).to.deep.equal({ courseId: res.body.data.id, issues: res.body.issues });
    });

    it('accepts exactly 2,000 data rows', async () => {
      const res = await importCsv(app.base, ws.key, bigCsv(2000));
      expectCreated(res);
      expect(res.body.issues).to.deep.equal([]);
      expect(res.body.data.screens).to.have.length(100);
      expect(res.body.data.screens.reduce((n, s) => n + s.blocks.length, 0)).to.equal(2000);
    });

    it('accepts a gzip-encoded upload (the cap counts inflated bytes)', async () => {
      const res = await importCsv(app.base, ws.key, zlib.gzipSync('screen,text\nZipped,Hello\n'), {
        headers: { 'content-encoding': 'gzip' },
      });
      expectCreated(res);
      expect(res.body.data.screens[0].title).to.equal('Zipped');
    });
  });

  describe('400 invalid_request with the row list', () => {
    it('nothing readable → 400 whose issues list every row, and no course', async () => {
      const before = await courseCount(app.rt.orm.em.fork(), ws.id);
      const file = csvText([
        ['screen', 'type', 'text'],
        ['A', 'quizz', 'x'],
        ['A', 'text', ''],
      ]);
      const res = await importCsv(app.base, ws.key, file);
      expect(res.status, res.text).to.equal(400);
      expect(res.body.error).to.equal('invalid_request');
      expect(res.body.message).to.match(/no readable screen/);
      expect(res.body.issues.map((i) => [i.row, i.code])).to.deep.equal([
        [2, 'unknown_type'],
        [3, 'missing_text'],
      ]);
      expectIssueShape(res.body.issues);
      expect(await courseCount(app.rt.orm.em.fork(), ws.id)).to.equal(before);
      const [job] = (await jobsOf(app.rt.orm.em.fork(), ws.id)).slice(-1);
      expect(job.status).to.equal('failed');
      expect(job.error).to.deep.include({ code: 'invalid_request' });
    });

    it('an empty body or a file without a screen column → 400 with the header issue', async () => {
      const empty = await importCsv(app.base, ws.key, '');
      expect(empty.status, empty.text).to.equal(400);
      expect(empty.body.issues.map((i) => i.code)).to.deep.equal(['empty_file']);
      const noScreen = await importCsv(app.base, ws.key, 'title,text\nA,b\n');
      expect(noScreen.status, noScreen.text).to.equal(400);
      expect(noScreen.body.issues.map((i) => i.code)).to.include('missing_column');
      expectIssueShape(noScreen.body.issues);
    });

    it('2,001 data rows → 400 naming the 2,000 limit', async () => {
      const res = await importCsv(app.base, ws.key, bigCsv(2001));
      expect(res.status, res.text.slice(0, 300)).to.equal(400);
      expect(res.body.error).to.equal('invalid_request');
      expect(res.body.message).to.include('2,000');
      expect(res.body.limit).to.equal(2000);
      expect(res.body.issues).to.have.length(1);
      expect(res.body.issues[0]).to.include({ code: 'too_many_rows', row: 2002 });
      expectIssueShape(res.body.issues);
    });
  });

  describe('refused before the worker', () => {
    for (const [label, contentType] of [
      ['application/json', 'application/json'],
      ['text/plain', 'text/plain'],
      ['no Content-Type', null],
    ] as const) {
      it(`${label} → 415 unsupported_media_type naming text/csv`, async () => {
        const res = await importCsv(app.base, ws.key, 'screen,text\nA,b\n', { contentType });
        expect(res.status, res.text).to.equal(415);
        expect(res.body.error).to.equal('unsupported_media_type');
        expect(res.body.message).to.include('text/csv');
      });
    }

    it('text/csv with a charset parameter is accepted', async () => {
      const res = await importCsv(app.base, ws.key, 'screen,text\nCharset,ok\n', {
        contentType: 'text/csv; charset=utf-8',
      });
      expectCreated(res);
    });

    it('a body over 5 MiB → 413 payload_too_large, nothing queued', async () => {
      const before = (await jobsOf(app.rt.orm.em.fork(), ws.id)).length;
      const line = 'S,' + 'x'.repeat(1000) + '\n';
      const big = 'screen,text\n' + line.repeat(Math.ceil((5 * MiB) / line.length) + 1);
      const res = await importCsv(app.base, ws.key, big);
      expect(res.status, res.text).to.equal(413);
      expect(res.body.error).to.equal('payload_too_large');
      expect(res.body.message).to.include('5 MiB');
      expect((await jobsOf(app.rt.orm.em.fork(), ws.id)).length).to.equal(before);
    });

    it('a gzip body that inflates past 5 MiB → 413', async () => {
      const bomb = zlib.gzipSync(Buffer.alloc(6 * MiB, 0x20));
      const res = await importCsv(app.base, ws.key, bomb, { headers: { 'content-encoding': 'gzip' } });
      expect(res.status, res.text).to.equal(413);
    });

    it('a brotli body that inflates past 5 MiB → 413, counted after decompression', async () => {
      const bomb = zlib.brotliCompressSync(Buffer.alloc(6 * MiB, 0x20));
      expect(bomb.length).to.be.below(MiB);
      const res = await importCsv(app.base, ws.key, bomb, { headers: { 'content-encoding': 'br' } });
      expect(res.status, res.text).to.equal(413);
      expect(res.body.error).to.equal('payload_too_large');
    });

    it('deflate, br and x-gzip uploads are read like gzip', async () => {
      const file = (title: string) => `screen,text\n${title},Hello\n`;
      for (const [encoding, encode] of [
        ['deflate', zlib.deflateSync],
        ['br', zlib.brotliCompressSync],
        ['x-gzip', zlib.gzipSync],
        [' GZIP ', zlib.gzipSync],
      ] as const) {
        const title = `Encoded ${encoding.trim()}`;
        const res = await importCsv(app.base, ws.key, encode(file(title)), {
          headers: { 'content-encoding': encoding },
        });
        expectCreated(res);
        expect(res.body.data.screens[0].title, encoding).to.equal(title);
      }
    });

    it('bytes that do not match their Content-Encoding → 400 malformed; an unknown encoding → 415; nothing queued', async () => {
      const before = (await jobsOf(app.rt.orm.em.fork(), ws.id)).length;
      const corrupt = await importCsv(app.base, ws.key, 'screen,text\nA,b\n', {
        headers: { 'content-encoding': 'gzip' },
      });
      expect(corrupt.status, corrupt.text).to.equal(400);
      expect(corrupt.body.error).to.equal('invalid_request');
      expect(corrupt.body.message).to.match(/could not be decompressed/);
      expect(corrupt.body.issues.map((i) => i.code)).to.deep.equal(['malformed']);
      const unknown = await importCsv(app.base, ws.key, 'screen,text\nA,b\n', {
        headers: { 'content-encoding': 'compress' },
      });
      expect(unknown.status, unknown.text).to.equal(415);
      expect(unknown.body.error).to.equal('unsupported_media_type');
      expect(unknown.body.message).to.include('compress').and.include('gzip, deflate or br');
      expect((await jobsOf(app.rt.orm.em.fork(), ws.id)).length).to.equal(before);
    });

    it('a read-only key → 403 insufficient_scope; no key → 401', async () => {
      const ro = await importCsv(app.base, ws.readKey, 'screen,text\nA,b\n');
      expect(ro.status).to.equal(403);
      expect(ro.body.error).to.equal('insufficient_scope');
      const anon = await call(app.base, 'POST', '/courses/import/csv', {
        raw: 'screen,text\nA,b\n',
        headers: { 'content-type': 'text/csv' },
      });
      expect(anon.status).to.equal(401);
    });
  });

  describe('plan ceilings (Sandbox)', () => {
    it('a 4th course on Sandbox → 403 plan_required; the job is failed, no course written', async () => {
      const sandbox = await makeWorkspace(app.rt.orm.em.fork(), 'sandbox', 'CSV sandbox');
      for (let i = 1; i <= 3; i++) {
        const ok = await importCsv(app.base, sandbox.key, `screen,text\nS${i},Hello\n`);
        expectCreated(ok);
      }
      const res = await importCsv(app.base, sandbox.key, 'screen,text\nS4,Hello\n');
      expect(res.status, res.text).to.equal(403);
      expect(res.body.error).to.equal('plan_required');
      expect(res.body.message).to.match(/Build|plan/);
      expect(await courseCount(app.rt.orm.em.fork(), sandbox.id)).to.equal(3);
      const jobs = await jobsOf(app.rt.orm.em.fork(), sandbox.id);
      expect(jobs.map((j) => j.status)).to.deep.equal(['completed', 'completed', 'completed', 'failed']);
      expect(jobs[3].error).to.deep.include({ code: 'plan_required' });
    });

    it('a CSV of 31 screens on Sandbox → 403 plan_required (the 30-screen ceiling)', async () => {
      const sandbox = await makeWorkspace(app.rt.orm.em.fork(), 'sandbox', 'CSV sandbox screens');
      const rows = [
        ['screen', 'text'],
        ...Array.from({ length: 31 }, (_, i) => [`Screen ${i + 1}`, 'Hello']),
      ];
      const res = await importCsv(app.base, sandbox.key, csvText(rows));
      expect(res.status, res.text).to.equal(403);
      expect(res.body.error).to.equal('plan_required');
      const ok = await importCsv(app.base, sandbox.key, csvText(rows.slice(0, 31)));
      expectCreated(ok);
      expect(ok.body.data.screens).to.have.length(30);
    });
  });

  describe('routing and contract', () => {
    it('is not shadowed by /courses/:id: GET /courses/import is a 404 course, POST import works', async () => {
      const res = await call<{ error: string }>(app.base, 'GET', '/courses/import', { key: ws.key });
      expect(res.status).to.equal(404);
      const post = await importCsv(app.base, ws.key, 'screen,text\nRouting,ok\n');
      expectCreated(post);
    });

    it('is in the OpenAPI document with its text/csv body and every answer', async () => {
      type Op = {
        requestBody: { content: Record<string, unknown> };
        responses: Record<string, unknown>;
        parameters: { name: string }[];
      };
      const res = await call<{
        paths: Record<string, Record<string, Op>>;
        components?: { schemas?: Record<string, unknown> };
      }>(app.url, 'GET', '/api/v1/openapi.json');
      const op = res.body.paths['/api/v1/courses/import/csv'].post;
      expect(Object.keys(op.requestBody.content)).to.deep.equal(['text/csv']);
      expect(op.parameters.map((p) => p.name)).to.include('title');
      expect(Object.keys(op.responses)).to.include.members(['201', '400', '403', '413', '415', '503', '504']);
      // Inline the component schemas the 201 refers to, then look for the issue shape.
      const schemas = res.body.components?.schemas ?? {};
      const seen = new Set<string>();
      const inline = (v: unknown): unknown => {
        if (Array.isArray(v)) return v.map(inline);
        if (v && typeof v === 'object') {
          const ref = (v as { $ref?: string }).$ref;
          if (typeof ref === 'string' && ref.startsWith('#/components/schemas/')) {
            const name = ref.slice('#/components/schemas/'.length);
            if (seen.has(name)) return {};
            seen.add(name);
            return inline(schemas[name]);
          }
          return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, inline(x)]));
        }
        return v;
      };
      const created = inline(op.responses['201']) as {
        content: {
          'application/json': {
            schema: { properties: { data: unknown; issues: { items: { required: string[] } } } };
          };
        };
      };
      const body = created.content['application/json'].schema;
      expect(body.properties).to.have.keys(['data', 'issues']);
      expect(body.properties.issues.items.required).to.have.members(['row', 'code', 'path', 'message']);
    });
  });
});
