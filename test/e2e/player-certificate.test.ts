/**
 * Issue 19 §1 in Chromium: a signed learner who passes downloads the certificate from the end of the course (with
 * progress while it renders), the verify link beside it opens a page that says the certificate is valid; the
 * same download in a results block; nothing offered to a learner who failed or an anonymous one.
 */
import { expect } from 'chai';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { parseEnv } from '@lectern/config';
import {
  CERTIFICATE_WORKER_ENV,
  certificateRenderSettings,
  startCertificateWorker,
} from '@lectern/certificates';
import type { JobWorkerHandle } from '@lectern/jobs';
import { CERTIFICATE_STRINGS, CHROME_STRINGS, type PlayerAssets } from '@lectern/player';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { makeWorkspace, startTestApp, type TestApp, type TestWorkspace } from '../support/context.js';
import { createEmbedKey, publishedCourse, quizScreens, signIdentity } from '../support/player.js';
import { pdfText } from '../support/certificates.js';
import {
  CHROMIUM,
  OUTPUT_DIR,
  buildPlayerOnce,
  installPageHelpers,
  seriousAxeViolations,
  waitReady,
  watchErrors,
} from '../support/player-browser.js';

const en = CHROME_STRINGS.en;
const cert = CERTIFICATE_STRINGS.en;
const SERIAL = /LC-[2-9A-HJKMNP-Z]{4}-[2-9A-HJKMNP-Z]{4}-[2-9A-HJKMNP-Z]{4}/;

