/**
 * Authors' preview: POST /api/v1/courses/:id/preview signs a 15-minute link; the page renders the course as
 * stored (a draft too, a translation on request) with the player in preview mode, in Chromium, and records
 * nothing: no run, no view, no event. Expired, forged, tampered and other-course tokens get a plain 401 page.
 */
import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { SignJWT } from 'jose';
import { chromium, type Browser } from 'playwright-core';
import { CHROME_STRINGS, type PlayerAssets, type PlayerConfig } from '@lectern/player';
import { boundQuery } from '@lectern/db';
import { makeWorkspace, startTestApp, type TestApp } from '../support/context.js';
import { call } from '../support/http.js';
import { api } from '../support/authoring.js';
import { outboxOf } from '../support/spine.js';
import { quizScreens } from '../support/player.js';
import {
  CHROMIUM,
  OUTPUT_DIR,
  buildPlayerOnce,
  installPageHelpers,
  seriousAxeViolations,
  waitReady,
  watchErrors,
} from '../support/player-browser.js';

const RUN_TOKEN_KEY = randomBytes(32);

describe('player: authors preview a course as stored through a signed link', function () {
  this.timeout(120_000);
  let app: TestApp;
  let browser: Browser;
  let assets: PlayerAssets;
  const em = () => app.rt.orm.em.fork();

  before(async () => {
    assets = await buildPlayerOnce();
    app = await startTestApp({ PLAYER_ASSETS_DIR: assets.dir, RUN_TOKEN_KEY: RUN_TOKEN_KEY.toString('hex') });
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

  async function draft(body: Record<string, unknown> = {}, plan: 'sandbox' | 'scale' = 'sandbox') {
    const ws = await makeWorkspace(em(), plan, 'Preview');
    const req = api(app.base, ws.key);
    const created = await req<{ id: string; status: string }>('POST', '/courses', {
      title: 'Fire safety',
      screens: quizScreens(),
      ...body,
    });
    expect(created.status, created.text).to.equal(201);
    expect(created.body.data.status).to.equal('draft');
    return { ws, req, courseId: created.body.data.id };
  }

  /** What the server recorded for a workspace: views, runs, events. */
  async function recorded(wsId: string) {
    const [{ views }] = await boundQuery<{ views: number }>(
      em(),
      'select coalesce(sum(count), 0)::int as views from usage_counters where workspace_id = ?',
      [wsId],
    );
    const [{ runs }] = await boundQuery<{ runs: number }>(
      em(),
      'select count(*)::int as runs from completions where workspace_id = ?',
      [wsId],
    );
    return { views, runs, events: (await outboxOf(em(), wsId)).length };
  }

  const local = (url: string) => {
    const u = new URL(url);
    expect(u.origin).to.equal('http://lectern.test');
    return `${u.pathname}${u.search}`;
  };
  const configOf = (html: string) =>
    JSON.parse(/id="lectern-player-config"[^>]*>(.*?)<\/script>/s.exec(html)![1]) as PlayerConfig;

  const signPreview = (claims: Record<string, unknown>, exp: number, key: Uint8Array = RUN_TOKEN_KEY) =>
    new SignJWT(claims)
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .setAudience((claims.aud as string) ?? 'lectern:preview')
      .setIssuedAt()
      .setExpirationTime(exp)
      .sign(key);

  it('a draft renders in preview mode, in the browser, and nothing is recorded', async () => {
    const { ws, req, courseId } = await draft();
    const before = await recorded(ws.id);

    const made = await req<{ url: string; expiresAt: string }>('POST', `/courses/${courseId}/preview`);
    expect(made.status, made.text).to.equal(200);
    expect(made.headers.get('cache-control')).to.equal('no-store');
    const { url, expiresAt } = made.body.data;
    expect(url).to.match(
      new RegExp(`^http://lectern\\.test/preview/${courseId}\\?token=[\\w-]+\\.[\\w-]+\\.[\\w-]+$`),
    );
    const ttl = Date.parse(expiresAt) - Date.now();
    expect(ttl).to.be.within(14 * 60_000, 15 * 60_000 + 1_000);

    const page = await call(app.url, 'GET', local(url));
    expect(page.status).to.equal(200);
    expect(page.headers.get('content-type')).to.match(/text\/html/);
    expect(page.headers.get('cache-control')).to.equal('no-store');
    expect(page.headers.get('x-robots-tag')).to.equal('noindex');
    expect(page.headers.get('referrer-policy')).to.equal('no-referrer');
    const config = configOf(page.text);
    expect(config.mode).to.equal('preview');
    if (config.mode !== 'preview') return;
    expect(config.course.id).to.equal(courseId);
    expect(config.course.screens.map((s) => s.id)).to.deep.equal(['s1', 's2', 's3']);
    // The learner view: no answer keys, no instructor notes.
    expect(page.text).not.to.include('"correct"');
    expect(page.text).not.to.include('secret facilitator text');

    const context = await browser.newContext();
    await installPageHelpers(context);
    // The API serves no favicon; the browser's request for one is not the page's error.
    await context.route('**/favicon.ico', (r) => r.fulfill({ status: 204 }));
    const tab = await context.newPage();
    try {
      const errors = watchErrors(tab);
      await tab.goto(url);
      await waitReady(tab);
      await tab.getByRole('heading', { name: 'Welcome', level: 1 }).waitFor();
      await tab.getByRole('radio', { name: 'A' }).check();
      await tab.getByRole('button', { name: 'Continue' }).click();
      await tab.getByRole('heading', { name: 'Middle', level: 1 }).waitFor();
      await tab.getByRole('button', { name: 'Continue' }).click();
      await tab.getByRole('heading', { name: 'Done', level: 1 }).waitFor();
      expect(await seriousAxeViolations(tab)).to.deep.equal([]);
      mkdirSync(OUTPUT_DIR, { recursive: true });
      await tab.screenshot({ path: path.join(OUTPUT_DIR, 'preview-link-draft.png'), fullPage: true });
      expect(errors).to.deep.equal([]);
    } finally {
      await context.close();
    }
    expect(await recorded(ws.id)).to.deep.equal(before);
  });

  it('serves the requested translation as stored; an unknown one falls back to the course language', async () => {
    const { req, courseId } = await draft({ direction: 'rtl', locale: 'he', title: 'בטיחות' }, 'scale');
    const tr = await req<{ id: string }>('POST', `/courses/${courseId}/translations`, { locale: 'ar' });
    expect(tr.status, tr.text).to.equal(201);
    const patched = await req('PATCH', `/courses/${courseId}/translations/${tr.body.data.id}`, {
      content: { title: 'السلامة', 's:s1.title': 'مرحبا' },
    });
    expect(patched.status, patched.text).to.equal(200);

    const ar = await req<{ url: string }>('POST', `/courses/${courseId}/preview`, { lang: 'ar' });
    expect(ar.status, ar.text).to.equal(200);
    const page = await call(app.url, 'GET', local(ar.body.data.url));
    expect(page.text).to.include('<html lang="ar" dir="rtl">');
    const config = configOf(page.text);
    if (config.mode !== 'preview') throw new Error('not a preview');
    expect(config.course.title).to.equal('السلامة');
    expect(config.course.screens[0].title).to.equal('مرحبا');

    const tab = await browser.newPage();
    try {
      await tab.goto(ar.body.data.url);
      await waitReady(tab);
      await tab.getByRole('heading', { name: 'مرحبا', level: 1 }).waitFor();
      await tab.getByRole('button', { name: CHROME_STRINGS.ar.continue }).waitFor();
    } finally {
      await tab.close();
    }

    const fr = await req<{ url: string }>('POST', `/courses/${courseId}/preview`, { lang: 'fr' });
    const source = configOf((await call(app.url, 'GET', local(fr.body.data.url))).text);
    if (source.mode !== 'preview') throw new Error('not a preview');
    expect(source.course.title).to.equal('בטיחות');
    expect(source.course.locale).to.equal('he');
  });

  it('refuses expired, forged, tampered and other-course tokens with a plain 401 page', async () => {
    const { ws, req, courseId } = await draft();
    const other = await req<{ id: string }>('POST', '/courses', { title: 'Other', screens: quizScreens() });
    const made = await req<{ url: string }>('POST', `/courses/${courseId}/preview`);
    const good = new URL(made.body.data.url).searchParams.get('token')!;
    const now = Math.floor(Date.now() / 1000);
    const claims = { sub: courseId, wid: ws.id, lang: null };
    const [h, p, s] = good.split('.');
    const payload = JSON.parse(Buffer.from(p, 'base64url').toString()) as Record<string, unknown>;
    const tampered = `${h}.${Buffer.from(JSON.stringify({ ...payload, sub: other.body.data.id })).toString('base64url')}.${s}`;
    const cases: [string, string, string | null][] = [
      ['expired', courseId, await signPreview(claims, now - 60)],
      ['forged (another key)', courseId, await signPreview(claims, now + 600, randomBytes(32))],
      ['a run token audience', courseId, await signPreview({ ...claims, aud: 'lectern:run' }, now + 600)],
      ['tampered', other.body.data.id, tampered],
      ['another course', other.body.data.id, good],
      ['garbage', courseId, 'not-a-token'],
      ['missing', courseId, null],
    ];
    for (const [what, id, token] of cases) {
      const res = await call(app.url, 'GET', `/preview/${id}${token === null ? '' : `?token=${token}`}`);
      expect(res.status, what).to.equal(401);
      expect(res.headers.get('content-type'), what).to.match(/text\/html/);
      expect(res.headers.get('cache-control'), what).to.equal('no-store');
      expect(res.text, what).to.include('Preview link expired');
      expect(res.text, what).not.to.include('lectern-player-config');
    }
    // A token made for the course still opens it: the refusals above were about the tokens.
    expect((await call(app.url, 'GET', `/preview/${courseId}?token=${good}`)).status).to.equal(200);
  });

  it('404 for an unknown or another workspace’s course, and once the course is deleted', async () => {
    const { req, courseId } = await draft();
    const stranger = await makeWorkspace(em(), 'scale', 'Stranger');
    for (const res of [
      await api(app.base, stranger.key)('POST', `/courses/${courseId}/preview`),
      await req('POST', '/courses/crs_nope/preview'),
    ]) {
      expect(res.status, res.text).to.equal(404);
      expect(res.body).to.include({ error: 'not_found' });
    }
    const bad = await req('POST', `/courses/${courseId}/preview`, { lang: 42 });
    expect(bad.status).to.equal(400);

    const made = await req<{ url: string }>('POST', `/courses/${courseId}/preview`);
    expect((await req('DELETE', `/courses/${courseId}`)).status).to.equal(204);
    const gone = await call(app.url, 'GET', local(made.body.data.url));
    expect(gone.status).to.equal(404);
    expect(gone.text).to.include('Course not found');
  });
});
