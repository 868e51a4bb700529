import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import http from 'node:http';
import unzipper from 'unzipper';
import type { AddressInfo } from 'node:net';
import { closeRuntime } from '@lectern/runtime';
import { boundQuery } from '@lectern/db';
import { runJobWorker, type JobWorkerHandle } from '@lectern/jobs';
import { mediaProcessJob } from '@lectern/media';
import { COURSE_ENTRY, GENERATOR_SCHEMA, startScormExportWorker, type CourseEntry } from '@lectern/scorm';
import { derivePlayerKeys, trackingTokens } from '@lectern/learner-runs';
import { fetchToFile } from '@lectern/outbound';
import { parseEncryptionKey } from '@lectern/secrets';
import type { PlayerAssets } from '@lectern/player';
import {
  makeWorkspace,
  startTestApp,
  startTestWorkers,
  testConfig,
  testRuntime,
  type TestApp,
  type TestRuntime,
  type TestWorkspace,
} from '../support/context.js';
import {
  api,
  expectIssue,
  expectNotFound,
  expectPlanRequired,
  type CourseDto,
} from '../support/authoring.js';
import { quizScreens } from '../support/player.js';
import { buildPlayerOnce } from '../support/player-browser.js';
import { configOf, getZip, validateManifest, type Zip } from '../support/scorm.js';
import { avSample, pngOf, processedMedia, uploadForm } from '../support/media.js';

/** A WOFF2 file as far as the magic bytes go: what the export checks before packing a font. */
const FONT_BYTES = Buffer.concat([Buffer.from('wOF2'), randomBytes(200)]);
/** Media as far as their first bytes go (what the export sniffs), each with a random body. */
const PNG_BYTES = Buffer.concat([Buffer.from('89504e470d0a1a0a', 'hex'), randomBytes(300)]);
const GIF_BYTES = Buffer.concat([Buffer.from('GIF89a'), randomBytes(100)]);
const MP4_BYTES = Buffer.concat([Buffer.from('000000186674797069736f6d', 'hex'), randomBytes(2000)]);
const WEBM_BYTES = Buffer.concat([Buffer.from('1a45dfa3', 'hex'), randomBytes(1500)]);
const MP3_BYTES = Buffer.concat([Buffer.from('ID3'), randomBytes(800)]);
const SAFE_SVG = Buffer.from(
  '<?xml version="1.0"?>\n<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 10 10"><circle r="4" cx="5" cy="5"/></svg>',
);
const EVIL_SVG = Buffer.from(
  '<svg xmlns="http://www.w3.org/2000/svg" onload="parent.alert(document.cookie)"><rect width="1" height="1"/></svg>',
);
/** Per-file media cap of the test worker; OVERSIZE is over it, BIG ones under it but three of them pass the package cap. */
const MEDIA_MAX = 100_000;
const PACKAGE_MEDIA_MAX = 250_000;
const OVERSIZE = Buffer.concat([Buffer.from('89504e470d0a1a0a', 'hex'), randomBytes(MEDIA_MAX + 1000)]);
const BIG = [1, 2, 3].map(() => Buffer.concat([Buffer.from('89504e470d0a1a0a', 'hex'), randomBytes(90_000)]));
const ODD_TITLE = `Fire & "safety" <basics> for O'Brien — אבטחה`;

interface Course extends CourseDto {
  id: string;
}

