/**
 * The learner's journey in run mode, in Chromium, against the real embed page and Player API: a signed
 * learner answers by keyboard only (Tab, Space, arrow keys, Enter; no pointer), reloads and lands on the same
 * screen with the answers restored, finishes (the completion is read through /api/v1), retakes from the end
 * and finishes a second attempt; an Arabic translation of an RTL course speaks Arabic; and a tab closed right
 * after an answer still gets the answer to the server.
 */
import { expect } from 'chai';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { CHROME_STRINGS, type PlayerAssets } from '@lectern/player';
import { makeWorkspace, startTestApp, type TestApp, type TestWorkspace } from '../support/context.js';
import { waitFor } from '../support/http.js';
import { api } from '../support/authoring.js';
import { createEmbedKey, publishedCourse, quizScreens, signIdentity } from '../support/player.js';
import {
  CHROMIUM,
  OUTPUT_DIR,
  buildPlayerOnce,
  inPage,
  installPageHelpers,
  seriousAxeViolations,
  tabTo,
  waitReady,
  watchErrors,
} from '../support/player-browser.js';

const en = CHROME_STRINGS.en;
const ar = CHROME_STRINGS.ar;

interface CompletionRow {
  id: string;
  status: string;
  score: number | null;
  passed: boolean | null;
  attempt: number | null;
  lastScreenId: string | null;
  answers: Record<string, unknown>;
}

