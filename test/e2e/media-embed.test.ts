/**
 * An uploaded image in a published course, through the embed page in Chromium: uploaded with POST /api/v1/media,
 * processed by the media worker, served to the learner as a signed address with its variants, and shown; a
 * deleted file and a deleted video show their labelled placeholders instead of an empty box.
 */
import { expect } from 'chai';
import path from 'node:path';
import type { Browser } from 'playwright-core';
import { chromium } from 'playwright-core';
import {
  makeWorkspace,
  startTestApp,
  startTestWorkers,
  type TestApp,
  type TestWorkers,
} from '../support/context.js';
import { api, expectStatus } from '../support/authoring.js';
import { waitFor } from '../support/http.js';
import { createEmbedKey, signIdentity } from '../support/player.js';
import { avSample, pngOf, processedMedia, uploadForm } from '../support/media.js';
import {
  CHROMIUM,
  OUTPUT_DIR,
  buildPlayerOnce,
  waitReady,
  watchCspViolations,
  watchErrors,
} from '../support/player-browser.js';
import { runJobWorker } from '@lectern/jobs';
import { mediaProcessJob } from '@lectern/media';

/** What the test reads of an `<img>` in the page. */
interface ImgEl {
  currentSrc: string;
  naturalWidth: number;
  getAttribute(name: string): string | null;
}