describe('player: the certificate from the end of the course (Chromium)', function () {
  this.timeout(180_000);
  let app: TestApp;
  let worker: JobWorkerHandle;
  let browser: Browser;
  let assets: PlayerAssets;
  let ws: TestWorkspace;
  let embedKey: { id: string; secret: string };
  const em = () => app.rt.orm.em.fork();

  before(async () => {
    assets = await buildPlayerOnce();
    app = await startTestApp({ PLAYER_ASSETS_DIR: assets.dir, VERIFY_LOOKUPS_PER_MINUTE: '1000' });
    const settings = certificateRenderSettings(parseEnv(CERTIFICATE_WORKER_ENV, {}));
    worker = await startCertificateWorker(app.rt, { ...settings, concurrency: 1 });
    const port = new URL(app.url).port;
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: ['--no-sandbox', `--host-resolver-rules=MAP lectern.test:80 127.0.0.1:${port}`],
    });
    ws = await makeWorkspace(em(), 'scale', 'Acme Academy');
    embedKey = await createEmbedKey(app.base, ws.key);
  });
  after(async () => {
    await browser?.close();
    await worker?.stop();
    await app?.close();
  });

  async function learnerContext(): Promise<BrowserContext> {
    const context = await browser.newContext({ acceptDownloads: true });
    await installPageHelpers(context);
    await context.route('**/favicon.ico', (r) => r.fulfill({ status: 204 }));
    return context;
  }
  const embedUrl = async (courseId: string, sub: string | null, name = 'Ada Lovelace') => {
    // Anonymous runs need crypto.randomUUID, which only secure contexts (loopback included) have.
    if (sub === null) return `${app.url}/embed/${courseId}`;
    const token = await signIdentity(embedKey, { name }, { sub });
    return `http://lectern.test/embed/${courseId}?identity=${encodeURIComponent(token)}`;
  };

  /** Answers q1 and q2 of `quizScreens()` right (first options) or wrong, by the pointer, and reaches the end. */
  async function takeCourse(page: Page, right: boolean) {
    const pick = right ? 0 : 1;
    await page.locator('input[name="q1:o"]').nth(pick).check();
    await page.locator('form:has(input[name="q1:o"]) button[type="submit"]').click();
    await page.locator('.lp-continue').click();
    await page.getByRole('heading', { name: 'Middle', level: 1 }).waitFor();
    await page.locator('input[name="q2:tf"]').nth(pick).check();
    await page.locator('form:has(input[name="q2:tf"]) button[type="submit"]').click();
    await page.locator('.lp-continue').click();
    await page.getByRole('heading', { name: 'Done', level: 1 }).waitFor();
  }

  it('pass → "Download your certificate" with progress → the PDF is saved → the verify link beside it says valid', async () => {
    const courseId = await publishedCourse(app.base, ws.key, {
      title: 'Fire safety at work',
      passingScore: 50,
    });
    const context = await learnerContext();
    const page = await context.newPage();
    const errors = watchErrors(page);
    try {
      // The render is held until the page has shown its progress, so the test sees it without timing anything.
      let release!: () => void;
      const held = new Promise<void>((r) => (release = r));
      await page.route('**/player/v1/runs/*/certificate', async (route) => {
        await held;
        await route.continue();
      });
      await page.goto(await embedUrl(courseId, 'ada'));
      await waitReady(page);
      await takeCourse(page, true);
      await page.locator('.lp-end').getByText(en.finished).waitFor();
      const button = page.getByRole('button', { name: cert.download });
      await button.waitFor();
      expect(await page.locator('.lp-certificate').count()).to.equal(1);
      expect(await seriousAxeViolations(page)).to.deep.equal([]);

      const saved = page.waitForEvent('download');
      await button.click();
      await page.locator('.lp-certificate-status').getByText(cert.preparing).waitFor();
      expect(await page.locator('progress.lp-certificate-progress').count()).to.equal(1);
      expect(await button.isDisabled()).to.equal(true);
      release();
      const download = await saved;
      expect(download.suggestedFilename()).to.match(/^Fire safety at work - certificate LC-.+\.pdf$/);
      const pdf = await readFile((await download.path())!);
      expect(pdf.subarray(0, 5).toString()).to.equal('%PDF-');
      const text = await pdfText(pdf);
      const serial = SERIAL.exec(text)?.[0];
      expect(serial, text).to.be.a('string');
      expect(text).to.include('Ada Lovelace').and.include('Fire safety at work');

      await page.locator('.lp-certificate-status').getByText(cert.ready).waitFor();
      const verify = page.getByRole('link', { name: cert.verify });
      expect(await verify.getAttribute('href')).to.equal(`http://lectern.test/verify/${serial}`);
      expect(await verify.getAttribute('target')).to.equal('_blank');
      expect(await seriousAxeViolations(page)).to.deep.equal([]);
      await page.screenshot({ path: path.join(OUTPUT_DIR, 'certificate-end.png'), fullPage: true });

      const [verifyPage] = await Promise.all([context.waitForEvent('page'), verify.click()]);
      await verifyPage.waitForLoadState();
      const body = await verifyPage.locator('body').innerText();
      expect(body).to.match(/valid/i).and.include('Ada Lovelace').and.include(serial!);
      expect(body).not.to.match(/no certificate has this serial/i);

      // A second download is the same certificate.
      const again = page.waitForEvent('download');
      await button.click();
      expect((await again).suggestedFilename()).to.include(serial!);

      // Coming back to the finished course: the end screen knows the result and offers the same certificate.
      await page.reload();
      await waitReady(page);
      await page.getByRole('heading', { name: 'Done', level: 1 }).waitFor();
      const resumed = page.waitForEvent('download');
      await page.getByRole('button', { name: cert.download }).click();
      expect((await resumed).suggestedFilename()).to.include(serial!);
      // The open said the certificate is issued: its verify link is beside the button at once.
      expect(await page.getByRole('link', { name: cert.verify }).getAttribute('href')).to.equal(
        `http://lectern.test/verify/${serial}`,
      );

      // Retake and fail: the certificate stays the learner's, still offered, the same serial.
      await page.locator('.lp-end').getByRole('button', { name: en.retake }).click();
      await page.getByRole('heading', { name: 'Welcome', level: 1 }).waitFor();
      await takeCourse(page, false);
      await page.locator('.lp-end').getByText(/0\s*%/).waitFor();
      const kept = page.waitForEvent('download');
      await page.getByRole('button', { name: cert.download }).click();
      expect((await kept).suggestedFilename()).to.include(serial!);
      expect(errors).to.deep.equal([]);
    } finally {
      await context.close();
    }
  });

  it('a learner below the pass mark and an anonymous learner are offered no certificate', async () => {
    const courseId = await publishedCourse(app.base, ws.key, { title: 'Strict course', passingScore: 50 });
    const context = await learnerContext();
    try {
      for (const sub of ['low', null]) {
        const page = await context.newPage();
        await page.goto(await embedUrl(courseId, sub));
        await waitReady(page);
        await takeCourse(page, sub === null);
        await page.locator('.lp-end').getByText(en.finished).waitFor();
        // The result is in (the score line is drawn from it), and no download is offered.
        await page.locator('.lp-end').getByText(/%/).waitFor();
        expect(await page.locator('.lp-certificate').count(), String(sub)).to.equal(0);
        await page.close();
      }
    } finally {
      await context.close();
    }
  });

  it('a results block on the last screen carries the download (once, not again in the end panel)', async () => {
    const screens = quizScreens();
    screens[2].blocks.push({
      id: 'res',
      type: 'results',
      title: 'Your results',
      showScore: true,
      showPassed: true,
    } as never);
    const courseId = await publishedCourse(app.base, ws.key, {
      title: 'Results course',
      passingScore: 50,
      screens,
    });
    const context = await learnerContext();
    const page = await context.newPage();
    try {
      await page.goto(await embedUrl(courseId, 'grace', 'Grace Hopper'));
      await waitReady(page);
      await takeCourse(page, true);
      await page.locator('.lp-results').getByText(en.passed).waitFor();
      await page.locator('.lp-results').getByRole('button', { name: cert.download }).waitFor();
      expect(await page.locator('.lp-certificate').count()).to.equal(1);
      const saved = page.waitForEvent('download');
      await page.locator('.lp-results').getByRole('button', { name: cert.download }).click();
      const text = await pdfText(await readFile((await (await saved).path())!));
      expect(text).to.include('Grace Hopper');
      await page.locator('.lp-results').getByRole('link', { name: cert.verify }).waitFor();
    } finally {
      await context.close();
    }
  });
});
