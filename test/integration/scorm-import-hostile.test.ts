/**
 * Hostile SCORM content (issue 20, point 2): every case answers 400 with a stable `issues[0].code`, or is
 * salvaged with a `truncated` warning, is not retried, and never holds the event loop the API shares with the
 * scorm worker (both run in this process, as in `lectern start`).
 */
import { expect } from 'chai';
import { COURSE_ENTRY, startScormImportWorker } from '@lectern/scorm';
import {
  makeWorkspace,
  startTestApp,
  type TestApp,
  type TestWorkers,
  startTestWorkers,
  type TestWorkspace,
} from '../support/context.js';
import { call } from '../support/http.js';
import { courseCount, jobsOf } from '../support/csv.js';
import { zipOf } from '../support/zip.js';
import { importScorm, markedManifest } from '../support/scorm-import.js';

const MANIFEST = (items: string, extra = '') => `<?xml version="1.0"?>
<manifest identifier="m" xmlns="http://www.imsproject.org/xsd/imscp_rootv1p1p2" xmlns:adlcp="http://www.adlnet.org/xsd/adlcp_rootv1p2">
  <metadata><schema>ADL SCORM</schema><schemaversion>1.2</schemaversion>${extra}</metadata>
  <organizations default="o"><organization identifier="o"><title>Hostile</title>${items}</organization></organizations>
  <resources><resource identifier="r1" type="webcontent" adlcp:scormtype="sco" href="page.html"><file href="page.html"/></resource></resources>
</manifest>`;
const ONE_ITEM = '<item identifier="i1" identifierref="r1"><title>Page</title></item>';

/** A package whose one item launches `page.html`. Stored, not deflated: repeated markup would trip the ratio cap. */
const pagePackage = (html: string) =>
  zipOf([
    { name: 'imsmanifest.xml', data: MANIFEST(ONE_ITEM) },
    { name: 'page.html', data: html, method: 'store' },
  ]);
const manifestPackage = (manifest: string) =>
  zipOf([
    { name: 'imsmanifest.xml', data: manifest, method: 'store' },
    { name: 'page.html', data: '<p>x</p>' },
  ]);

/** A course as POST /courses takes it, with `deep` as an extra field of its one text block. */
const courseWith = (deep: unknown) => ({
  title: 'Deep',
  screens: [{ id: 's1', title: 'One', blocks: [{ id: 'b1', type: 'text', text: 'x', extra: deep }] }],
});
const roundtripPackage = (
  course: unknown,
  courseJson = JSON.stringify({ ...(course as object), translations: [] }),
) =>
  zipOf([
    { name: 'imsmanifest.xml', data: markedManifest('Deep') },
    { name: 'index.html', data: '<title>Player</title>' },
    { name: COURSE_ENTRY, data: courseJson, method: 'store' },
  ]);
/** `[[[…]]]` `levels` deep, written as text: JSON.stringify itself would overflow on 200,000 levels. */
const nestedArrays = (levels: number) => '['.repeat(levels) + ']'.repeat(levels);
const nestedObjects = (levels: number): unknown => {
  let v: unknown = 'leaf';
  for (let i = 0; i < levels; i++) v = { a: v };
  return v;
};

