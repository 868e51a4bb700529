import { expect } from 'chai';
import http from 'node:http';
import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { createCourse } from '@lectern/authoring';
import type { RequestBody } from '@lectern/client';
import { isAppError } from '@lectern/errors';
import { runSyncJob } from '@lectern/jobs';
import {
  SCORM_BLOB,
  SCORM_IMPORT_KIND,
  startScormExportWorker,
  startScormImportWorker,
} from '@lectern/scorm';
import { getZip } from '../support/scorm.js';
import { buildPlayerOnce } from '../support/player-browser.js';
import {
  makeWorkspace,
  startTestApp,
  type TestApp,
  type TestWorkers,
  startTestWorkers,
  type TestWorkspace,
} from '../support/context.js';
import { clientFor } from '../support/http.js';
import { checkContract } from '../support/contract.js';
import { courseCount, jobsOf } from '../support/csv.js';
import { allTypesScreens } from '../unit/courses/fixtures.js';
import { zipOf } from '../support/zip.js';
import {
  exportedPackageOf,
  importScorm,
  scormUploadKeys,
  markedManifest,
  thirdPartyPackage,
} from '../support/scorm-import.js';

const MiB = 1024 * 1024;
const MANIFEST_12 = (items: string, resources: string) => `<?xml version="1.0"?>
<manifest identifier="m" xmlns="http://www.imsproject.org/xsd/imscp_rootv1p1p2" xmlns:adlcp="http://www.adlnet.org/xsd/adlcp_rootv1p2">
  <metadata><schema>ADL SCORM</schema><schemaversion>1.2</schemaversion></metadata>
  <organizations default="o"><organization identifier="o"><title>Plain course</title>${items}</organization></organizations>
  <resources>${resources}</resources>
</manifest>`;
const SIMPLE_MANIFEST = MANIFEST_12(
  '<item identifier="i1" identifierref="r1"><title>Only page</title></item>',
  '<resource identifier="r1" type="webcontent" adlcp:scormtype="sco" href="page.html"><file href="page.html"/></resource>',
);
const simplePackage = () =>
  zipOf([
    { name: 'imsmanifest.xml', data: SIMPLE_MANIFEST },
    { name: 'page.html', data: '<h1>Hello</h1><p>World</p>' },
  ]);

