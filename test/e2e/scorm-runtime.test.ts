/**
 * The package's player in a real SCORM runtime: scorm-again plays the LMS in Chromium (its API object on the
 * LMS page, the SCO in an iframe), for SCORM 1.2 and 2004. A learner answers by keyboard and clicks, leaves
 * half-way, comes back to the same place with their answers (suspend_data, entry "resume"), and finishes;
 * the LMS holds status, score and interactions, and saw Initialize and Terminate once per session. With
 * track=1 the run also reaches this service (source scorm), and an unreachable service harms nothing.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { chromium, type Browser, type Frame, type Page } from 'playwright-core';
import { lazyPlayerKeys } from '@lectern/api';
import type { JobWorkerHandle } from '@lectern/jobs';
import { closeRuntime } from '@lectern/runtime';
import { startScormExportWorker } from '@lectern/scorm';
import { parseEnv } from '@lectern/config';
import {
  CERTIFICATE_WORKER_ENV,
  certificateRenderSettings,
  startCertificateWorker,
} from '@lectern/certificates';
import { CERTIFICATE_STRINGS } from '@lectern/player';
import {
  makeWorkspace,
  startTestApp,
  testRuntime,
  type TestApp,
  type TestRuntime,
} from '../support/context.js';
import { waitFor } from '../support/http.js';
import { api } from '../support/authoring.js';
import { CHROMIUM, buildPlayerOnce, watchErrors } from '../support/player-browser.js';
import { exportedScormPackage, startLmsServer, type ScormVersionForTest } from '../support/scorm-package.js';

const SCREENS = [
  {
    id: 's1',
    title: 'Basics',
    blocks: [
      { id: 'h1', type: 'heading', text: 'Fire basics' },
      {
        id: 'q1',
        type: 'quiz_single_choice',
        question: 'Which extinguisher for electrical fires?',
        options: [
          { id: 'co2', text: 'CO2', correct: true },
          { id: 'water', text: 'Water' },
        ],
      },
    ],
  },
  {
    id: 's2',
    title: 'Checks',
    blocks: [
      { id: 'h2', type: 'heading', text: 'Quick checks' },
      { id: 'q2', type: 'quiz_true_false', statement: 'Fire doors stay closed', correct: true },
    ],
  },
  { id: 's3', title: 'End', blocks: [{ id: 'h3', type: 'heading', text: 'All done' }] },
];

/** The course every case takes: two graded screens, then the end; passing at 50 %, results at the end. */
const COURSE = { title: 'Fire safety', screens: SCREENS, passingScore: 50, quizFeedback: 'deferred' };

type Cmi = Record<string, unknown> & {
  core?: Record<string, unknown> & { score?: Record<string, string> };
  score?: Record<string, string>;
  interactions?: unknown;
};
/** scorm-again's CMI as JSON keeps interactions as an object keyed by index. */
const interactionsOf = (cmi: Cmi): Record<string, unknown>[] => {
  const i = cmi.interactions;
  const isRecord = (x: unknown): x is Record<string, unknown> => typeof x === 'object' && x !== null;
  if (Array.isArray(i)) return i.filter(isRecord);
  if (!isRecord(i)) return [];
  if (Array.isArray(i.childArray)) return i.childArray.filter(isRecord);
  return Object.values(i).filter(isRecord);
};