describe('media: an uploaded image shows in a published course through the embed (Chromium)', function () {
  this.timeout(180_000);
  let app: TestApp;
  let workers: TestWorkers;
  let browser: Browser;

  before(async () => {
    const assets = await buildPlayerOnce();
    app = await startTestApp({ PLAYER_ASSETS_DIR: assets.dir });
    workers = await startTestWorkers('media', (rt) =>
      runJobWorker(rt, mediaProcessJob({ storage: rt.storage })),
    );
    // The page and its config use PUBLIC_URL (http://lectern.test in tests): resolve that host to this app.
    const port = new URL(app.url).port;
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: ['--no-sandbox', `--host-resolver-rules=MAP lectern.test:80 127.0.0.1:${port}`],
    });
  });
  after(async () => {
    await browser?.close();
    await workers?.stop();
    await app?.close();
  });

  /** Publishes `course` in the workspace and opens it through the embed as a signed-in learner. */
  const openPublished = async (
    ws: { key: string },
    course: Record<string, unknown>,
    viewport: { width: number; height: number },
  ) => {
    const req = api(app.base, ws.key);
    const created = await req<{ id: string }>('POST', '/courses', course);
    expectStatus(created, 201);
    const courseId = created.body.data.id;
    expectStatus(await req('PATCH', `/courses/${courseId}`, { status: 'published' }), 200);
    const token = await signIdentity(await createEmbedKey(app.base, ws.key), { name: 'Ada' }, { sub: 'ada' });
    const page = await browser.newPage({ viewport });
    await watchCspViolations(page);
    const errors = watchErrors(page);
    const failed: string[] = [];
    page.on('response', (r) => {
      if (r.status() >= 400) failed.push(`${r.status()} ${r.url()}`);
    });
    await page.goto(`http://lectern.test/embed/${courseId}?identity=${encodeURIComponent(token)}`);
    await waitReady(page);
    return { page, errors, failed };
  };

  it('the processed image loads from its signed address with srcset and size; deleted media show "Image unavailable" and "Video unavailable"', async () => {
    const ws = await makeWorkspace(app.rt.orm.em.fork(), 'scale', 'Media embed');
    const req = api(app.base, ws.key);
    const shown = await uploadForm(app.base, ws.key, { file: { bytes: await pngOf(1200, 600) } });
    expectStatus(shown, 201);
    const gone = await uploadForm(app.base, ws.key, { file: { bytes: await pngOf(20, 20) } });
    expectStatus(gone, 201);
    expect((await processedMedia(app.base, ws.key, shown.body.data.id)).status).to.equal('ready');
    expectStatus(await req('DELETE', `/media/${gone.body.data.id}`), 204);

    const { page, errors, failed } = await openPublished(
      ws,
      {
        title: 'Triangles',
        screens: [
          {
            id: 's1',
            title: 'Shapes',
            blocks: [
              { id: 'i1', type: 'image', url: shown.body.data.url, alt: 'A red rectangle' },
              { id: 'i2', type: 'image', url: gone.body.data.url, alt: 'A deleted picture' },
              { id: 'v1', type: 'video', url: gone.body.data.url, caption: 'A deleted film' },
            ],
          },
        ],
      },
      { width: 900, height: 1100 },
    );
    try {
      const img = page.getByRole('img', { name: 'A red rectangle' });
      await img.waitFor();
      // Polled from here: the page's policy allows no eval, so a string predicate (waitForFunction) cannot run in it.
      await waitFor(
        () =>
          img.evaluate((node) => {
            const el = node as unknown as ImgEl & { complete: boolean };
            return el.complete && el.naturalWidth > 0;
          }),
        { what: 'the image to load', timeoutMs: 15_000, intervalMs: 50 },
      );
      const loaded = await img.evaluate((node) => {
        const el = node as unknown as ImgEl;
        return {
          currentSrc: el.currentSrc,
          naturalWidth: el.naturalWidth,
          width: el.getAttribute('width'),
          height: el.getAttribute('height'),
          srcset: el.getAttribute('srcset') ?? '',
          sizes: el.getAttribute('sizes'),
        };
      });
      const store = new URL(app.rt.storage.publicEndpoint).origin;
      expect(loaded.naturalWidth).to.be.greaterThan(0);
      expect(loaded.currentSrc.startsWith(`${store}/`), loaded.currentSrc).to.equal(true);
      expect(loaded.currentSrc).to.include('X-Amz-Signature=');
      expect([loaded.width, loaded.height]).to.deep.equal(['1200', '600']);
      expect(loaded.srcset).to.match(/ 480w, .+ 960w, .+ 1200w$/);
      expect(loaded.sizes).to.be.a('string');

      const missingImage = page.getByRole('img', { name: 'Image unavailable: A deleted picture' });
      await missingImage.waitFor();
      expect(await missingImage.innerText()).to.equal('Image unavailable');
      const missingVideo = page.getByRole('img', { name: 'Video unavailable: A deleted film' });
      expect(await missingVideo.innerText()).to.equal('Video unavailable');
      expect(await page.locator('video').count()).to.equal(0);

      await page.screenshot({ path: path.join(OUTPUT_DIR, 'media-embed.png'), fullPage: true });
      expect(errors).to.deep.equal([]);
      expect(failed).to.deep.equal([]);
    } finally {
      await page.close();
    }
  });

  it('an uploaded video with no poster of its own shows its processed frame, signed, before it plays; by keyboard too', async () => {
    const ws = await makeWorkspace(app.rt.orm.em.fork(), 'scale', 'Media embed, video');
    const req = api(app.base, ws.key);
    const film = await uploadForm(app.base, ws.key, {
      kind: 'video',
      file: { bytes: await avSample('mp4') },
    });
    expectStatus(film, 201);
    expect((await processedMedia(app.base, ws.key, film.body.data.id)).status).to.equal('ready');
    const theme = await req<{ id: string }>('POST', '/themes', {
      name: 'Editorial',
      tokens: { concept: 'editorial', mode: 'light' },
    });
    expectStatus(theme, 201);
    const screens = [
      {
        id: 's1',
        title: 'A test pattern',
        blocks: [{ id: 'v1', type: 'video', url: film.body.data.url, caption: 'A test pattern' }],
      },
    ];
    // The default concept (stage, dark), left to right on a desktop; a light concept, right to left on a phone.
    for (const variant of [
      { name: 'stage-dark-ltr-desktop', course: {}, viewport: { width: 900, height: 900 } },
      {
        name: 'editorial-light-rtl-mobile',
        course: { themeId: theme.body.data.id, locale: 'he', direction: 'rtl' },
        viewport: { width: 390, height: 844 },
      },
    ]) {
      const { page, errors, failed } = await openPublished(
        ws,
        { title: 'Films', screens, ...variant.course },
        variant.viewport,
      );
      try {
        const video = page.locator('video');
        await video.waitFor();
        const attrs = await video.evaluate((node) => {
          const el = node as unknown as { getAttribute(n: string): string | null };
          return {
            poster: el.getAttribute('poster') ?? '',
            width: el.getAttribute('width'),
            height: el.getAttribute('height'),
          };
        });
        const store = new URL(app.rt.storage.publicEndpoint).origin;
        expect(attrs.poster.startsWith(`${store}/`), attrs.poster).to.equal(true);
        expect(attrs.poster).to.include('X-Amz-Signature=');
        expect([attrs.width, attrs.height]).to.deep.equal(['320', '240']);
        // The frame itself loads in the page, as the video element shows it (same origin rules, same CSP).
        const frame = (await page.evaluate(
          `new Promise((resolve) => { const i = new Image(); i.onload = () => resolve([i.naturalWidth, i.naturalHeight]); i.onerror = () => resolve('error'); i.src = ${JSON.stringify(attrs.poster)}; })`,
        )) as unknown;
        expect(frame).to.deep.equal([320, 240]);
        // Reachable by keyboard: Tab lands on the video's own controls.
        let reached = false;
        for (let i = 0; i < 12 && !reached; i++) {
          await page.keyboard.press('Tab');
          reached = (await page.evaluate(
            `document.activeElement && document.activeElement.tagName === 'VIDEO'`,
          )) as boolean;
        }
        expect(reached, 'Tab reaches the video').to.equal(true);
        await page.screenshot({
          path: path.join(OUTPUT_DIR, `media-embed-video-poster-${variant.name}.png`),
          fullPage: true,
        });
        expect(errors).to.deep.equal([]);
        expect(failed).to.deep.equal([]);
      } finally {
        await page.close();
      }
    }
  });
});
