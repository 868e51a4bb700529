import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import {
  makeWorkspace,
  startTestApp,
  testRuntime,
  type TestApp,
  type TestWorkspace,
  type TestRuntime,
} from '../support/context.js';
import { courseCount, importCsv, jobsOf } from '../support/csv.js';
import { closeRuntime } from '@lectern/runtime';
import { startCsvWorker } from '@lectern/csv-import';
import type { JobWorkerHandle } from '@lectern/jobs';

describe('hardening: CSV imports of hostile files (issue 8, items 2, 5, 6)', function () {
  this.timeout(120_000);
  let app: TestApp;
  let workerRt: TestRuntime;
  let worker: JobWorkerHandle;
  let ws: TestWorkspace;

  before(async () => {
    app = await startTestApp({ RATE_LIMIT_PER_MINUTE: '0' });
    workerRt = await testRuntime('csv-worker');
    worker = await startCsvWorker(workerRt);
  });
  beforeEach(async () => {
    ws = await makeWorkspace(app.rt.orm.em.fork(), 'scale', 'CSV hardening');
  });
  after(async () => {
    await worker?.stop();
    if (workerRt) await closeRuntime(workerRt, { keepStorage: true });
    await app?.close();
  });

  /** A refused file: 400 with exactly one issue of `code`, a small answer, one job attempt, nothing stored. */
  async function expectRefusedOnce(body: string | Buffer, code: string): Promise<void> {
    const res = await importCsv(app.base, ws.key, body);
    expect(res.status, res.text.slice(0, 500)).to.equal(400);
    expect(res.text.length).to.be.lessThan(2000);
    expect(res.body.issues.map((i) => i.code)).to.deep.equal([code]);
    const jobs = await jobsOf(app.rt.orm.em.fork(), ws.id);
    expect(jobs.map((j) => [j.status, j.attempts])).to.deep.equal([['failed', 1]]);
    expect(await courseCount(app.rt.orm.em.fork(), ws.id)).to.equal(0);
  }

  describe('2. wide files', () => {
    it('200,000 header columns → one too_many_columns issue, at once', async () => {
      await expectRefusedOnce('a,'.repeat(200_000) + 'screen\nS1,text,x\n', 'too_many_columns');
    });

    it('2.6 million header columns (5.2 MB) → the same single issue', async () => {
      const body = ','.repeat(2_600_000) + 'screen\nS1,text,x\n';
      await expectRefusedOnce(body, 'too_many_columns');
    });

    it('a data row of 200,000 cells is skipped with one issue; the other rows are imported', async () => {
      const res = await importCsv(
        app.base,
        ws.key,
        `screen,type,text\nS1,text,x${','.repeat(200_000)}\nS2,text,y\n`,
      );
      expect(res.status, res.text.slice(0, 500)).to.equal(201);
      expect(res.body.issues.map((i) => [i.row, i.code])).to.deep.equal([[2, 'too_many_columns']]);
      expect(res.body.data.screens.map((s) => s.title)).to.deep.equal(['S2']);
    });
  });

  describe('5. undecodable files are refused at once, never retried', () => {
    it('random binary with NUL bytes', async () => {
      await expectRefusedOnce(
        Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0]), randomBytes(4096)]),
        'not_text',
      );
    });

    it('text with a NUL byte in a cell', async () => {
      await expectRefusedOnce(Buffer.from('screen,type,text\nS1,text,a\u0000b\n'), 'not_text');
    });

    it('UTF-16 without a byte order mark', async () => {
      await expectRefusedOnce(Buffer.from('screen,type,text\nS1,text,x\n', 'utf16le'), 'not_text');
    });

    it('UTF-16 with a byte order mark is decoded and imported', async () => {
      const body = Buffer.concat([
        Buffer.from([0xff, 0xfe]),
        Buffer.from('screen,type,text\nS1,text,héllo\n', 'utf16le'),
      ]);
      const res = await importCsv(app.base, ws.key, body);
      expect(res.status, res.text).to.equal(201);
      expect(res.body.data.screens[0].blocks[0]).to.include({ type: 'text', text: 'héllo' });
    });
  });

  describe('6. one malformed row never loses the later ones', () => {
    it('S1,text,"x") then S2,text,good → 201 with S2 and one issue for line 2', async () => {
      const res = await importCsv(app.base, ws.key, 'screen,type,text\nS1,text,"x")\nS2,text,good\n');
      expect(res.status, res.text).to.equal(201);
      expect(res.body.issues.map((i) => [i.row, i.code])).to.deep.equal([[2, 'malformed_row']]);
      expect(res.body.data.screens.map((s) => [s.title, s.blocks[0].text])).to.deep.equal([['S2', 'good']]);
    });

    it('several bad rows, one spanning lines, CRLF: every good row is kept with the right line numbers', async () => {
      const file = [
        'screen,type,text',
        'S1,text,"x")',
        'S2,text,good',
        'S3,text,"multi',
        'line")',
        'S4,text,fine',
        'S5,text,"a"b',
        'S6,text,last',
      ].join('\r\n');
      const res = await importCsv(app.base, ws.key, file + '\r\n');
      expect(res.status, res.text).to.equal(201);
      expect(res.body.issues.map((i) => [i.row, i.code])).to.deep.equal([
        [2, 'malformed_row'],
        [4, 'malformed_row'],
        [7, 'malformed_row'],
      ]);
      expect(res.body.data.screens.map((s) => s.title)).to.deep.equal(['S2', 'S4', 'S6']);
    });
  });
});