describe('SCORM runtime: the package in scorm-again (Chromium)', function () {
  this.timeout(180_000);
  let browser: Browser;
  let lms: Awaited<ReturnType<typeof startLmsServer>>;

  let app: TestApp;
  let req: ReturnType<typeof api>;
  let wsKey: string;
  let workerRt: TestRuntime;
  let worker: JobWorkerHandle;
  let certificates: JobWorkerHandle;

  before(async () => {
    const assets = await buildPlayerOnce();
    app = await startTestApp({ PLAYER_ASSETS_DIR: assets.dir });
    workerRt = await testRuntime('scorm-worker');
    worker = await startScormExportWorker(workerRt, {
      assetsDir: assets.dir,
      // The media test serves its files on 127.0.0.1.
      allowPrivate: true,
      fontMaxBytes: 1_000_000,
      fontTimeoutMs: 5_000,
      mediaMaxBytes: 1_000_000,
      mediaTimeoutMs: 5_000,
      packageMediaMaxBytes: 5_000_000,
    });
    // track=1 packages offer the certificate, rendered by the certificate worker.
    certificates = await startCertificateWorker(
      workerRt,
      certificateRenderSettings(parseEnv(CERTIFICATE_WORKER_ENV, {})),
    );
    const ws = await makeWorkspace(app.rt.orm.em.fork(), 'scale', 'SCORM runtime');
    wsKey = ws.key;
    req = api(app.base, ws.key);
    lms = await startLmsServer();
    // A track=1 package calls PUBLIC_URL (http://lectern.test in tests): resolve that host to this app.
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: ['--no-sandbox', `--host-resolver-rules=MAP lectern.test:80 127.0.0.1:${new URL(app.url).port}`],
    });
  });
  after(async () => {
    await browser?.close();
    await lms?.close();
    await certificates?.stop();
    await worker?.stop();
    if (workerRt) await closeRuntime(workerRt, { keepStorage: true });
    await app?.close();
  });

  /** A new course of COURSE (published when asked), and its real export unzipped for the LMS. */
  async function packageOf(version: ScormVersionForTest, opts: { publish?: boolean; track?: boolean } = {}) {
    const created = await req<{ id: string }>('POST', '/courses', COURSE);
    expect(created.status, created.text).to.equal(201);
    const courseId = created.body.data.id;
    if (opts.publish)
      expect((await req('PATCH', `/courses/${courseId}`, { status: 'published' })).status).to.equal(200);
    const pkg = await exportedScormPackage(app.base, wsKey, courseId, version, { track: opts.track });
    return { courseId, ...pkg };
  }

  async function launch(page: Page, version: ScormVersionForTest, pkg: string, cmi: unknown): Promise<Frame> {
    await page.evaluate(
      `window.lms.launch(${JSON.stringify(version)}, ${JSON.stringify(pkg)}, ${JSON.stringify(cmi)})`,
    );
    const frame = await waitFor(async () => page.frame({ url: /\/index\.html$/ }), { what: 'the SCO frame' });
    await frame.waitForSelector('#lectern-player[data-ready="true"]');
    return frame;
  }
  const calls = (page: Page) => page.evaluate('window.lms.calls') as Promise<Record<string, number>>;
  const cmiOf = (page: Page) => page.evaluate('window.lms.cmi()') as Promise<Cmi>;
  /** Leaves the SCO the way an LMS closes it: the frame goes, the SCO's pagehide terminates. */
  const unload = (page: Page) => page.evaluate('window.lms.unload()');

  for (const version of ['1.2', '2004'] as const) {
    it(`SCORM ${version}: initialize, report, resume where the learner left with their answers, finish, terminate once`, async () => {
      const { dir } = await packageOf(version);
      const name = `fire-${version.replace('.', '')}`;
      lms.addPackage(name, dir);
      const page = await browser.newPage();
      const errors = watchErrors(page);
      try {
        await page.goto(`${lms.url}/lms`);
        const learner =
          version === '1.2'
            ? { core: { student_id: 'u-17', student_name: 'Lovelace, Ada' } }
            : { learner_id: 'u-17', learner_name: 'Ada Lovelace' };
        let sco = await launch(page, version, name, learner);
        await sco.getByRole('heading', { name: 'Fire basics' }).waitFor();
        // Keyboard: focus the first option, arrow to the right one, Enter submits the form.
        await sco.getByRole('radio', { name: 'Water' }).focus();
        await page.keyboard.press('ArrowUp');
        expect(await sco.getByRole('radio', { name: 'CO2' }).isChecked()).to.equal(true);
        await page.keyboard.press('Enter');
        await sco.getByRole('button', { name: 'Continue' }).click();
        await sco.getByRole('heading', { name: 'Quick checks' }).waitFor();

        let cmi = await cmiOf(page);
        if (version === '1.2') {
          expect(cmi.core).to.include({
            lesson_status: 'incomplete',
            lesson_location: 's2',
            exit: 'suspend',
          });
        } else {
          expect(cmi).to.include({ completion_status: 'incomplete', location: 's2', exit: 'suspend' });
          const first = interactionsOf(cmi)[0];
          expect(first).to.include({ id: 'q1', type: 'choice', learner_response: 'co2', result: 'correct' });
        }
        const suspend = String(cmi.suspend_data);
        expect(suspend).to.equal('[1,1,1,0]');
        expect(await calls(page)).to.include(version === '1.2' ? { LMSInitialize: 1 } : { Initialize: 1 });

        await unload(page);
        const first = await calls(page);
        expect(first[version === '1.2' ? 'LMSFinish' : 'Terminate']).to.equal(1);
        cmi = await cmiOf(page);
        const time = version === '1.2' ? cmi.core?.session_time : cmi.session_time;
        expect(String(time)).to.match(version === '1.2' ? /^\d{2,4}:\d\d:\d\d(\.\d{1,2})?$/ : /^PT/);

        // The next launch: the LMS hands back what it kept, with entry "resume".
        const resume =
          version === '1.2'
            ? {
                core: {
                  ...learner.core,
                  entry: 'resume',
                  lesson_location: 's2',
                  lesson_status: 'incomplete',
                },
                suspend_data: suspend,
              }
            : {
                ...learner,
                entry: 'resume',
                location: 's2',
                completion_status: 'incomplete',
                suspend_data: suspend,
              };
        sco = await launch(page, version, name, resume);
        await sco.getByRole('heading', { name: 'Quick checks' }).waitFor();
        await sco.getByRole('button', { name: 'Back' }).click();
        await sco.getByRole('heading', { name: 'Fire basics' }).waitFor();
        expect(await sco.getByRole('radio', { name: 'CO2' }).isChecked()).to.equal(true);
        await sco.getByRole('button', { name: 'Continue' }).click();
        await sco.getByRole('radio', { name: 'True' }).click();
        await sco.getByRole('button', { name: 'Submit' }).click();
        await sco.getByRole('button', { name: 'Continue' }).click();
        await sco.getByRole('heading', { name: 'All done' }).waitFor();
        await sco.getByText('Score: 100%').waitFor();
        // The review is built in the package from its own keys, as the Player API builds it.
        const review = sco.locator('.lp-review');
        await review.waitFor();
        expect(await review.locator('.lp-review-item').count()).to.equal(2);
        expect(await review.locator('[data-block="q1"]').innerText()).to.include('CO2');
        expect(await review.innerText()).to.not.include('Correct answer');
        // Without track=1 there is no service to issue a certificate: none is offered.
        expect(await sco.locator('.lp-certificate').count()).to.equal(0);

        cmi = await cmiOf(page);
        if (version === '1.2') {
          expect(cmi.core).to.include({ lesson_status: 'passed', lesson_location: 's3', exit: '' });
          expect(cmi.core?.score).to.include({ raw: '100', min: '0', max: '100' });
        } else {
          expect(cmi).to.include({
            completion_status: 'completed',
            success_status: 'passed',
            exit: 'normal',
          });
          expect(cmi.score).to.include({ scaled: '1', raw: '100', min: '0', max: '100' });
          const list = interactionsOf(cmi);
          expect(list.map((i) => [i.id, i.type, i.learner_response, i.result])).to.have.deep.members([
            ['q1', 'choice', 'co2', 'correct'],
            ['q2', 'true-false', 'true', 'correct'],
          ]);
        }
        await unload(page);
        const second = await calls(page);
        expect(second[version === '1.2' ? 'LMSInitialize' : 'Initialize']).to.equal(1);
        expect(second[version === '1.2' ? 'LMSFinish' : 'Terminate']).to.equal(1);
        expect(second[version === '1.2' ? 'LMSCommit' : 'Commit']).to.be.greaterThan(1);
        expect(errors).to.deep.equal([]);
      } finally {
        await page.close();
      }
    });
  }

  it('no LMS: the package still plays, with a notice and no error', async () => {
    const { dir } = await packageOf('2004');
    lms.addPackage('alone', dir);
    const page = await browser.newPage();
    const errors = watchErrors(page);
    try {
      await page.goto(`${lms.url}/pkg/alone/index.html`);
      await page.waitForSelector('#lectern-player[data-ready="true"]');
      await page.getByText('No learning system was found').waitFor();
      await page.getByRole('radio', { name: 'CO2' }).click();
      await page.getByRole('button', { name: 'Submit' }).click();
      await page.getByRole('button', { name: 'Continue' }).click();
      await page.getByRole('heading', { name: 'Quick checks' }).waitFor();
      expect(errors).to.deep.equal([]);
    } finally {
      await page.close();
    }
  });

  it('packaged media and fonts load from the package, with their host gone', async () => {
    // Real files the browser decodes: a PNG, an SVG drawing, a WAV, a TrueType face (CI installs fonts-noto-core).
    const wav = Buffer.alloc(44 + 800, 0x80);
    wav.write('RIFF', 0);
    wav.writeUInt32LE(36 + 800, 4);
    wav.write('WAVEfmt ', 8);
    wav.writeUInt32LE(16, 16);
    wav.writeUInt16LE(1, 20); // PCM
    wav.writeUInt16LE(1, 22); // mono
    wav.writeUInt32LE(8000, 24);
    wav.writeUInt32LE(8000, 28);
    wav.writeUInt16LE(1, 32);
    wav.writeUInt16LE(8, 34);
    wav.write('data', 36);
    wav.writeUInt32LE(800, 40);
    const files: Record<string, Buffer> = {
      '/dot.png': Buffer.from(
        'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==',
        'base64',
      ),
      '/box.svg': Buffer.from(
        '<svg xmlns="http://www.w3.org/2000/svg" width="3" height="2"><rect width="3" height="2"/></svg>',
      ),
      '/tone.wav': wav,
      '/face.ttf': readFileSync('/usr/share/fonts/truetype/noto/NotoSansArabic-Regular.ttf'),
    };
    const host = http.createServer((q, res) => {
      const body = files[q.url ?? ''];
      res.writeHead(body ? 200 : 404);
      res.end(body);
    });
    await new Promise<void>((r) => host.listen(0, '127.0.0.1', r));
    const at = (p: string) => `http://127.0.0.1:${(host.address() as AddressInfo).port}${p}`;
    const theme = await req<{ id: string }>('POST', '/themes', {
      name: 'Packed',
      tokens: { logoUrl: at('/box.svg'), fontFamily: 'Packed Face' },
      customFonts: [{ family: 'Packed Face', url: at('/face.ttf') }],
    });
    expect(theme.status, theme.text).to.equal(201);
    const created = await req<{ id: string }>('POST', '/courses', {
      title: 'Packed media',
      themeId: theme.body.data.id,
      screens: [
        {
          id: 'm',
          title: 'Media',
          blocks: [
            { id: 'i', type: 'image', url: at('/dot.png'), alt: 'Dot' },
            { id: 'a', type: 'audio', url: at('/tone.wav'), caption: 'Tone' },
            { id: 's', type: 'slideshow', slides: [{ id: 's1', image: at('/box.svg'), alt: 'Box' }] },
          ],
        },
      ],
    });
    expect(created.status, created.text).to.equal(201);
    const { dir, config } = await exportedScormPackage(app.base, wsKey, created.body.data.id, '2004');
    await new Promise<void>((r) => {
      host.closeAllConnections();
      host.close(() => r());
    });
    expect(JSON.stringify(config)).to.not.include('127.0.0.1');
    lms.addPackage('media', dir);
    const page = await browser.newPage();
    const errors = watchErrors(page);
    const outside: string[] = [];
    page.on('request', (r) => {
      if (!r.url().startsWith(lms.url)) outside.push(r.url());
    });
    try {
      await page.goto(`${lms.url}/pkg/media/index.html`);
      await page.waitForSelector('#lectern-player[data-ready="true"]');
      const loaded = (selector: string) =>
        page.waitForFunction(
          `(() => { const i = document.querySelector(${JSON.stringify(selector)}); return i && i.complete && i.naturalWidth > 0 && i.currentSrc; })()`,
        );
      for (const [selector, width] of [
        ['img[alt="Dot"]', 1],
        ['img[alt="Box"]', 3],
        ['img.lp-logo', 3],
      ] as const) {
        const src = String(await (await loaded(selector)).jsonValue());
        expect(src, selector).to.match(new RegExp(`^${lms.url}/pkg/media/media/[0-9a-f]{16}\\.(png|svg)$`));
        expect(
          await page.$eval(selector, (i) => (i as unknown as { naturalWidth: number }).naturalWidth),
        ).to.equal(width);
      }
      await page.waitForFunction(`document.querySelector('audio').readyState >= 1`);
      expect(await page.$eval('audio', (a) => (a as unknown as { currentSrc: string }).currentSrc)).to.match(
        /\/pkg\/media\/media\/[0-9a-f]{16}\.wav$/,
      );
      const faces = (await page.evaluate(
        `document.fonts.load('16px "Packed Face"').then((l) => l.map((f) => f.status))`,
      )) as string[];
      expect(faces).to.deep.equal(['loaded']);
      expect(outside).to.deep.equal([]);
      expect(errors).to.deep.equal([]);
    } finally {
      await page.close();
    }
  });

  describe('track=1', () => {
    it('the run reaches the service as source scorm under the LMS learner; unreachable, the LMS run still completes', async () => {
      const { courseId, dir: trackedDir, config } = await packageOf('1.2', { publish: true, track: true });
      const track = config.track as { apiBase: string; token: string };
      expect(track.apiBase).to.equal('http://lectern.test/player/v1');
      expect(await lazyPlayerKeys(app.rt.cfg)().tracking.verify(track.token)).to.include({ courseId });

      // The same package where the service cannot be reached: its config points at a loopback port nothing
      // listens on (as if the service had moved); the tracking open fails and the learner never notices.
      const closed = http.createServer();
      await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
      const { port } = closed.address() as AddressInfo;
      await new Promise<void>((r) => closed.close(() => r()));
      const untracked = await packageOf('1.2', { publish: true, track: true });
      const untrackedDir = untracked.dir;
      const index = path.join(untrackedDir, 'index.html');
      writeFileSync(
        index,
        readFileSync(index, 'utf8').replace(
          'http://lectern.test/player/v1',
          `http://127.0.0.1:${port}/player/v1`,
        ),
      );

      const take = async (pkg: string, dir: string, learnerId: string) => {
        lms.addPackage(pkg, dir);
        const page = await browser.newPage();
        const errors = watchErrors(page);
        try {
          await page.goto(`${lms.url}/lms`);
          const sco = await launch(page, '1.2', pkg, {
            core: { student_id: learnerId, student_name: 'Hopper, Grace' },
          });
          await sco.getByRole('radio', { name: 'CO2' }).click();
          await sco.getByRole('button', { name: 'Submit' }).click();
          await sco.getByRole('button', { name: 'Continue' }).click();
          await sco.getByRole('radio', { name: 'False' }).click();
          await sco.getByRole('button', { name: 'Submit' }).click();
          await sco.getByRole('button', { name: 'Continue' }).click();
          await sco.getByRole('heading', { name: 'All done' }).waitFor();
          const cmi = await cmiOf(page);
          expect(cmi.core).to.include({ lesson_status: 'passed' });
          expect(cmi.core?.score).to.include({ raw: '50' });
          expect(await sco.locator('.lp-offline').count()).to.equal(0);
          // The certificate: offered where the service answered the tracking open, hidden where it did not.
          if (learnerId === 'lms-grace') {
            const button = sco.getByRole('button', { name: CERTIFICATE_STRINGS.en.download });
            await button.waitFor();
            const saved = page.waitForEvent('download');
            await button.click();
            expect((await saved).suggestedFilename()).to.match(/certificate LC-[0-9A-Z-]+\.pdf$/);
            await sco.getByRole('link', { name: CERTIFICATE_STRINGS.en.verify }).waitFor();
          } else {
            expect(await sco.locator('.lp-certificate').count()).to.equal(0);
          }
          await unload(page);
          expect((await calls(page)).LMSFinish).to.equal(1);
          // A refused or unreachable service is only logged as a warning: no error on the page (the browser's own
          // line about the failed request is not the page's).
          expect(errors.filter((e) => !e.startsWith('console: Failed to load resource'))).to.deep.equal([]);
        } finally {
          await page.close();
        }
      };

      await take('tracked', trackedDir, 'lms-grace');
      const done = await waitFor(
        async () => {
          const list = await req<
            { id: string; status: string; source: string; identityExternalId: string; score: number }[]
          >('GET', `/completions?courseId=${courseId}`);
          const row = list.body.data[0];
          return row?.status === 'completed' ? row : null;
        },
        { what: 'the tracked completion', timeoutMs: 20_000 },
      );
      expect(done).to.include({ source: 'scorm', identityExternalId: 'lms-grace', score: 50 });

      await take('untracked', untrackedDir, 'lms-linus');
      const list = await req<{ identityExternalId: string }[]>('GET', `/completions?courseId=${courseId}`);
      expect(list.body.data.map((c) => c.identityExternalId)).to.deep.equal(['lms-grace']);
      const none = await req<unknown[]>('GET', `/completions?courseId=${untracked.courseId}`);
      expect(none.body.data).to.deep.equal([]);
    });
  });
});