describe('SCORM export (GET /courses/:id/scorm → bus → scorm worker → object store → zip)', function () {
  this.timeout(60_000);
  const runTokenKey = randomBytes(32).toString('hex');
  let app: TestApp;
  let workerRt: TestRuntime;
  let worker: JobWorkerHandle;
  let assets: PlayerAssets;
  let fonts: http.Server;
  let fontBase: string;
  /** The worker's temp directory: fetched files and zips go here and must not stay. */
  let workTmp: string;
  /** What the test host served, per path: a package's media files must be these bytes exactly. */
  const served: Record<string, { type: string; body: Buffer }> = {
    '/brand.woff2': { type: 'font/woff2', body: FONT_BYTES },
    '/pic.png': { type: 'image/png', body: PNG_BYTES },
    '/pic-again.png': { type: 'image/png', body: PNG_BYTES },
    '/logo.gif': { type: 'image/gif', body: GIF_BYTES },
    '/clip.mp4': { type: 'video/mp4', body: MP4_BYTES },
    '/clip.webm': { type: 'video/webm', body: WEBM_BYTES },
    '/song.mp3': { type: 'audio/mpeg', body: MP3_BYTES },
    '/safe.svg': { type: 'image/svg+xml', body: SAFE_SVG },
    '/evil.svg': { type: 'image/svg+xml', body: EVIL_SVG },
    '/page.png': { type: 'image/png', body: Buffer.from('<!doctype html><title>Not an image</title>') },
    ...Object.fromEntries(BIG.map((body, i) => [`/big-${i}.png`, { type: 'image/png', body }])),
  };
  let ws: TestWorkspace;
  let course: Course;

  const exportOf = (q = '', key = ws.key, id = course.id): Promise<Zip> =>
    getZip(app.base, key, `/courses/${id}/scorm${q}`);

  before(async () => {
    assets = await buildPlayerOnce();
    fonts = http.createServer((req, res) => {
      const file = served[req.url ?? ''];
      if (file) {
        res.writeHead(200, { 'content-type': file.type });
        res.end(file.body);
      } else if (req.url === '/oversize.png') {
        // Chunked, no Content-Length: the cap has to stop the body as it streams.
        res.writeHead(200, { 'content-type': 'image/png' });
        for (let i = 0; i < OVERSIZE.length; i += 10_000) res.write(OVERSIZE.subarray(i, i + 10_000));
        res.end();
      } else if (req.url === '/slow.mp4') {
        res.writeHead(200, { 'content-type': 'video/mp4' });
        res.write(MP4_BYTES.subarray(0, 100)); // and never the rest
      } else {
        res.writeHead(404);
        res.end();
      }
    });
    await new Promise<void>((r) => fonts.listen(0, '127.0.0.1', r));
    fontBase = `http://127.0.0.1:${(fonts.address() as AddressInfo).port}`;
    app = await startTestApp({
      RATE_LIMIT_PER_MINUTE: '100000',
      RUN_TOKEN_KEY: runTokenKey,
      PLAYER_ASSETS_DIR: assets.dir,
    });
    workerRt = await testRuntime('scorm-worker');
    workTmp = await mkdtemp(path.join(os.tmpdir(), 'lectern-scorm-export-test-'));
    worker = await startScormExportWorker(workerRt, {
      tmpDir: workTmp,
      assetsDir: assets.dir,
      allowPrivate: true,
      fontMaxBytes: 100_000,
      fontTimeoutMs: 5_000,
      mediaMaxBytes: MEDIA_MAX,
      mediaTimeoutMs: 3_000,
      packageMediaMaxBytes: PACKAGE_MEDIA_MAX,
    });
    ws = await makeWorkspace(app.rt.orm.em.fork(), 'scale', 'SCORM export');
    const req = api(app.base, ws.key);
    const theme = await req<{ id: string }>('POST', '/themes', {
      name: 'Brand',
      tokens: { concept: 'calm', displayFont: 'Brand Sans' },
      customFonts: [{ family: 'Brand Sans', url: `${fontBase}/brand.woff2`, weight: 700 }],
    });
    expect(theme.status, theme.text).to.equal(201);
    const created = await req<Course>('POST', '/courses', {
      title: ODD_TITLE,
      screens: quizScreens(),
      themeId: theme.body.data.id,
      passingScore: 70,
      customFonts: [
        { family: 'Brand Sans', url: `${fontBase}/brand.woff2` },
        { family: 'Gone', url: `${fontBase}/missing.woff2` },
      ],
    });
    expect(created.status, created.text).to.equal(201);
    course = created.body.data;
    const fr = await req<{ id: string }>('POST', `/courses/${course.id}/translations`, { locale: 'fr' });
    expect(fr.status, fr.text).to.equal(201);
    const patched = await req('PATCH', `/courses/${course.id}/translations/${fr.body.data.id}`, {
      content: { title: 'Sécurité incendie', 's:s1.title': 'Bienvenue', 's:s1.b:intro.text': 'Bonjour' },
    });
    expect(patched.status, patched.text).to.equal(200);
  });
  after(async () => {
    await worker?.stop();
    if (workerRt) await closeRuntime(workerRt, { keepStorage: true });
    await app?.close();
    if (workTmp) await rm(workTmp, { recursive: true, force: true });
    fonts?.closeAllConnections();
    await new Promise((r) => fonts?.close(r));
  });

  const expectPackage = async (
    zip: Zip,
    version: 'scorm12' | 'scorm2004',
    slug = 'fire-safety-basics-for-o-brien',
  ) => {
    expect(zip.status, zip.error ? JSON.stringify(zip.error) : '').to.equal(200);
    expect(zip.headers.get('content-type')).to.equal('application/zip');
    expect(Number(zip.headers.get('content-length'))).to.equal(zip.bytes.length);
    expect(zip.headers.get('content-disposition')).to.equal(`attachment; filename="${slug}-${version}.zip"`);
    const manifest = zip.entries.get('imsmanifest.xml')!.toString('utf8');
    await validateManifest(manifest, version);
    return manifest;
  };

  describe('200: the package', () => {
    it('SCORM 2004: manifest valid against the XSDs, the player boot page, the bundle, the course, the fonts', async () => {
      const zip = await exportOf('?version=scorm2004');
      const manifest = await expectPackage(zip, 'scorm2004');
      const fontFile = [...zip.entries.keys()].find((n) => n.startsWith('fonts/'))!;
      expect([...zip.entries.keys()].sort()).to.deep.equal(
        [
          'imsmanifest.xml',
          'index.html',
          assets.js.file,
          assets.css.file,
          COURSE_ENTRY,
          fontFile, // one file for the one reachable URL, used by the course and the theme
        ].sort(),
      );
      expect(fontFile).to.match(/^fonts\/[0-9a-f]{16}\.woff2$/);
      expect(zip.entries.get(fontFile)!.equals(FONT_BYTES)).to.equal(true);

      expect(manifest).to.include('<schemaversion>2004 4th Edition</schemaversion>');
      expect(manifest).to.include('adlcp:scormType="sco" href="index.html"');
      expect(manifest).to.include(`<lom:metadataSchema>${GENERATOR_SCHEMA}</lom:metadataSchema>`);
      expect(manifest).to.include('<lom:string language="en">');
      expect(manifest).to.include(
        '<title>Fire &amp; &quot;safety&quot; &lt;basics&gt; for O&apos;Brien — אבטחה</title>',
      );
      for (const f of zip.entries.keys())
        if (f !== 'imsmanifest.xml') expect(manifest).to.include(`<file href="${f}"/>`);

      const html = zip.entries.get('index.html')!.toString('utf8');
      expect(html).to.include(`<link rel="stylesheet" href="./${assets.css.file}">`);
      expect(html).to.include(`<script defer src="./${assets.js.file}"></script>`);
      expect(html).to.include('<html lang="en" dir="ltr">');
      const config = configOf(html) as {
        mode: string;
        scorm: string;
        lang: string | null;
        track: unknown;
        course: Record<string, unknown> & {
          screens: { id: string; blocks: Record<string, unknown>[] }[];
          theme: { tokens: unknown; customFonts: { url: string }[] };
          customFonts: { family: string; url: string }[];
        };
      };
      expect(config.mode).to.equal('scorm');
      expect(config.scorm).to.equal('2004');
      expect(config.lang).to.equal(null);
      expect(config.track).to.equal(null);
      expect(config.course).to.deep.include({
        id: course.id,
        title: ODD_TITLE,
        direction: 'ltr',
        locale: 'en',
        quizFeedback: course.quizFeedback,
        navigation: course.navigation,
        passingScore: 70,
        contentHash: course.contentHash,
      });
      // Answer keys travel (grading happens in the browser); instructor notes do not.
      const stored = quizScreens();
      expect(config.course.screens[0].blocks[1]).to.deep.equal(stored[0].blocks[1]);
      expect(config.course.screens[1].blocks.map((b) => b.id)).to.deep.equal(['q2', 'p1']);
      expect(config.course.theme.tokens).to.deep.equal({ concept: 'calm', displayFont: 'Brand Sans' });
      expect(config.course.theme.customFonts).to.deep.equal([
        { family: 'Brand Sans', url: fontFile, weight: 700 },
      ]);
      // The unreachable font keeps its URL (the package then needs the network for that face only).
      expect(config.course.customFonts).to.deep.equal([
        { family: 'Brand Sans', url: fontFile },
        { family: 'Gone', url: `${fontBase}/missing.woff2` },
      ]);
    });

    it('lectern/course.json is the course as stored: every field, the translation, the theme', async () => {
      const zip = await exportOf();
      expect(zip.status).to.equal(200);
      const entry = JSON.parse(zip.entries.get(COURSE_ENTRY)!.toString('utf8')) as CourseEntry;
      const stored = await api(app.base, ws.key)<Course>('GET', `/courses/${course.id}`);
      expect(entry.schema).to.equal(GENERATOR_SCHEMA);
      expect(entry.version).to.equal(1);
      expect(entry.course).to.deep.equal(stored.body.data);
      expect(entry.course.screens).to.deep.equal(quizScreens());
      const translations = await api(app.base, ws.key)<
        { id: string; locale: string; content: unknown; sourceHash: string }[]
      >('GET', `/courses/${course.id}/translations`);
      expect(entry.translations.map((t) => [t.id, t.locale, t.content, t.sourceHash])).to.deep.equal(
        translations.body.data.map((t) => [t.id, t.locale, t.content, t.sourceHash]),
      );
      expect(Object.keys(entry.translations[0].sourceFingerprints).sort()).to.deep.equal(
        ['s:s1.b:intro.text', 's:s1.title', 'title'].sort(),
      );
      expect(entry.theme?.customFonts).to.have.length(1);
      expect(entry.theme?.tokens).to.deep.equal({ concept: 'calm', displayFont: 'Brand Sans' });
    });

    it('the bundle files are byte for byte what the embed serves', async () => {
      const zip = await exportOf();
      for (const file of [assets.js, assets.css]) {
        const served = Buffer.from(
          await (await fetch(`${app.url}/player/assets/${file.file}`)).arrayBuffer(),
        );
        expect(zip.entries.get(file.file)!.equals(served), file.file).to.equal(true);
        expect(zip.entries.get(file.file)!.equals(await readFile(file.path)), file.file).to.equal(true);
      }
    });

    it('SCORM 1.2 is the default only when asked for: scormtype, schemaversion 1.2, IMS MD marker', async () => {
      const zip = await exportOf('?version=scorm12');
      const manifest = await expectPackage(zip, 'scorm12');
      expect(manifest).to.include('<schemaversion>1.2</schemaversion>');
      expect(manifest).to.include('adlcp:scormtype="sco" href="index.html"');
      expect(manifest).to.include(`<imsmd:metadatascheme>${GENERATOR_SCHEMA}</imsmd:metadatascheme>`);
      expect(manifest).to.include('<imsmd:langstring xml:lang="en">');
      expect(configOf(zip.entries.get('index.html')!.toString('utf8')).scorm).to.equal('1.2');
      // No version: SCORM 2004.
      const plain = await exportOf();
      expect(plain.headers.get('content-disposition')).to.include('-scorm2004.zip"');
    });

    it('lang exports the translation: manifest language, page, config; course.json stays whole', async () => {
      for (const version of ['scorm2004', 'scorm12'] as const) {
        const zip = await exportOf(`?version=${version}&lang=FR`);
        // The file name follows the exported title.
        const manifest = await expectPackage(zip, version, 'securite-incendie');
        expect(manifest).to.include('<title>Sécurité incendie</title>');
        expect(manifest).to.include(
          version === 'scorm12' ? '<imsmd:langstring xml:lang="fr">' : '<lom:string language="fr">',
        );
        const html = zip.entries.get('index.html')!.toString('utf8');
        expect(html).to.include('<html lang="fr" dir="ltr">');
        const config = configOf(html) as {
          lang: string;
          course: {
            title: string;
            locale: string;
            screens: { title: string; blocks: { text?: string }[] }[];
          };
        };
        expect(config.lang).to.equal('fr');
        expect(config.course.locale).to.equal('fr');
        expect(config.course.title).to.equal('Sécurité incendie');
        expect(config.course.screens[0].title).to.equal('Bienvenue');
        expect(config.course.screens[0].blocks[0].text).to.equal('Bonjour');
        expect(config.course.screens[1].title).to.equal('Middle'); // untranslated: the source text
        const entry = JSON.parse(zip.entries.get(COURSE_ENTRY)!.toString('utf8')) as CourseEntry;
        expect(entry.course.title).to.equal(ODD_TITLE);
      }
      // The source locale by name is the source.
      const en = await exportOf('?lang=en');
      expect(configOf(en.entries.get('index.html')!.toString('utf8')).lang).to.equal('en');
    });

    it('track=1 bakes in the Player API base and a course-bound token that verifies', async () => {
      const zip = await exportOf('?version=scorm12&track=1');
      await expectPackage(zip, 'scorm12');
      const config = configOf(zip.entries.get('index.html')!.toString('utf8')) as {
        track: { apiBase: string; token: string };
      };
      expect(config.track.apiBase).to.equal('http://lectern.test/player/v1');
      const { runTokenKey: key } = derivePlayerKeys(parseEncryptionKey(runTokenKey, 'RUN_TOKEN_KEY'), {
        derived: false,
      });
      expect(await trackingTokens(() => key).verify(config.track.token)).to.deep.equal({
        courseId: course.id,
        workspaceId: ws.id,
        version: 1,
      });
      // Rotating the course's tracking secret: the next package carries the next version.
      const rotated = await api(app.base, ws.key)<{ version: number }>(
        'POST',
        `/courses/${course.id}/tracking-secret/rotate`,
      );
      expect(rotated.status, rotated.text).to.equal(200);
      const next = configOf((await exportOf('?track=1')).entries.get('index.html')!.toString('utf8')) as {
        track: { token: string };
      };
      expect(await trackingTokens(() => key).verify(next.track.token)).to.include({ version: 2 });
      const off = await exportOf('?track=0');
      expect(configOf(off.entries.get('index.html')!.toString('utf8')).track).to.equal(null);
    });

    it('a draft exports (authors try a course in their LMS before publishing); a published one too', async () => {
      const req = api(app.base, ws.key);
      const draft = await req<Course>('POST', '/courses', {
        title: 'Draft',
        screens: [{ id: 'a', title: 'A', blocks: [{ id: 'a1', type: 'text', text: 'x' }] }],
      });
      expect(draft.body.data.status).to.equal('draft');
      const zip = await exportOf('?version=scorm2004', ws.key, draft.body.data.id);
      await validateManifest(zip.entries.get('imsmanifest.xml')!.toString('utf8'), 'scorm2004');
      expect(zip.headers.get('content-disposition')).to.equal('attachment; filename="draft-scorm2004.zip"');
      // No theme, no fonts: the config says so.
      const config = configOf(zip.entries.get('index.html')!.toString('utf8')) as {
        course: { theme: unknown; customFonts: unknown[] };
      };
      expect(config.course.theme).to.equal(null);
      expect(config.course.customFonts).to.deep.equal([]);
      expect([...zip.entries.keys()].some((n) => n.startsWith('fonts/'))).to.equal(false);

      const pub = await req('PATCH', `/courses/${draft.body.data.id}`, { status: 'published' });
      expect(pub.status, pub.text).to.equal(200);
      expect((await exportOf('?version=scorm12', ws.key, draft.body.data.id)).status).to.equal(200);
    });

    it('an RTL course: dir="rtl" on the page, Hebrew title escaped nowhere it need not be', async () => {
      const req = api(app.base, ws.key);
      const rtl = await req<Course>('POST', '/courses', {
        title: 'בטיחות באש',
        locale: 'he',
        direction: 'rtl',
        screens: [{ id: 'a', title: 'פתיחה', blocks: [{ id: 'a1', type: 'text', text: 'שלום' }] }],
      });
      expect(rtl.status, rtl.text).to.equal(201);
      for (const version of ['scorm12', 'scorm2004'] as const) {
        const zip = await exportOf(`?version=${version}`, ws.key, rtl.body.data.id);
        const manifest = zip.entries.get('imsmanifest.xml')!.toString('utf8');
        await validateManifest(manifest, version);
        expect(manifest).to.include('<title>בטיחות באש</title>');
        expect(zip.entries.get('index.html')!.toString('utf8')).to.include('<html lang="he" dir="rtl">');
        // Nothing ASCII is left of the title: the file is named after the course id.
        expect(zip.headers.get('content-disposition')).to.equal(
          `attachment; filename="${rtl.body.data.id}-${version}.zip"`,
        );
      }
    });

    it('an Arabic translation of an LTR course exports RTL: dir="rtl" on the page and in the config', async () => {
      const req = api(app.base, ws.key);
      const ltr = await req<Course>('POST', '/courses', {
        title: 'Fire drill',
        screens: [{ id: 'a', title: 'Start', blocks: [{ id: 'a1', type: 'text', text: 'Hello' }] }],
      });
      expect(ltr.status, ltr.text).to.equal(201);
      const tr = await req<{ id: string }>('POST', `/courses/${ltr.body.data.id}/translations`, {
        locale: 'ar',
      });
      expect(tr.status, tr.text).to.equal(201);
      await req('PATCH', `/courses/${ltr.body.data.id}/translations/${tr.body.data.id}`, {
        content: { title: 'تمرين الحريق' },
      });
      const ar = (await exportOf('?lang=ar', ws.key, ltr.body.data.id)).entries
        .get('index.html')!
        .toString('utf8');
      expect(ar).to.include('<html lang="ar" dir="rtl">');
      expect((configOf(ar) as { course: { direction: string } }).course.direction).to.equal('rtl');
      const en = (await exportOf('', ws.key, ltr.body.data.id)).entries.get('index.html')!.toString('utf8');
      expect(en).to.include('<html lang="en" dir="ltr">');
    });
  });

  describe('media: fetched into media/, the learner copy points at them, course.json keeps the originals', () => {
    let media: Course;
    let themeId: string;
    const at = (p: string) => `${fontBase}${p}`;
    /** The screens as stored: every media field shape, and the fields that are not media. */
    const mediaScreens = () => [
      {
        id: 'm1',
        title: 'Media',
        blocks: [
          { id: 'img', type: 'image', url: at('/pic.png'), alt: 'A picture' },
          { id: 'img-same-url', type: 'image', url: at('/pic.png') },
          { id: 'img-same-bytes', type: 'image', url: at('/pic-again.png') },
          { id: 'vid', type: 'video', url: at('/clip.mp4'), poster: at('/safe.svg') },
          { id: 'vid2', type: 'video', url: at('/clip.webm'), poster: at('/evil.svg') },
          { id: 'aud', type: 'audio', url: at('/song.mp3') },
          { id: 'slow', type: 'audio', url: at('/slow.mp4') },
          {
            id: 'chap',
            type: 'video_chapters',
            url: at('/clip.mp4'),
            chapters: [{ id: 'c1', time: 0, title: 'Go' }],
          },
          {
            id: 'hot',
            type: 'hotspot',
            image: at('/page.png'),
            spots: [{ id: 'h1', x: 0.5, y: 0.5, correct: true }],
          },
          {
            id: 'show',
            type: 'slideshow',
            slides: [
              { id: 's1', image: at('/missing.png') },
              { id: 's2', image: at('/oversize.png') },
              { id: 's3', image: 'data:image/png;base64,iVBORw0KGgo=' },
              { id: 's4', image: 'media://asset/42' },
              { id: 's5', image: at('/logo.gif') },
            ],
          },
          // Not media: links and frames navigate to the page they name, so they stay as written.
          { id: 'btn', type: 'button', label: 'Go', action: 'url', url: at('/pic.png') },
          { id: 'res', type: 'resource', title: 'Clip', url: at('/clip.mp4'), kind: 'video' },
          { id: 'emb', type: 'embed', url: at('/page.png') },
        ],
      },
    ];

    before(async () => {
      const req = api(app.base, ws.key);
      const theme = await req<{ id: string }>('POST', '/themes', {
        name: 'With logo',
        tokens: { concept: 'calm', logoUrl: at('/logo.gif') },
      });
      expect(theme.status, theme.text).to.equal(201);
      themeId = theme.body.data.id;
      const created = await req<Course>('POST', '/courses', {
        title: 'Media tour',
        screens: mediaScreens(),
        themeId,
      });
      expect(created.status, created.text).to.equal(201);
      media = created.body.data;
    });

    const resultOf = async (courseId: string) =>
      (
        await boundQuery<{ result: { warnings: string[] } }>(
          app.rt.orm.em.fork(),
          "select result from jobs where kind = 'scorm.export' and input->>'courseId' = ? and status = 'completed' order by created_at desc limit 1",
          [courseId],
        )
      )[0].result;

    for (const version of ['scorm2004', 'scorm12'] as const) {
      it(`${version}: each reachable file once, byte for byte; the config points at it; the rest left remote`, async () => {
        const zip = await exportOf(`?version=${version}`, ws.key, media.id);
        const manifest = await expectPackage(zip, version, 'media-tour');
        const files = [...zip.entries.keys()].filter((n) => n.startsWith('media/')).sort();
        const nameOf = (body: Buffer) => files.find((f) => zip.entries.get(f)!.equals(body));
        // pic.png and pic-again.png are the same bytes: one file. logo.gif serves the theme and a slide: one file.
        expect(files).to.have.length(6);
        const png = nameOf(PNG_BYTES)!;
        const mp4 = nameOf(MP4_BYTES)!;
        const webm = nameOf(WEBM_BYTES)!;
        const mp3 = nameOf(MP3_BYTES)!;
        const svg = nameOf(SAFE_SVG)!;
        const gif = nameOf(GIF_BYTES)!;
        expect([png, mp4, webm, mp3, svg, gif].sort()).to.deep.equal(files);
        expect(png).to.match(/^media\/[0-9a-f]{16}\.png$/);
        expect([mp4, webm, mp3, svg, gif].map((f) => f.slice(23))).to.deep.equal([
          'mp4',
          'webm',
          'mp3',
          'svg',
          'gif',
        ]);
        expect(files.every((f) => /^media\/[0-9a-f]{16}\.[a-z0-9]+$/.test(f))).to.equal(true);
        // The manifest lists them (and stayed valid against the XSDs: expectPackage).
        for (const f of files) expect(manifest).to.include(`<file href="${f}"/>`);
        // Formats that are compressed already are stored, not deflated again; an SVG (text) is deflated.
        const methods = new Map(
          (await unzipper.Open.buffer(zip.bytes)).files.map((f) => [f.path, f.compressionMethod]),
        );
        expect([png, mp4, webm, mp3, gif, svg].map((f) => methods.get(f))).to.deep.equal([0, 0, 0, 0, 0, 8]);

        const config = configOf(zip.entries.get('index.html')!.toString('utf8')) as {
          course: {
            screens: { blocks: Record<string, unknown>[] }[];
            theme: { tokens: Record<string, unknown> };
          };
        };
        const [b] = config.course.screens.map((sc) => Object.fromEntries(sc.blocks.map((x) => [x.id, x])));
        const stored = Object.fromEntries(
          mediaScreens()[0].blocks.map((x) => [x.id, x as Record<string, unknown>]),
        );
        expect(b.img).to.deep.equal({ ...stored.img, url: png });
        expect(b['img-same-url'].url).to.equal(png);
        expect(b['img-same-bytes'].url).to.equal(png);
        expect(b.vid).to.deep.include({ url: mp4, poster: svg });
        // An SVG with an event handler could run script in the package's origin: left remote.
        expect(b.vid2).to.deep.include({ url: webm, poster: at('/evil.svg') });
        expect(b.aud.url).to.equal(mp3);
        expect(b.slow.url).to.equal(at('/slow.mp4')); // timed out
        expect(b.chap).to.deep.equal({ ...stored.chap, url: mp4 });
        expect(b.hot).to.deep.equal(stored.hot); // HTML served as image/png
        expect((b.show.slides as { image: string }[]).map((x) => x.image)).to.deep.equal([
          at('/missing.png'), // 404
          at('/oversize.png'), // over SCORM_MEDIA_MAX_BYTES
          'data:image/png;base64,iVBORw0KGgo=', // inside already
          null, // not an upload's id: resolves nowhere, the player shows its placeholder
          gif,
        ]);
        expect((b.show.slides as Record<string, unknown>[])[3]).to.deep.equal({
          id: 's4',
          image: null,
          unavailable: true,
        });
        for (const id of ['btn', 'res', 'emb']) expect(b[id], id).to.deep.equal(stored[id]);
        expect(config.course.theme.tokens).to.deep.equal({ concept: 'calm', logoUrl: gif });

        // course.json is the backup: the URLs as stored.
        const entry = JSON.parse(zip.entries.get(COURSE_ENTRY)!.toString('utf8')) as CourseEntry;
        expect(entry.course.screens).to.deep.equal(mediaScreens());
        expect(entry.theme?.tokens).to.deep.equal({ concept: 'calm', logoUrl: at('/logo.gif') });

        const { warnings } = await resultOf(media.id);
        expect(warnings).to.have.length(6);
        expect(warnings).to.include(
          'media media://asset/42 not packaged: no file of this workspace (deleted, another workspace’s or not an id)',
        );
        const about = (p: string) =>
          warnings.find((w) => w.startsWith(`media ${at(p)} left as a remote URL: `));
        expect(about('/evil.svg')).to.include('an SVG with an event handler attribute');
        expect(about('/slow.mp4')).to.include('timed out after 3000 ms');
        expect(about('/page.png')).to.include('not a PNG, JPEG, GIF, WebP or SVG image');
        expect(about('/missing.png')).to.include('HTTP 404');
        expect(about('/oversize.png')).to.include(`larger than ${MEDIA_MAX} bytes`);
      });
    }

    it('the package media cap: past SCORM_PACKAGE_MEDIA_MAX_BYTES, the rest stays remote with a warning', async () => {
      const req = api(app.base, ws.key);
      const big = await req<Course>('POST', '/courses', {
        title: 'Big pictures',
        screens: [
          {
            id: 'b',
            title: 'B',
            blocks: BIG.map((_, i) => ({ id: `b${i}`, type: 'image', url: at(`/big-${i}.png`) })),
          },
        ],
      });
      expect(big.status, big.text).to.equal(201);
      const zip = await exportOf('', ws.key, big.body.data.id);
      await expectPackage(zip, 'scorm2004', 'big-pictures');
      const files = [...zip.entries.keys()].filter((n) => n.startsWith('media/'));
      // Three files of 90 kB against a 250 kB cap: two go in (which two depends on the order they arrive in).
      expect(files).to.have.length(2);
      expect(files.reduce((n, f) => n + zip.entries.get(f)!.length, 0)).to.be.at.most(PACKAGE_MEDIA_MAX);
      for (const f of files) expect(BIG.some((body) => body.equals(zip.entries.get(f)!))).to.equal(true);
      const config = configOf(zip.entries.get('index.html')!.toString('utf8')) as {
        course: { screens: { blocks: { url: string }[] }[] };
      };
      const urls = config.course.screens[0].blocks.map((x) => x.url);
      const remote = urls.filter((u) => u.startsWith('http'));
      expect(remote).to.have.length(1);
      expect(urls.filter((u) => u.startsWith('media/')).sort()).to.deep.equal(files.sort());
      expect((await resultOf(big.body.data.id)).warnings).to.deep.equal([
        `media ${remote[0]} left as a remote URL: the package media cap is reached`,
      ]);
    });

    it('the fetcher gives a refused file back to the package budget and leaves no file; a kept one stays counted', async () => {
      const budget = { remaining: 1_000_000 };
      const file = path.join(workTmp, 'probe');
      const opts = { allowPrivate: true, maxBytes: MEDIA_MAX, timeoutMs: 3_000, budget, file };
      const over = await fetchToFile(at('/oversize.png'), opts);
      expect(over).to.deep.equal({ ok: false, reason: `larger than ${MEDIA_MAX} bytes` });
      expect(budget.remaining).to.equal(1_000_000);
      expect(existsSync(file)).to.equal(false);
      const slow = await fetchToFile(at('/slow.mp4'), { ...opts, timeoutMs: 300 });
      expect(slow).to.deep.equal({ ok: false, reason: 'timed out after 300 ms' });
      expect(budget.remaining).to.equal(1_000_000);
      expect(existsSync(file)).to.equal(false);
      const got = await fetchToFile(at('/clip.mp4'), opts);
      expect(got.ok && got.bytes).to.equal(MP4_BYTES.length);
      expect(budget.remaining).to.equal(1_000_000 - MP4_BYTES.length);
      expect((await readFile(file)).equals(MP4_BYTES)).to.equal(true);
      await rm(file);
    });

    it('an upload of the workspace (media://) is read from the object store into the package; another workspace’s or a deleted one is not, and shows the placeholder', async () => {
      const png = await pngOf(64, 32);
      const mine = await uploadForm(app.base, ws.key, { file: { bytes: png } });
      expect(mine.status, mine.text).to.equal(201);
      const gone = await uploadForm(app.base, ws.key, { file: { bytes: await pngOf(3, 3) } });
      expect(gone.status, gone.text).to.equal(201);
      expect((await api(app.base, ws.key)('DELETE', `/media/${gone.body.data.id}`)).status).to.equal(204);
      const other = await makeWorkspace(app.rt.orm.em.fork(), 'scale', 'SCORM export, another workspace');
      const theirs = await uploadForm(app.base, other.key, { file: { bytes: await pngOf(4, 4) } });
      expect(theirs.status, theirs.text).to.equal(201);
      const created = await api(app.base, ws.key)<Course>('POST', '/courses', {
        title: 'Uploads',
        screens: [
          {
            id: 'u1',
            title: 'Uploads',
            blocks: [
              { id: 'mine', type: 'image', url: mine.body.data.url, alt: 'Mine' },
              { id: 'theirs', type: 'image', url: theirs.body.data.url, alt: 'Theirs' },
              { id: 'gone', type: 'video', url: gone.body.data.url },
            ],
          },
        ],
      });
      expect(created.status, created.text).to.equal(201);
      const zip = await exportOf('?version=scorm2004', ws.key, created.body.data.id);
      const manifest = await expectPackage(zip, 'scorm2004', 'uploads');
      const files = [...zip.entries.keys()].filter((n) => n.startsWith('media/'));
      expect(files).to.have.length(1);
      const [file] = files;
      expect(file).to.match(/^media\/[0-9a-f]{16}\.png$/);
      expect(zip.entries.get(file!)!.equals(png)).to.equal(true);
      expect(manifest).to.include(`<file href="${file}"/>`);
      const config = configOf(zip.entries.get('index.html')!.toString('utf8')) as {
        course: { screens: { blocks: Record<string, unknown>[] }[] };
      };
      const [mineServed, theirsServed, goneServed] = config.course.screens[0]!.blocks;
      expect(mineServed!.url).to.equal(file);
      expect(theirsServed).to.include({ url: null, unavailable: true });
      expect(goneServed).to.include({ url: null, unavailable: true });
      // Nothing of the store's address or signatures travels in the package.
      expect(zip.entries.get('index.html')!.toString('utf8')).not.to.include('X-Amz-');
      const { warnings } = await resultOf(created.body.data.id);
      expect(warnings).to.deep.equal([
        `media ${theirs.body.data.url} not packaged: no file of this workspace (deleted, another workspace’s or not an id)`,
        `media ${gone.body.data.url} not packaged: no file of this workspace (deleted, another workspace’s or not an id)`,
      ]);
    });

    it('a processed video upload with no poster of its own packs its poster frame and the page points at it; an author’s poster wins; a deleted video packs nothing', async () => {
      const media = await startTestWorkers('media', (rt) =>
        runJobWorker(rt, mediaProcessJob({ storage: rt.storage })),
      );
      try {
        const uploadVideo = async () => {
          const res = await uploadForm(app.base, ws.key, {
            file: { bytes: await avSample('mp4') },
            kind: 'video',
          });
          expect(res.status, res.text).to.equal(201);
          const m = await processedMedia(app.base, ws.key, res.body.data.id);
          expect(m.status, m.error ?? '').to.equal('ready');
          return m;
        };
        const video = await uploadVideo();
        const gone = await uploadVideo();
        expect((await api(app.base, ws.key)('DELETE', `/media/${gone.id}`)).status).to.equal(204);
        const png = await pngOf(16, 12);
        const still = await uploadForm(app.base, ws.key, { file: { bytes: png } });
        expect(still.status, still.text).to.equal(201);
        const created = await api(app.base, ws.key)<Course>('POST', '/courses', {
          title: 'Posters',
          screens: [
            {
              id: 'p1',
              title: 'Posters',
              blocks: [
                { id: 'framed', type: 'video', url: video.url },
                { id: 'own', type: 'video', url: video.url, poster: still.body.data.url },
                { id: 'gone', type: 'video', url: gone.url },
              ],
            },
          ],
        });
        expect(created.status, created.text).to.equal(201);
        const zip = await exportOf('?version=scorm2004', ws.key, created.body.data.id);
        const manifest = await expectPackage(zip, 'scorm2004', 'posters');
        const files = [...zip.entries.keys()].filter((n) => n.startsWith('media/')).sort();
        const byExt = (ext: string) => files.filter((f) => f.endsWith(`.${ext}`));
        expect(byExt('mp4')).to.have.length(1);
        expect(byExt('png')).to.have.length(1);
        expect(byExt('webp')).to.have.length(1);
        expect(files).to.have.length(3);
        const [frame] = byExt('webp');
        const webp = zip.entries.get(frame!)!;
        expect(webp.subarray(0, 4).toString('ascii') + webp.subarray(8, 12).toString('ascii')).to.equal(
          'RIFFWEBP',
        );
        expect(manifest).to.include(`<file href="${frame}"/>`);
        const config = configOf(zip.entries.get('index.html')!.toString('utf8')) as {
          course: { screens: { blocks: Record<string, unknown>[] }[] };
        };
        const [framed, own, deleted] = config.course.screens[0]!.blocks;
        expect(framed).to.deep.include({ url: byExt('mp4')[0], poster: frame, width: 320, height: 240 });
        expect(own).to.deep.include({ url: byExt('mp4')[0], poster: byExt('png')[0] });
        expect(zip.entries.get(byExt('png')[0]!)!.equals(png)).to.equal(true);
        expect(deleted).to.deep.equal({ id: 'gone', type: 'video', url: null, unavailable: true });
        // course.json keeps the blocks as stored: no poster was added to them.
        const entry = JSON.parse(zip.entries.get(COURSE_ENTRY)!.toString('utf8')) as CourseEntry;
        expect(JSON.stringify(entry.course.screens)).not.to.include('"poster":"media/');
        expect((await resultOf(created.body.data.id)).warnings).to.deep.equal([
          `media ${gone.url} not packaged: no file of this workspace (deleted, another workspace’s or not an id)`,
        ]);
      } finally {
        await media.stop();
      }
    });

    it("every export left the worker's temp directory empty, refused files included", async () => {
      expect(await readdir(workTmp)).to.deep.equal([]);
    });

    it('a course without media has no media/ entries and no media warnings', async () => {
      const zip = await exportOf();
      expect([...zip.entries.keys()].some((n) => n.startsWith('media/'))).to.equal(false);
      const { warnings } = await resultOf(course.id);
      expect(warnings).to.deep.equal([`font ${fontBase}/missing.woff2 left as a remote URL: HTTP 404`]);
    });
  });

  describe('refusals: nothing is exported', () => {
    const exportJobs = async () =>
      Number(
        (
          await boundQuery<{ n: string }>(
            app.rt.orm.em.fork(),
            "select count(*) as n from jobs where kind = 'scorm.export'",
          )
        )[0].n,
      );
    let jobsBefore = 0;
    before(async () => {
      jobsBefore = await exportJobs();
    });

    it('400 on a bad version, lang or track, with issues', async () => {
      expectIssue(await asApi(await exportOf('?version=scorm3')), ['query', 'version']);
      expectIssue(await asApi(await exportOf('?lang=not%20a%20tag!')), ['query', 'lang']);
      expectIssue(await asApi(await exportOf('?lang=')), ['query', 'lang']);
      expectIssue(await asApi(await exportOf('?track=yes')), ['query', 'track']);
      expectIssue(await asApi(await exportOf('?version=scorm12&version=scorm2004')), ['query', 'version']);
      expect(await exportJobs()).to.equal(jobsBefore);
    });

    it('404 when the course has no such locale (named or same language), or no such course', async () => {
      for (const q of ['?lang=de', '?lang=fr-CA', '?lang=pt-BR&version=scorm12']) {
        const res = await asApi(await exportOf(q));
        expectNotFound(res);
        expect(res.body.message).to.include('en, fr');
      }
      expectNotFound(await asApi(await exportOf('', ws.key, 'crs_nope')));
    });

    it("404 for another workspace's course, even with track=1 (no token is minted for it)", async () => {
      const other = await makeWorkspace(app.rt.orm.em.fork(), 'scale', 'Other');
      expectNotFound(await asApi(await exportOf('?track=1', other.key)));
      expectNotFound(await asApi(await exportOf('?version=scorm12', other.key)));
      // Refused before any job: the only export jobs of this block are the three locale 404s (failed jobs).
      expect(await exportJobs()).to.equal(jobsBefore + 3);
    });

    it('403 plan_required below Scale (Sandbox, Build), before the query is looked at', async () => {
      for (const plan of ['sandbox', 'build'] as const) {
        const low = await makeWorkspace(app.rt.orm.em.fork(), plan, plan);
        const c = await api(app.base, low.key)<Course>('POST', '/courses', {
          title: 'Small',
          screens: [{ id: 'a', title: 'A', blocks: [{ id: 'a1', type: 'text', text: 'x' }] }],
        });
        expect(c.status, c.text).to.equal(201);
        expectPlanRequired(await asApi(await exportOf('', low.key, c.body.data.id)), 'Scale');
        expectPlanRequired(await asApi(await exportOf('?version=bogus', low.key, c.body.data.id)), 'Scale');
      }
      expect(await exportJobs()).to.equal(jobsBefore + 3);
    });

    it('504 with the job id when no scorm worker answers in time (stops the worker: keep it last but one)', async () => {
      await worker.stop();
      worker = undefined as unknown as JobWorkerHandle;
      const hasty = await startTestApp({ RATE_LIMIT_PER_MINUTE: '100000', SCORM_EXPORT_TIMEOUT_MS: '300' });
      try {
        const zip = await getZip(hasty.base, ws.key, `/courses/${course.id}/scorm`);
        expect(zip.status).to.equal(504);
        expect(zip.error?.error).to.equal('timeout');
        expect(zip.error?.jobId).to.match(/^job_/);
        expect(zip.error?.message).to.include('SCORM export');
      } finally {
        await hasty.close();
      }
    });

    it("`lectern worker scorm` as its own process serves exports (and reads no other worker's settings)", async () => {
      const env: Record<string, string> = { PATH: process.env.PATH ?? '' };
      for (const [k, v] of Object.entries(testConfig())) if (v !== undefined) env[k] = String(v);
      Object.assign(env, {
        WORKER_HTTP_PORT: '0',
        PLAYER_ASSETS_DIR: assets.dir,
        // A certificate worker would refuse to start on this; the scorm worker never reads it.
        CERTIFICATE_FONT_DIR: '/nonexistent/fonts',
      });
      const child = spawn(process.execPath, ['--import', 'tsx', 'apps/cli/src/main.ts', 'worker', 'scorm'], {
        env,
        stdio: ['ignore', 'ignore', 'pipe'],
      });
      let stderr = '';
      child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
      try {
        const zip = await exportOf('?version=scorm12&lang=fr');
        expect(zip.status, `${JSON.stringify(zip.error)} ${stderr}`).to.equal(200);
        expect(zip.headers.get('content-disposition')).to.include('securite-incendie-scorm12.zip');
        expect(child.exitCode, stderr).to.equal(null);
      } finally {
        child.kill('SIGTERM');
        if (child.exitCode === null && child.signalCode === null) await once(child, 'exit');
      }
    });

    it('401 without a key', async () => {
      const res = await fetch(`${app.base}/courses/${course.id}/scorm`);
      expect(res.status).to.equal(401);
    });
  });
});

/** A failed export as the shared assertion helpers take it. */
async function asApi(zip: Zip) {
  expect(zip.status).to.not.equal(200);
  return {
    status: zip.status,
    headers: zip.headers,
    text: zip.bytes.toString('utf8'),
    body: { data: undefined as never, ...zip.error! },
  };
}