describe('player: a learner’s journey through the embed, keyboard only (Chromium)', function () {
  this.timeout(180_000);
  let app: TestApp;
  let browser: Browser;
  let assets: PlayerAssets;
  let ws: TestWorkspace;
  let embedKey: { id: string; secret: string };
  const em = () => app.rt.orm.em.fork();

  before(async () => {
    assets = await buildPlayerOnce();
    app = await startTestApp({ PLAYER_ASSETS_DIR: assets.dir });
    const port = new URL(app.url).port;
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: ['--no-sandbox', `--host-resolver-rules=MAP lectern.test:80 127.0.0.1:${port}`],
    });
    ws = await makeWorkspace(em(), 'scale', 'Journey');
    embedKey = await createEmbedKey(app.base, ws.key);
  });
  after(async () => {
    await browser?.close();
    await app?.close();
  });

  const req = () => api(app.base, ws.key);

  async function learnerContext(): Promise<BrowserContext> {
    const context = await browser.newContext();
    await installPageHelpers(context);
    // The API serves no favicon; the browser's request for one is not the page's error.
    await context.route('**/favicon.ico', (r) => r.fulfill({ status: 204 }));
    return context;
  }

  const embedUrl = async (courseId: string, sub: string, lang?: string) => {
    const token = await signIdentity(embedKey, { name: 'Ada Lovelace' }, { sub });
    return `http://lectern.test/embed/${courseId}?identity=${encodeURIComponent(token)}${lang ? `&lang=${lang}` : ''}`;
  };

  /** The learner's run, once the server holds it in the state `ready` accepts. */
  async function completionOf(
    courseId: string,
    sub: string,
    ready: (c: CompletionRow) => boolean,
    what: string,
  ): Promise<CompletionRow> {
    return waitFor(
      async () => {
        const list = await req()<{ id: string }[]>(
          'GET',
          `/completions?courseId=${courseId}&identityExternalId=${sub}`,
        );
        if (list.status !== 200) throw new Error(`GET /completions answered ${list.status}: ${list.text}`);
        const id = list.body.data[0]?.id;
        if (!id) return null;
        const one = await req()<CompletionRow>('GET', `/completions/${id}`);
        return ready(one.body.data) ? one.body.data : null;
      },
      { what, timeoutMs: 20_000, intervalMs: 250 },
    );
  }

  const heading = (page: Page, name: string) => page.getByRole('heading', { name, level: 1 }).waitFor();
  const press = async (page: Page, ...keys: string[]) => {
    for (const k of keys) await page.keyboard.press(k);
  };
  const verdictOf = (page: Page, blockInput: string) =>
    page.locator(`form:has(${blockInput}) .lp-verdict`).innerText();
  const checked = (page: Page, selector: string) => page.locator(selector).isChecked();

  /** Keyboard only: Tab into the radio group, pick with Space (first option) or arrows, Tab to the button, Enter. */
  async function answerRadio(page: Page, name: string, arrowsDown: number) {
    await tabTo(page, `input[name="${name}"]`);
    if (arrowsDown === 0) await press(page, 'Space');
    else for (let i = 0; i < arrowsDown; i++) await press(page, 'ArrowDown');
    await tabTo(page, `form:has(input[name="${name}"]) button[type="submit"]`);
    await press(page, 'Enter');
  }
  async function continueByKeyboard(page: Page) {
    await tabTo(page, '.lp-continue');
    await press(page, 'Enter');
  }

  it('keyboard answers, reload resumes with answers restored, finish, retake, attempt 2', async () => {
    const courseId = await publishedCourse(app.base, ws.key, {
      title: 'Journey',
      quizFeedback: 'immediate',
      passingScore: 50,
    });
    const url = await embedUrl(courseId, 'ada');
    const context = await learnerContext();
    const page = await context.newPage();
    const errors = watchErrors(page);
    try {
      await page.goto(url);
      await waitReady(page);
      await heading(page, 'Welcome');

      // s1: q1, option A (correct), by Space; immediate feedback.
      await answerRadio(page, 'q1:o', 0);
      await page.locator('form:has(input[name="q1:o"]) .lp-good').waitFor();
      expect(await verdictOf(page, 'input[name="q1:o"]')).to.include(en.correct);
      expect(await seriousAxeViolations(page)).to.deep.equal([]);
      await continueByKeyboard(page);
      await heading(page, 'Middle');
      // Focus moved to the new screen's heading.
      expect(await inPage(page, 'isActive', 'h1.lp-screen-title')).to.equal(true);

      // s2: q2 true (the first option, Space); poll: arrow down from the first to the second option ("No").
      await answerRadio(page, 'q2:tf', 0);
      await page.locator('form:has(input[name="q2:tf"]) .lp-good').waitFor();
      await answerRadio(page, 'p1:p', 1);
      await page.locator('form:has(input[name="p1:p"]) .lp-verdict p').waitFor();
      const saved = await completionOf(
        courseId,
        'ada',
        (c) => c.lastScreenId === 's2' && 'p1' in c.answers,
        'the answers of the first two screens',
      );
      expect(saved.answers).to.deep.equal({ q1: 'a', q2: true, p1: 'n' });
      expect(saved.status).to.equal('in_progress');

      // Reload: the same screen, the answers restored with the verdicts already given (immediate mode).
      await page.reload();
      await waitReady(page);
      await heading(page, 'Middle');
      expect(await checked(page, 'input[name="q2:tf"][value="true"]')).to.equal(true);
      expect(await checked(page, 'input[name="p1:p"][value="n"]')).to.equal(true);
      expect(await verdictOf(page, 'input[name="q2:tf"]')).to.include(en.correct);
      expect(await verdictOf(page, 'input[name="p1:p"]')).not.to.equal('');
      // Back to s1 (Contents would do too): q1 restored.
      await tabTo(page, '.lp-back');
      await press(page, 'Enter');
      await heading(page, 'Welcome');
      expect(await checked(page, 'input[name="q1:o"][value="a"]')).to.equal(true);
      expect(await verdictOf(page, 'input[name="q1:o"]')).to.include(en.correct);
      await continueByKeyboard(page);
      await heading(page, 'Middle');
      await continueByKeyboard(page);
      await heading(page, 'Done');
      await page.locator('.lp-end').getByText(en.finished).waitFor();

      const first = await completionOf(courseId, 'ada', (c) => c.status === 'completed', 'the finish');
      expect(first).to.include({ status: 'completed', score: 100, passed: true, attempt: 1 });
      expect(first.answers).to.deep.equal({ q1: 'a', q2: true, p1: 'n' });
      mkdirSync(OUTPUT_DIR, { recursive: true });
      await page.screenshot({ path: path.join(OUTPUT_DIR, 'journey-finished.png'), fullPage: true });

      // Retake from the end, by keyboard; answer differently (B, false, Yes), finish again.
      await tabTo(page, '.lp-end button');
      await press(page, 'Enter');
      await heading(page, 'Welcome');
      expect(await checked(page, 'input[name="q1:o"][value="a"]')).to.equal(false);
      await answerRadio(page, 'q1:o', 1);
      await page.locator('form:has(input[name="q1:o"]) .lp-bad').waitFor();
      expect(await verdictOf(page, 'input[name="q1:o"]')).to.include(en.incorrect);
      await continueByKeyboard(page);
      await heading(page, 'Middle');
      await answerRadio(page, 'q2:tf', 1);
      await page.locator('form:has(input[name="q2:tf"]) .lp-bad').waitFor();
      await answerRadio(page, 'p1:p', 0);
      await page.locator('form:has(input[name="p1:p"]) .lp-verdict p').waitFor();
      await continueByKeyboard(page);
      await heading(page, 'Done');

      const second = await completionOf(
        courseId,
        'ada',
        (c) => c.status === 'completed' && c.attempt === 2,
        'the second finish',
      );
      expect(second).to.include({ score: 0, passed: false, attempt: 2 });
      expect(second.answers).to.deep.equal({ q1: 'b', q2: false, p1: 'y' });
      const attempts = await req()<{ attempt: number; score: number; answers: Record<string, unknown> }[]>(
        'GET',
        `/completions/${second.id}/attempts`,
      );
      expect(attempts.status, attempts.text).to.equal(200);
      const byNumber = [...attempts.body.data].sort((a, b) => a.attempt - b.attempt);
      expect(byNumber.map((a) => [a.attempt, a.score])).to.deep.equal([
        [1, 100],
        [2, 0],
      ]);
      expect(byNumber[0].answers).to.deep.equal({ q1: 'a', q2: true, p1: 'n' });
      expect(errors).to.deep.equal([]);
    } finally {
      await context.close();
    }
  });

  it('an Arabic translation of an RTL course: dir="rtl" lang="ar", Arabic chrome, translated titles', async () => {
    // A light concept here (the journey above runs the default `stage`, dark): axe in run mode in both.
    const theme = await req()<{ id: string }>('POST', '/themes', {
      name: 'Editorial',
      tokens: { concept: 'editorial', mode: 'light' },
    });
    expect(theme.status, theme.text).to.equal(201);
    const courseId = await publishedCourse(app.base, ws.key, {
      themeId: theme.body.data.id,
      title: 'בטיחות',
      locale: 'he',
      direction: 'rtl',
      quizFeedback: 'immediate',
    });
    const tr = await req()<{ id: string }>('POST', `/courses/${courseId}/translations`, { locale: 'ar' });
    expect(tr.status, tr.text).to.equal(201);
    const patched = await req()('PATCH', `/courses/${courseId}/translations/${tr.body.data.id}`, {
      content: {
        title: 'السلامة',
        's:s1.title': 'مرحبا',
        's:s2.title': 'الوسط',
        's:s1.b:q1.question': 'اختر أ',
      },
    });
    expect(patched.status, patched.text).to.equal(200);

    const context = await learnerContext();
    const page = await context.newPage();
    const errors = watchErrors(page);
    try {
      await page.goto(await embedUrl(courseId, 'layla', 'ar'));
      await waitReady(page);
      await heading(page, 'مرحبا');
      expect(await inPage(page, 'docAttrs')).to.deep.equal(['rtl', 'ar']);
      expect(await page.locator('#lectern-player').getAttribute('data-concept')).to.equal('editorial');
      expect(await page.title()).to.equal('السلامة');
      await page.getByText('اختر أ').waitFor();
      await page.getByRole('button', { name: ar.contents }).waitFor();
      await answerRadio(page, 'q1:o', 0);
      await page.locator('form:has(input[name="q1:o"]) .lp-good').getByText(ar.correct).waitFor();
      await continueByKeyboard(page);
      await heading(page, 'الوسط');
      await page.getByRole('button', { name: ar.continue }).waitFor();
      expect(await seriousAxeViolations(page)).to.deep.equal([]);
      mkdirSync(OUTPUT_DIR, { recursive: true });
      await page.screenshot({ path: path.join(OUTPUT_DIR, 'journey-rtl-ar.png'), fullPage: true });
      const run = await completionOf(courseId, 'layla', (c) => c.lastScreenId === 's2', 'the Arabic run');
      expect(run.answers).to.deep.equal({ q1: 'a' });
      const list = await req()<{ locale: string }[]>('GET', `/completions?courseId=${courseId}`);
      expect(list.body.data[0].locale).to.equal('ar');
      expect(errors).to.deep.equal([]);
    } finally {
      await context.close();
    }
  });

  it('an Arabic translation of an LTR English course plays RTL with Arabic chrome; the source stays LTR', async () => {
    const courseId = await publishedCourse(app.base, ws.key, { title: 'Fire safety', locale: 'en' });
    const tr = await req()<{ id: string }>('POST', `/courses/${courseId}/translations`, { locale: 'ar' });
    expect(tr.status, tr.text).to.equal(201);
    const patched = await req()('PATCH', `/courses/${courseId}/translations/${tr.body.data.id}`, {
      content: { title: 'السلامة من الحرائق', 's:s1.title': 'مرحبا', 's:s1.b:q1.question': 'اختر أ' },
    });
    expect(patched.status, patched.text).to.equal(200);

    const context = await learnerContext();
    try {
      const arabic = await context.newPage();
      const errors = watchErrors(arabic);
      await arabic.goto(await embedUrl(courseId, 'samir', 'ar'));
      await waitReady(arabic);
      await heading(arabic, 'مرحبا');
      expect(await inPage(arabic, 'docAttrs')).to.deep.equal(['rtl', 'ar']);
      expect(await arabic.locator('#lectern-player').getAttribute('dir')).to.equal('rtl');
      expect(await inPage(arabic, 'style', '.lp-main', 'direction')).to.equal('rtl');
      await arabic.getByRole('button', { name: ar.contents }).waitFor();
      // Keyboard: the learner reaches the Arabic Continue and moves on.
      await answerRadio(arabic, 'q1:o', 0);
      await continueByKeyboard(arabic);
      await heading(arabic, 'Middle');
      await arabic.getByRole('button', { name: ar.continue }).waitFor();
      expect(await seriousAxeViolations(arabic)).to.deep.equal([]);
      mkdirSync(OUTPUT_DIR, { recursive: true });
      await arabic.screenshot({ path: path.join(OUTPUT_DIR, 'journey-ltr-course-ar.png'), fullPage: true });

      // The source, asked for in English, is the LTR course it always was.
      const english = await context.newPage();
      const englishErrors = watchErrors(english);
      await english.goto(await embedUrl(courseId, 'sam', 'en'));
      await waitReady(english);
      await heading(english, 'Welcome');
      expect(await inPage(english, 'docAttrs')).to.deep.equal(['ltr', 'en']);
      await english.getByRole('button', { name: en.contents }).waitFor();
      expect(errors).to.deep.equal([]);
      expect(englishErrors).to.deep.equal([]);
    } finally {
      await context.close();
    }
  });

  it('a tab closed right after an answer: the answer is on the server', async () => {
    // s1 also holds a checklist: a tick is not sent at once (it waits for the next flush, every 4 s), so
    // only the exit flush (pagehide / hidden, with keepalive) can get the last tick to the server.
    const screens = quizScreens();
    screens[0].blocks.push({
      id: 'check-1',
      type: 'checklist',
      items: [
        { id: 'k1', text: 'Know your exits' },
        { id: 'k2', text: 'Know your assembly point' },
      ],
    } as never);
    const courseId = await publishedCourse(app.base, ws.key, { title: 'Closed tab', screens });
    const context = await learnerContext();
    try {
      const page = await context.newPage();
      await page.goto(await embedUrl(courseId, 'closer'));
      await waitReady(page);
      await heading(page, 'Welcome');
      await answerRadio(page, 'q1:o', 0);
      await tabTo(page, '.lp-checklist input');
      await press(page, 'Space');
      expect(await page.locator('.lp-checklist input').first().isChecked()).to.equal(true);
      // No waiting for any flush: the tab goes at once (the browser stays, as when a learner closes a tab).
      await page.close();
      const run = await completionOf(
        courseId,
        'closer',
        (c) => 'check-1' in c.answers,
        'the answers of the closed tab',
      );
      expect(run.answers).to.deep.equal({ q1: 'a', 'check-1': ['k1'] });
      expect(run.lastScreenId).to.equal('s1');
    } finally {
      await context.close();
    }
  });
});