describe('SCORM import of hostile content (same process as the API)', function () {
  this.timeout(300_000);
  let app: TestApp;
  let workers: TestWorkers;
  let ws: TestWorkspace;

  before(async () => {
    app = await startTestApp({ RATE_LIMIT_PER_MINUTE: '100000' });
    workers = await startTestWorkers('scorm-worker', startScormImportWorker);
    ws = await makeWorkspace(app.rt.orm.em.fork(), 'scale', 'SCORM hostile');
  });
  after(async () => {
    await workers?.stop();
    await app?.close();
  });

  /** The job of the last import: failed for good on its first attempt (not retried), or completed. */
  async function lastJob() {
    const jobs = await jobsOf(app.rt.orm.em.fork(), ws.id);
    return jobs[jobs.length - 1];
  }

  async function expectRefused(body: Buffer, code: string, path?: (string | number)[]) {
    const courses = await courseCount(app.rt.orm.em.fork(), ws.id);
    const res = await importScorm(app.base, ws.key, body);
    expect(res.status, res.text).to.equal(400);
    expect(res.body.error).to.equal('invalid_request');
    expect(res.body.issues?.[0]?.code, res.text).to.equal(code);
    if (path) expect(res.body.issues?.[0]?.path.slice(0, path.length)).to.deep.equal(path);
    expect(await courseCount(app.rt.orm.em.fork(), ws.id)).to.equal(courses);
    const job = await lastJob();
    expect(job.status).to.equal('failed');
    expect(job.attempts, 'a refusal is not retried').to.equal(1);
    return res;
  }

  it('<div> nested 150,000 deep (a 1.65 MB zip) → 400 too_deep; /readyz of this process stays under 1 s meanwhile', async () => {
    const html = '<div>'.repeat(150_000) + 'x' + '</div>'.repeat(150_000);
    const body = pagePackage(html);
    expect(body.length).to.be.greaterThan(1_650_000);
    // The first request of a process warms its own paths (DB pool, code); it is not what is measured.
    expect((await call(app.url, 'GET', '/readyz')).status).to.equal(200);
    let importing = true;
    const latencies: number[] = [];
    const probe = (async () => {
      while (importing) {
        const started = performance.now();
        const ready = await call(app.url, 'GET', '/readyz');
        latencies.push(performance.now() - started);
        expect(ready.status, ready.text).to.equal(200);
        await new Promise((r) => setTimeout(r, 20));
      }
    })();
    try {
      await expectRefused(body, 'too_deep', ['package', 'page.html']);
    } finally {
      importing = false;
      await probe;
    }
    expect(latencies.length).to.be.greaterThan(0);
    expect(Math.max(...latencies), `/readyz latencies ${latencies.map(Math.round).join(',')}`).to.be.below(
      1000,
    );
  });

  it('<ul><li> nested 20,000 deep → 400 too_deep', async () => {
    await expectRefused(
      pagePackage('<ul><li>'.repeat(20_000) + 'x' + '</li></ul>'.repeat(20_000)),
      'too_deep',
    );
  });

  it('inline marks nested 30,000 deep → 400 too_deep', async () => {
    await expectRefused(
      pagePackage('<p>' + '<b><i>'.repeat(15_000) + 'x' + '</i></b>'.repeat(15_000) + '</p>'),
      'too_deep',
    );
  });

  it('marks nested as deep as a page may nest are imported, written as Markdown to four levels', async () => {
    const res = await importScorm(
      app.base,
      ws.key,
      pagePackage('<p>' + '<b><i>'.repeat(200) + 'deep' + '</i></b>'.repeat(200) + '</p>'),
    );
    expect(res.status, res.text).to.equal(201);
    // b, i, b, i: the four outer marks; the 396 inside them add nothing.
    expect(res.body.data.screens[0].blocks[0]).to.include({ type: 'text', text: '******deep******' });
  });

  it('a manifest with 50,000 nested <item>s → 400 too_deep', async () => {
    const items =
      Array.from({ length: 50_000 }, (_, i) => `<item identifier="i${i}"><title>T</title>`).join('') +
      '</item>'.repeat(50_000);
    await expectRefused(manifestPackage(MANIFEST(items)), 'too_deep', ['package', 'imsmanifest.xml']);
  });

  it('a manifest with 300,000 nested elements → 400 too_deep', async () => {
    const extra = '<x>'.repeat(300_000) + '</x>'.repeat(300_000);
    await expectRefused(manifestPackage(MANIFEST(ONE_ITEM, extra)), 'too_deep');
  });

  it('a manifest with more elements than the budget → 400 too_many_nodes', async () => {
    await expectRefused(manifestPackage(MANIFEST(ONE_ITEM, '<x/>'.repeat(200_001))), 'too_many_nodes');
  });

  for (const levels of [5_000, 200_000])
    it(`course.json with a field ${levels.toLocaleString('en-US')} levels deep → 400 too_deep, as POST /courses`, async () => {
      const json = JSON.stringify({ ...courseWith('DEEP'), translations: [] }).replace(
        '"DEEP"',
        nestedArrays(levels),
      );
      await expectRefused(roundtripPackage(null, json), 'too_deep', [
        'course',
        'screens',
        0,
        'blocks',
        0,
        'extra',
      ]);
    });

  for (const levels of [100, 3_000])
    it(`course.json ${levels.toLocaleString('en-US')} levels deep → 400 too_deep, the code POST /courses answers`, async () => {
      const course = courseWith(nestedObjects(levels));
      const direct = await call<{ issues?: { code: string }[] }>(app.base, 'POST', '/courses', {
        key: ws.key,
        body: course,
      });
      expect(direct.status, direct.text).to.equal(400);
      expect(direct.body.issues?.[0]?.code).to.equal('too_deep');
      await expectRefused(roundtripPackage(course), 'too_deep', [
        'course',
        'screens',
        0,
        'blocks',
        0,
        'extra',
      ]);
    });

  it('a roundtrip course within the rules imports, and its screens can be PATCHed back', async () => {
    const res = await importScorm(app.base, ws.key, roundtripPackage(courseWith(nestedObjects(50))));
    expect(res.status, res.text).to.equal(201);
    const patched = await call(app.base, 'PATCH', `/courses/${res.body.data.id}`, {
      key: ws.key,
      body: { screens: res.body.data.screens },
    });
    expect(patched.status, patched.text).to.equal(200);
  });

  it('a flat page of <p>x</p> × 130,000 → 201, its first 500 blocks and a truncated warning', async () => {
    const res = await importScorm(app.base, ws.key, pagePackage('<p>x</p>'.repeat(130_000)));
    expect(res.status, res.text).to.equal(201);
    expect(res.body.meta.kind).to.equal('salvaged');
    expect(res.body.data.screens[0].blocks).to.have.length(500);
    expect(res.body.meta.warnings.map((w) => w.code)).to.include('truncated');
    const job = await lastJob();
    expect(job.status).to.equal('completed');
    expect(job.attempts).to.equal(1);
  });
});
