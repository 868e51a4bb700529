/**
 * The embed page boots the real player bundle against the real Player API: a learner with a signed identity opens
 * a published course in Chromium, moves to the last screen (which finishes the run), and the completion is
 * readable through /api/v1; a reload resumes on the last screen. The bundle's files are served immutable.
 */
import { expect } from 'chai';
import type { Browser } from 'playwright-core';
import { makeWorkspace, startTestApp, type TestApp } from '../support/context.js';
import { call, waitFor } from '../support/http.js';
import { api } from '../support/authoring.js';
import { createEmbedKey, signIdentity } from '../support/player.js';
import { chromium } from 'playwright-core';
import { CHROMIUM, buildPlayerOnce, waitReady, watchCspViolations } from '../support/player-browser.js';
import type { PlayerAssets } from '@lectern/player';

describe('player: the embed page boots the bundle against the Player API (Chromium)', function () {
  this.timeout(120_000);
  let app: TestApp;
  let browser: Browser;
  let assets: PlayerAssets;

  before(async () => {
    assets = await buildPlayerOnce();
    app = await startTestApp({ PLAYER_ASSETS_DIR: assets.dir });
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
    await app?.close();
  });

  it('serves the hashed bundle files for a year and nothing else', async () => {
    const js = await call(app.url, 'GET', `/player/assets/${assets.js.file}`);
    expect(js.status).to.equal(200);
    expect(js.headers.get('cache-control')).to.equal('public, max-age=31536000, immutable');
    expect(js.headers.get('content-type')).to.match(/javascript/);
    const css = await call(app.url, 'GET', `/player/assets/${assets.css.file}`);
    expect(css.status).to.equal(200);
    expect(css.headers.get('content-type')).to.match(/text\/css/);
    for (const name of ['manifest.json', '..%2Fmanifest.json', 'player.js']) {
      const res = await call(app.url, 'GET', `/player/assets/${name}`);
      expect(res.status, name).to.equal(404);
    }
  });

  it('a signed learner takes a course: the last screen finishes the run, a reload resumes there', async () => {
    const ws = await makeWorkspace(app.rt.orm.em.fork(), 'scale', 'Embed journey');
    const req = api(app.base, ws.key);
    const created = await req<{ id: string }>('POST', '/courses', {
      title: 'Fire safety',
      screens: [
        { id: 's1', title: 'Welcome', blocks: [{ id: 'h1', type: 'heading', text: 'Welcome aboard' }] },
        { id: 's2', title: 'Done', blocks: [{ id: 'h2', type: 'heading', text: 'All done' }] },
      ],
    });
    expect(created.status, created.text).to.equal(201);
    const courseId = created.body.data.id;
    expect((await req('PATCH', `/courses/${courseId}`, { status: 'published' })).status).to.equal(200);
    const token = await signIdentity(await createEmbedKey(app.base, ws.key), { name: 'Ada' }, { sub: 'ada' });

    const page = await browser.newPage();
    try {
      // Uncaught errors and any Content-Security-Policy violation (the page's policy is strict).
      await watchCspViolations(page);
      const errors: string[] = [];
      // The page names an empty data: icon, so the browser never asks for /favicon.ico (a 404 in the console).
      const failed: string[] = [];
      page.on('response', (r) => {
        if (r.status() >= 400) failed.push(`${r.status()} ${r.url()}`);
      });
      page.on('pageerror', (e) => errors.push(String(e)));
      page.on('console', (m) => {
        if (m.type() === 'error' && /CSP violation|Content Security Policy/.test(m.text()))
          errors.push(m.text());
      });
      await page.goto(`http://lectern.test/embed/${courseId}?identity=${encodeURIComponent(token)}`);
      await waitReady(page);
      await page.getByRole('heading', { name: 'Welcome aboard' }).waitFor();
      await page.getByRole('button', { name: 'Continue' }).click();
      await page.getByRole('heading', { name: 'All done' }).waitFor();

      const done = await waitFor(
        async () => {
          const list = await req<{ id: string; status: string; identityExternalId: string }[]>(
            'GET',
            `/completions?courseId=${courseId}`,
          );
          const row = list.body.data[0];
          return row?.status === 'completed' ? row : null;
        },
        { what: 'the completion', timeoutMs: 20_000 },
      );
      expect(done.identityExternalId).to.equal('ada');
      const one = await req<{ lastScreenId: string; attempt: number }>('GET', `/completions/${done.id}`);
      expect(one.body.data.lastScreenId).to.equal('s2');
      expect(one.body.data.attempt).to.equal(1);

      await page.reload();
      await waitReady(page);
      await page.getByRole('heading', { name: 'All done' }).waitFor();
      expect(errors).to.deep.equal([]);
      expect(failed).to.deep.equal([]);
    } finally {
      await page.close();
    }
  });

  it("an embed block pointing at the service's own origin is framed without allow-same-origin", async () => {
    const ws = await makeWorkspace(app.rt.orm.em.fork(), 'scale', 'Embed sandbox');
    const req = api(app.base, ws.key);
    const publish = async (body: Record<string, unknown>) => {
      const created = await req<{ id: string }>('POST', '/courses', body);
      expect(created.status, created.text).to.equal(201);
      const id = created.body.data.id;
      expect((await req('PATCH', `/courses/${id}`, { status: 'published' })).status).to.equal(200);
      return id;
    };
    const inner = await publish({
      title: 'Inner',
      screens: [{ id: 's1', title: 'Inner', blocks: [{ id: 'h', type: 'heading', text: 'Inner course' }] }],
    });
    // Signed learners: an anonymous run needs crypto.randomUUID, which plain-http pages other than localhost lack.
    const token = await signIdentity(await createEmbedKey(app.base, ws.key), { name: 'Ada' }, { sub: 'ada' });
    // PUBLIC_URL is http://lectern.test: the block frames another course of the same service.
    const outer = await publish({
      title: 'Outer',
      screens: [
        {
          id: 's1',
          title: 'Outer',
          blocks: [
            { id: 'h', type: 'heading', text: 'Outer course' },
            {
              id: 'frame',
              type: 'embed',
              url: `http://lectern.test/embed/${inner}?identity=${encodeURIComponent(token)}`,
              title: 'Inner',
              height: 300,
            },
          ],
        },
      ],
    });
    const page = await browser.newPage();
    try {
      await watchCspViolations(page);
      const errors: string[] = [];
      page.on('pageerror', (e) => errors.push(String(e)));
      page.on('console', (m) => {
        if (m.type() === 'error' && /CSP violation|Content Security Policy/.test(m.text()))
          errors.push(m.text());
      });
      await page.goto(`http://lectern.test/embed/${outer}?identity=${encodeURIComponent(token)}`);
      await waitReady(page);
      const iframe = page.locator('[data-block-id="frame"] iframe');
      const sandbox = (await iframe.getAttribute('sandbox'))!.split(' ');
      expect(sandbox).to.include('allow-scripts').and.not.include('allow-same-origin');
      // The framed page runs in an opaque origin: it cannot reach the outer page.
      await page
        .frameLocator('[data-block-id="frame"] iframe')
        .getByRole('heading', { name: 'Inner course' })
        .waitFor();
      const frame = page.frames().find((f) => f.url().includes(`/embed/${inner}`));
      expect(await frame!.evaluate('self.origin')).to.equal('null');
      expect(
        await frame!.evaluate(
          '(function () { try { return !!parent.document; } catch (e) { return false; } })()',
        ),
      ).to.equal(false);
      expect(errors).to.deep.equal([]);
    } finally {
      await page.close();
    }
  });
});