describe('SCORM import (POST /courses/import/scorm → bus → scorm worker → DB)', function () {
  this.timeout(120_000);
  let app: TestApp;
  let workers: TestWorkers;
  let ws: TestWorkspace;

  before(async () => {
    app = await startTestApp({ RATE_LIMIT_PER_MINUTE: '100000' });
    const assetsDir = (await buildPlayerOnce()).dir;
    workers = await startTestWorkers('scorm-worker', startScormImportWorker, (rt) =>
      startScormExportWorker(rt, {
        assetsDir,
        allowPrivate: false,
        fontMaxBytes: 100_000,
        fontTimeoutMs: 5_000,
        mediaMaxBytes: 1_000_000,
        mediaTimeoutMs: 5_000,
        packageMediaMaxBytes: 5_000_000,
      }),
    );
    ws = await makeWorkspace(app.rt.orm.em.fork(), 'scale', 'SCORM import');
  });
  after(async () => {
    await workers?.stop();
    await app?.close();
  });

  /** Sends `body`, expects 400 with `code`, and checks nothing was stored: no course, no blob under jobs/. */
  async function expectRefused(body: Buffer | string, code: string) {
    const courses = await courseCount(app.rt.orm.em.fork(), ws.id);
    const res = await importScorm(app.base, ws.key, body);
    expect(res.status, res.text).to.equal(400);
    expect(res.body.error).to.equal('invalid_request');
    expect(res.body.issues?.[0]?.code, res.text).to.equal(code);
    expect(res.body.message).to.be.a('string').and.not.equal('');
    expect(await courseCount(app.rt.orm.em.fork(), ws.id)).to.equal(courses);
    expect(await scormUploadKeys(app.rt.storage)).to.deep.equal([]);
    return res;
  }

  describe('roundtrip: a package this service exported comes back exactly, as a new draft', () => {
    it('a course with all 39 block types and a translation: screens, blocks, ids, settings and translations deep-equal', async () => {
      // The client throws on an error, and the contract check refuses any success but the documented one
      // (201 for a creation, 200 otherwise): each call below succeeding is the status the test expects.
      const lectern = clientFor(app, ws.key);
      const { data: source } = await lectern.createCourse({
        body: {
          title: 'Fire safety',
          screens: allTypesScreens(),
          passingScore: 70,
          quizFeedback: 'immediate',
          navigation: 'hidden',
          direction: 'ltr',
          locale: 'en',
        } as RequestBody<'createCourse'>,
      });
      const types = new Set(source.screens.flatMap((s) => s.blocks.map((b) => b.type)));
      expect(types.size).to.equal(39);
      const trn = await lectern.createTranslation({ params: { id: source.id }, body: { locale: 'fr' } });
      await lectern.updateTranslation({
        params: { id: source.id, translationId: trn.data.id },
        body: { content: { title: 'Sécurité incendie', 's:s-intro.title': 'Introduction' } },
      });
      const translations = await lectern.listTranslations({ params: { id: source.id } });

      // The real export (its manifest validated against the XSDs by getZip), in both versions.
      const packages: Buffer[] = [];
      for (const version of ['scorm2004', 'scorm12']) {
        const zip = await getZip(app.base, ws.key, `/courses/${source.id}/scorm?version=${version}`);
        expect(zip.status, JSON.stringify(zip.error)).to.equal(200);
        packages.push(zip.bytes);
      }
      const res = await importScorm(app.base, ws.key, packages[0]);
      expect(res.status, res.text).to.equal(201);
      expect(res.body.meta).to.deep.equal({ kind: 'roundtrip', warnings: [] });
      const other = await importScorm(app.base, ws.key, packages[1]);
      expect(other.status, other.text).to.equal(201);
      expect(other.body.meta).to.deep.equal({ kind: 'roundtrip', warnings: [] });
      expect(other.body.data.contentHash).to.equal(source.contentHash);
      const copy = res.body.data;
      expect(copy.id).to.not.equal(source.id);
      expect(copy.status).to.equal('draft');
      expect(copy.sourceKind).to.equal('scorm');
      const same = [
        'title',
        'screens',
        'direction',
        'locale',
        'customFonts',
        'themeId',
        'certificateId',
        'passingScore',
        'quizFeedback',
        'navigation',
        'contentHash',
      ];
      const pick = (c: Record<string, unknown>) => Object.fromEntries(same.map((k) => [k, c[k]]));
      expect(pick(copy)).to.deep.equal(pick(source));

      const copied = await lectern.listTranslations({ params: { id: copy.id } });
      const strip = (list: { locale: string; content: Record<string, string>; stalePaths: string[] }[]) =>
        list.map((t) => ({ locale: t.locale, content: t.content, stalePaths: t.stalePaths }));
      expect(strip(copied.data)).to.deep.equal(strip(translations.data));
      expect(await scormUploadKeys(app.rt.storage), 'the upload is deleted when the job ends').to.deep.equal(
        [],
      );
    });

    it('?title renames the copy; a theme of another workspace is dropped with a warning', async () => {
      const res = await importScorm(
        app.base,
        ws.key,
        exportedPackageOf({ title: 'T', screens: [], themeId: 'thm_elsewhere' }, []),
        { title: 'Renamed' },
      );
      expect(res.status, res.text).to.equal(201);
      expect(res.body.data.title).to.equal('Renamed');
      expect(res.body.data.themeId).to.equal(null);
      expect(res.body.meta.kind).to.equal('roundtrip');
      expect(res.body.meta.warnings.map((w) => w.code)).to.deep.equal(['theme_dropped']);
    });

    it('the course in the package is validated like POST /courses: bad screens are a 400 and nothing is stored', async () => {
      const bad = exportedPackageOf(
        { title: 'Bad', screens: [{ id: 's1', title: 'S', blocks: [{ id: 'b1', type: 'no_such_type' }] }] },
        [],
      );
      const courses = await courseCount(app.rt.orm.em.fork(), ws.id);
      const res = await importScorm(app.base, ws.key, bad);
      expect(res.status, res.text).to.equal(400);
      expect(res.body.issues?.[0]).to.deep.include({ code: 'unknown_type' });
      expect(await courseCount(app.rt.orm.em.fork(), ws.id)).to.equal(courses);
      expect(await scormUploadKeys(app.rt.storage)).to.deep.equal([]);
    });

    it('a marker without lectern/course.json is salvaged, with a warning that says so', async () => {
      const res = await importScorm(
        app.base,
        ws.key,
        zipOf([
          { name: 'imsmanifest.xml', data: markedManifest('Half') },
          { name: 'index.html', data: '<p>Player</p>' },
        ]),
      );
      expect(res.status, res.text).to.equal(201);
      expect(res.body.meta.kind).to.equal('salvaged');
      expect(res.body.meta.warnings[0].code).to.equal('roundtrip_incomplete');
    });
  });

  describe('salvage: third-party packages (real manifests, packages built around them)', () => {
    const cases: {
      name: string;
      folder?: string;
      title: string;
      screens: string[];
      codes: string[];
    }[] = [
      {
        name: 'scorm12-feedback',
        title: 'Tips for Giving Developmental Feedback in English',
        screens: ['Tips for Giving Developmental Feedback in English'],
        codes: ['media_ignored', 'script_ignored'],
      },
      {
        name: 'adl2004-api',
        title: 'LMS Test Content Package API',
        screens: ['Asset Launch Test', 'API Implementation Test 1', 'API Implementation Test 2'],
        codes: ['media_ignored', 'script_ignored'],
      },
      {
        name: 'adl2004-sequencing-co01',
        title: 'LMS Test Content Package CO-01',
        screens: ['Activity 1', 'Activity 2', 'Activity 3'],
        codes: ['sequencing_ignored', 'media_ignored', 'script_ignored'],
      },
      {
        name: 'adl2004-nested-in-folder-cm05',
        folder: 'LMSTestPackage_CM-05',
        title: 'LMS Test Content Package CM-05',
        screens: [
          'Activity 1',
          'Activity 2',
          'Activity 3',
          'Activity 4',
          'Activity 5',
          'Activity 6',
          'Activity 7',
          'Activity 8',
          'Activity 9',
        ],
        codes: ['sequencing_ignored', 'media_ignored', 'script_ignored'],
      },
      {
        name: 'adl2004-oddcase-dmi',
        title: 'LMS Test Content Package DMI',
        screens: [1, 2, 3, 4].map((n) => `Data Model Implementation Test ${n}`),
        codes: ['media_ignored', 'script_ignored'],
      },
    ];
    for (const c of cases) {
      it(`${c.name}${c.folder ? ' (manifest in a top-level folder)' : ''}: outline and warnings`, async () => {
        const res = await importScorm(
          app.base,
          ws.key,
          await thirdPartyPackage(c.name, { folder: c.folder }),
        );
        expect(res.status, res.text).to.equal(201);
        expect(res.body.meta.kind).to.equal('salvaged');
        expect(res.body.data.title).to.equal(c.title);
        expect(res.body.data.sourceKind).to.equal('scorm');
        expect(res.body.data.status).to.equal('draft');
        expect(res.body.data.screens.map((s) => s.title)).to.deep.equal(c.screens);
        expect([...new Set(res.body.meta.warnings.map((w) => w.code))]).to.deep.equal(c.codes);
        for (const w of res.body.meta.warnings) expect(w.message).to.be.a('string').and.not.equal('');
        // Every item with content got the page's heading and paragraph.
        const withContent = res.body.data.screens.filter((s) => s.blocks.length > 1);
        expect(withContent.length).to.be.greaterThan(0);
        for (const s of withContent) {
          expect(s.blocks[0]).to.deep.include({ type: 'heading', level: 1 });
          expect(s.blocks[1]).to.deep.include({ type: 'text' });
          expect(String(s.blocks[1].text)).to.match(/^Text of \*\*.+\*\*\.$/);
        }
        expect(await scormUploadKeys(app.rt.storage)).to.deep.equal([]);
      });
    }

    it('titles with entities and CDATA, missing titles, 1.2 prerequisites, missing resources, non-HTML launch files, a quiz form', async () => {
      const manifest = MANIFEST_12(
        `<item identifier="a" identifierref="r1"><title>Q &amp; A <![CDATA[<Part 1>]]></title><adlcp:prerequisites type="aicc_script">x</adlcp:prerequisites></item>
         <item identifier="b" identifierref="r2"/>
         <item identifier="c" identifierref="nope"><title>Gone</title></item>
         <item identifier="d" identifierref="r3"><title>A PDF</title></item>`,
        `<resource identifier="r1" type="webcontent" href="a.html"/>
         <resource identifier="r2" type="webcontent" href="b.html"/>
         <resource identifier="r3" type="webcontent" href="doc.pdf"/>`,
      );
      const quiz = `<form><fieldset><legend>Which gas feeds a fire?</legend>
        <label><input type="radio" name="q" value="n"> Nitrogen</label>
        <label><input type="radio" name="q" value="o" data-correct> Oxygen</label></fieldset></form>
        <ul><li>one</li><li>two</li></ul>
        <table><tr><th>Class</th><th>Fuel</th><th>Agent</th></tr><tr><td>A</td><td>Wood</td><td>Water</td></tr></table>`;
      const res = await importScorm(
        app.base,
        ws.key,
        zipOf([
          { name: 'imsmanifest.xml', data: manifest },
          { name: 'a.html', data: quiz },
          {
            name: 'b.html',
            data: '<html><head><title>From the page</title></head><body><p>b</p></body></html>',
          },
          { name: 'doc.pdf', data: '%PDF-1.4' },
        ]),
      );
      expect(res.status, res.text).to.equal(201);
      const screens = res.body.data.screens;
      expect(screens.map((s) => s.title)).to.deep.equal(['Q & A <Part 1>', 'From the page', 'Gone', 'A PDF']);
      expect(screens[0].blocks).to.deep.equal([
        {
          id: 's1b1',
          type: 'quiz_single_choice',
          question: 'Which gas feeds a fire?',
          options: [
            { id: 'o1', text: 'Nitrogen' },
            { id: 'o2', text: 'Oxygen', correct: true },
          ],
        },
        { id: 's1b2', type: 'markdown', markdown: '- one\n- two' },
        {
          id: 's1b3',
          type: 'markdown',
          markdown: '| Class | Fuel | Agent |\n| --- | --- | --- |\n| A | Wood | Water |',
        },
      ]);
      expect(res.body.meta.warnings.map((w) => [w.code, w.path])).to.deep.equal([
        ['sequencing_ignored', 'a'],
        ['resource_missing', 'c'],
        ['item_unreadable', 'doc.pdf'],
      ]);
    });

    it('a manifest with no item is a 400 no_items', async () => {
      await expectRefused(zipOf([{ name: 'imsmanifest.xml', data: MANIFEST_12('', '') }]), 'no_items');
    });
  });

  describe('400: refused packages, nothing stored', () => {
    it('not a zip', () => expectRefused('this is not a zip file at all', 'not_a_zip'));
    it('an empty body', () => expectRefused(Buffer.alloc(0), 'not_a_zip'));
    it('no manifest', () => expectRefused(zipOf([{ name: 'index.html', data: '<p>x</p>' }]), 'no_manifest'));
    it('a manifest two folders down is not looked for', () =>
      expectRefused(zipOf([{ name: 'a/b/imsmanifest.xml', data: SIMPLE_MANIFEST }]), 'no_manifest'));
    it('zip slip (../)', () =>
      expectRefused(
        zipOf([
          { name: 'imsmanifest.xml', data: SIMPLE_MANIFEST },
          { name: 'res/../../evil.html', data: 'x' },
        ]),
        'zip_slip',
      ));
    it('an absolute path (/x)', () =>
      expectRefused(
        zipOf([
          { name: 'imsmanifest.xml', data: SIMPLE_MANIFEST },
          { name: '/etc/cron.d/x', data: 'x' },
        ]),
        'absolute_path',
      ));
    it('an absolute path (C:\\x)', () =>
      expectRefused(
        zipOf([
          { name: 'imsmanifest.xml', data: SIMPLE_MANIFEST },
          { name: 'C:\\Windows\\x', data: 'x' },
        ]),
        'absolute_path',
      ));
    it('a symlink entry', () =>
      expectRefused(
        zipOf([
          { name: 'imsmanifest.xml', data: SIMPLE_MANIFEST },
          { name: 'page.html', data: '/etc/passwd', unixMode: 0o120777 },
        ]),
        'symlink',
      ));
    it('more than 10,000 entries', () =>
      expectRefused(
        zipOf([
          { name: 'imsmanifest.xml', data: SIMPLE_MANIFEST },
          ...Array.from({ length: 10_000 }, (_, i) => ({
            name: `f/${i}.txt`,
            data: '',
            method: 'store' as const,
          })),
        ]),
        'too_many_entries',
      ));
    it('a zip bomb (an entry inflating over 200 times its size)', () =>
      expectRefused(
        zipOf([
          { name: 'imsmanifest.xml', data: SIMPLE_MANIFEST },
          { name: 'page.html', data: Buffer.alloc(8 * MiB) },
        ]),
        'compression_ratio',
      ));
    it('declared inflated sizes summing over 1 GiB', () =>
      expectRefused(
        zipOf([
          { name: 'imsmanifest.xml', data: SIMPLE_MANIFEST },
          ...Array.from({ length: 6 }, (_, i) => ({
            name: `m${i}.bin`,
            data: randomBytes(MiB),
            method: 'store' as const,
            declaredSize: 199 * MiB,
          })),
        ]),
        'inflated_too_large',
      ));
    it('an entry inflating to more than its declared size (counted while inflating)', () =>
      expectRefused(
        zipOf([{ name: 'imsmanifest.xml', data: SIMPLE_MANIFEST + ' '.repeat(5000), declaredSize: 200 }]),
        'size_mismatch',
      ));
    it('an encrypted entry', () =>
      expectRefused(zipOf([{ name: 'imsmanifest.xml', data: SIMPLE_MANIFEST, flags: 1 }]), 'encrypted'));
    it('a DOCTYPE with entities (billion laughs)', () =>
      expectRefused(
        zipOf([
          {
            name: 'imsmanifest.xml',
            data: `<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;">]><manifest><title>&lol2;</title></manifest>`,
          },
        ]),
        'xml_doctype',
      ));
    it('an external entity (XXE)', () =>
      expectRefused(
        zipOf([
          {
            name: 'imsmanifest.xml',
            data: `<?xml version="1.0"?><!DOCTYPE manifest [<!ENTITY xxe SYSTEM "file:///etc/passwd">]><manifest>&xxe;</manifest>`,
          },
        ]),
        'xml_doctype',
      ));
    it('a manifest that is not XML', () =>
      expectRefused(zipOf([{ name: 'imsmanifest.xml', data: '{"not": "xml"} <<<' }]), 'not_xml'));
  });

  describe('HTTP rules', () => {
    it('415 for a body that is not application/zip; application/x-zip-compressed is taken', async () => {
      const res = await importScorm(app.base, ws.key, simplePackage(), {
        contentType: 'application/octet-stream',
      });
      expect(res.status).to.equal(415);
      expect(res.body.error).to.equal('unsupported_media_type');
      const ok = await importScorm(app.base, ws.key, simplePackage(), {
        contentType: 'application/x-zip-compressed',
      });
      expect(ok.status, ok.text).to.equal(201);
      expect(ok.body.data.screens).to.deep.equal([
        {
          id: 's1',
          title: 'Only page',
          blocks: [
            { id: 's1b1', type: 'heading', text: 'Hello', level: 1 },
            { id: 's1b2', type: 'text', text: 'World' },
          ],
        },
      ]);
    });

    it('403 plan_required below Scale, before the body is looked at', async () => {
      for (const plan of ['sandbox', 'build'] as const) {
        const low = await makeWorkspace(app.rt.orm.em.fork(), plan, `SCORM ${plan}`);
        const res = await importScorm(app.base, low.key, simplePackage());
        expect(res.status).to.equal(403);
        expect(res.body.error).to.equal('plan_required');
        expect((await jobsOf(app.rt.orm.em.fork(), low.id)).length).to.equal(0);
      }
    });

    it('a bad ?title is a 400 on the query', async () => {
      const res = await importScorm(app.base, ws.key, simplePackage(), { title: ' ' });
      expect(res.status).to.equal(400);
      expect(res.body.error).to.equal('invalid_request');
    });

    it('the Sandbox course ceiling applies in the worker (a plan read when the course is written)', async () => {
      const sandbox = await makeWorkspace(app.rt.orm.em.fork(), 'sandbox', 'SCORM sandbox full');
      for (let i = 0; i < 3; i++)
        await createCourse(app.rt.orm.em.fork(), { id: sandbox.id, plan: 'sandbox' }, { title: `C${i}` });
      let err: unknown;
      await runSyncJob(app.rt, {
        workspaceId: sandbox.id,
        kind: SCORM_IMPORT_KIND,
        input: { title: null },
        blobs: {
          [SCORM_BLOB]: {
            stream: Readable.from([simplePackage()]),
            limit: 100 * MiB,
            tooLarge: () => new Error('too large'),
          },
        },
        timeoutMs: 30_000,
        deleteBlobsWhenDone: true,
      }).catch((e: unknown) => (err = e));
      expect(isAppError(err) && err.code).to.equal('plan_required');
      expect(await courseCount(app.rt.orm.em.fork(), sandbox.id)).to.equal(3);
      expect(await scormUploadKeys(app.rt.storage)).to.deep.equal([]);
    });

    it('413 on a declared Content-Length over 100 MB, answered before the body is sent', async () => {
      const url = new URL(`${app.base}/courses/import/scorm`);
      const { status, body } = await new Promise<{ status: number; body: string }>((resolve, reject) => {
        const req = http.request(url, {
          method: 'POST',
          headers: {
            authorization: `Bearer ${ws.key}`,
            'content-type': 'application/zip',
            'content-length': String(101 * 1000 * 1000),
          },
        });
        req.on('response', (res) => {
          let text = '';
          res.on('data', (c: Buffer) => (text += c.toString()));
          res.on('end', () => {
            req.destroy();
            resolve({ status: res.statusCode ?? 0, body: text });
          });
        });
        req.on('error', reject);
        // A first chunk only: the rest is never sent, so only an early answer can end this test.
        req.write(Buffer.alloc(64 * 1024));
      });
      expect(status).to.equal(413);
      const parsed = JSON.parse(body) as { error: string };
      expect(parsed.error).to.equal('payload_too_large');
      await checkContract(url.toString(), 'POST', 413, 'application/json', parsed);
      expect(await scormUploadKeys(app.rt.storage)).to.deep.equal([]);
    });

    it('413 on a chunked body once the count passes 100 MB, without waiting for the rest', async () => {
      const url = new URL(`${app.base}/courses/import/scorm`);
      const before = (await jobsOf(app.rt.orm.em.fork(), ws.id)).length;
      const chunk = Buffer.alloc(MiB);
      const { status, sent } = await new Promise<{ status: number; sent: number }>((resolve, reject) => {
        let sent = 0;
        let answered = false;
        const req = http.request(url, {
          method: 'POST',
          headers: { authorization: `Bearer ${ws.key}`, 'content-type': 'application/zip' },
        });
        req.on('response', (res) => {
          answered = true;
          res.resume();
          res.on('end', () => {
            req.destroy();
            resolve({ status: res.statusCode ?? 0, sent });
          });
        });
        req.on('error', (e) => (answered ? undefined : reject(e)));
        // Up to 300 MB, a chunk at a time as the socket drains; stops once the answer is in.
        const pump = () => {
          while (!answered && sent < 300 * MiB) {
            sent += chunk.length;
            if (!req.write(chunk)) return void req.once('drain', pump);
          }
          if (!answered) req.end();
        };
        pump();
      });
      expect(status).to.equal(413);
      expect(sent).to.be.lessThan(300 * MiB);
      expect((await jobsOf(app.rt.orm.em.fork(), ws.id)).length).to.equal(before);
      expect(await scormUploadKeys(app.rt.storage)).to.deep.equal([]);
    });
  });
});
