/**
 * The player in Chromium, in preview mode (course given inline, nothing recorded): every block type in
 * light and dark, with no console error and no serious or critical axe-core violation; blocks with
 * missing or malformed fields; keyboard operation of the quiz types; navigation, Contents, swipe, RTL
 * and translated chrome; host messages; every concept × mode, with a screenshot each under test/output.
 */
import { expect } from 'chai';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { BLOCK_TYPES, stripAnswerKeys, type Block, type Screen } from '@lectern/courses';
import { CHROME_STRINGS, CONCEPTS, CONCEPT_LOOKS, type PlayerCourse } from '@lectern/player';
import { VALID_BLOCKS, clone } from '../unit/courses/fixtures.js';
import {
  OUTPUT_DIR,
  buildPlayerOnce,
  launchChromium,
  seriousAxeViolations,
  startPlayerServer,
  inPage,
  installPageHelpers,
  tabTo,
  waitReady,
  watchErrors,
  type PlayerServer,
} from '../support/player-browser.js';

const en = CHROME_STRINGS.en;

function course(screens: Screen[], extra: Partial<PlayerCourse> = {}): PlayerCourse {
  return {
    id: 'crs_test',
    title: 'Fire safety',
    direction: 'ltr',
    locale: 'en',
    quizFeedback: 'deferred',
    navigation: 'default',
    passingScore: 70,
    theme: null,
    screens: screens as PlayerCourse['screens'],
    ...extra,
  };
}

/** Every block type, well-formed, as the learner view ships it, with media the test server serves. */
function allBlocksScreens(base: string): Screen[] {
  const blocks = Object.values(clone(VALID_BLOCKS)) as Block[];
  const media = (b: Block): Block => {
    const m = { ...b } as Record<string, unknown>;
    if (b.type === 'image' || b.type === 'hotspot')
      m[b.type === 'image' ? 'url' : 'image'] = `${base}/media/room.svg`;
    if (b.type === 'video' || b.type === 'audio' || b.type === 'video_chapters')
      m.url = `${base}/media/clip.wav`;
    if (b.type === 'video') m.poster = `${base}/media/room.svg`;
    if (b.type === 'embed') m.url = `${base}/widget`;
    if (b.type === 'slideshow') m.slides = [{ id: 'sl1', image: `${base}/media/room.svg`, alt: 'A room' }];
    if (b.type === 'button') m.screenId = 's-end';
    return m as Block;
  };
  return stripAnswerKeys([
    { id: 's-all', title: 'Every block', blocks: blocks.map(media) },
    {
      id: 's-end',
      title: 'The end',
      blocks: [{ id: 'res', type: 'results', title: 'Results', showScore: true }],
    },
  ]);
}

/** Every type with nothing but id and type, plus malformed fields, unknown fields and an unknown type. */
function blankScreens(): Screen[] {
  const bare = BLOCK_TYPES.map((type) => ({ id: `bare-${type}`, type }) as Block);
  const odd = [
    { id: 'odd-heading', type: 'heading', text: 42, level: 'x', colour: 'red' },
    { id: 'odd-single', type: 'quiz_single_choice', question: 'Q?', options: 'nope' },
    { id: 'odd-steps', type: 'steps', items: [null, 3, { title: 5 }, 'x'] },
    { id: 'odd-match', type: 'match', left: [{ id: 'l' }], right: null },
    { id: 'odd-fill', type: 'fill_in_blank', text: 'A {{b1}} and {{zz}}', blanks: [{ id: 'b1' }] },
    { id: 'odd-compare', type: 'compare', left: 'x', right: { points: [1, 'ok'] } },
    { id: 'odd-timed', type: 'timed_question', seconds: -4 },
    { id: 'odd-unknown', type: 'hologram', text: 'never shown' },
  ] as unknown as Block[];
  return [
    { id: 's-blank', title: 'Blank blocks', blocks: [...bare, ...odd] },
    { id: 's-next', title: 'Next', blocks: [{ id: 't', type: 'text', text: 'Still here.' } as Block] },
  ];
}

function quizScreens(base: string): Screen[] {
  const v = clone(VALID_BLOCKS);
  return stripAnswerKeys([
    {
      id: 's-quiz',
      title: 'Quiz',
      blocks: [
        v.quiz_single_choice,
        v.quiz_multiple_choice,
        v.quiz_true_false,
        v.fill_in_blank,
        v.match,
        v.ranking,
        { ...v.hotspot, image: `${base}/media/room.svg` },
        {
          id: 'spots-1',
          type: 'hotspot',
          image: `${base}/media/room.svg`,
          alt: 'A room',
          question: 'Pick the extinguisher',
          showSpots: true,
          spots: [
            { id: 'ext', x: 0.2, y: 0.55, radius: 0.1, correct: true, label: 'Extinguisher' },
            { id: 'bin', x: 0.72, y: 0.6, radius: 0.1, label: 'Bin' },
          ],
        },
        v.scenario,
        v.poll,
        v.timed_question,
        v.reflection,
        v.checklist,
        v.flashcard,
        v.accordion,
        { ...v.stack },
      ],
    },
    {
      id: 's-end',
      title: 'Done',
      blocks: [{ id: 'res', type: 'results', title: 'Results', showScore: true }],
    },
  ]);
}

function navScreens(): Screen[] {
  return [1, 2, 3].map((n) => ({
    id: `s${n}`,
    title: `Screen number ${n}`,
    blocks: [
      { id: `t${n}`, type: 'text', text: `Body ${n}.` },
      { id: `go${n}`, type: 'button', label: `Go on ${n}` },
    ] as Block[],
  }));
}

describe('player in Chromium (preview mode)', function () {
  this.timeout(120_000);
  let browser: Browser;
  let server: PlayerServer;
  let context: BrowserContext;

  before(async function () {
    this.timeout(180_000);
    const assets = await buildPlayerOnce();
    server = await startPlayerServer(assets);
    browser = await launchChromium();
    mkdirSync(OUTPUT_DIR, { recursive: true });
  });
  after(async () => {
    await browser?.close();
    await server?.close();
  });
  beforeEach(async () => {
    context = await browser.newContext({ viewport: { width: 1000, height: 800 } });
    await installPageHelpers(context);
  });
  afterEach(async () => {
    await context?.close();
  });

  async function open(
    name: string,
    c: PlayerCourse,
    lang?: string,
  ): Promise<{ page: Page; errors: string[] }> {
    server.add(name, { course: c, lang });
    const page = await context.newPage();
    const errors = watchErrors(page);
    await page.goto(`${server.url}/page/${name}`);
    await waitReady(page);
    return { page, errors };
  }

  for (const mode of ['light', 'dark'] as const) {
    it(`renders every block type in ${mode} mode with no console error and no serious axe violation`, async () => {
      const c = course(allBlocksScreens(server.url), { theme: { tokens: { mode } } });
      const { page, errors } = await open(`all-${mode}`, c);
      const types = await page.$$eval('[data-block-type]', (els) =>
        els.map((e) => e.getAttribute('data-block-type')),
      );
      // instructor_note never reaches learners; the other 38 types are on the screen.
      expect(new Set(types)).to.deep.equal(new Set(BLOCK_TYPES.filter((t) => t !== 'instructor_note')));
      expect(await page.locator('.lp-block-error').count()).to.equal(0);
      // Each block drew something of its own.
      const empty = await page.$$eval('[data-block-type]', (els) =>
        els
          .filter(
            (e) =>
              e.getAttribute('data-block-type') !== 'spacer' &&
              e.getAttribute('data-block-type') !== 'divider',
          )
          .filter((e) => (e.textContent ?? '').trim() === '' && !e.querySelector('img, video, audio, iframe'))
          .map((e) => e.getAttribute('data-block-type')),
      );
      expect(empty).to.deep.equal([]);
      const scheme = await inPage(page, 'style', '#lectern-player', 'colorScheme');
      expect(scheme).to.equal(mode);
      expect(await seriousAxeViolations(page)).to.deep.equal([]);
      expect(errors).to.deep.equal([]);
    });
  }

  it("an embed block from the page's own origin is framed without allow-same-origin, another origin keeps it", async () => {
    // 127.0.0.1 and localhost are two origins served by the same test server.
    const other = server.url.replace('127.0.0.1', 'localhost');
    const c = course([
      {
        id: 's1',
        title: 'Widgets',
        blocks: [
          { id: 'same', type: 'embed', url: `${server.url}/widget`, title: 'Same origin', height: 120 },
          { id: 'other', type: 'embed', url: `${other}/widget`, title: 'Other origin', height: 120 },
        ],
      },
    ] as Screen[]);
    const { page, errors } = await open('embed-sandbox', c);
    const sandbox = (id: string) => page.locator(`[data-block-id="${id}"] iframe`).getAttribute('sandbox');
    const same = (await sandbox('same'))!.split(' ');
    expect(same).to.include('allow-scripts').and.not.include('allow-same-origin');
    expect((await sandbox('other'))!.split(' ')).to.include.members(['allow-scripts', 'allow-same-origin']);
    // The same-origin widget runs in an opaque origin: it cannot reach into the player's page.
    await page.locator('[data-block-id="same"] iframe').scrollIntoViewIfNeeded();
    const widget = page.frameLocator('[data-block-id="same"] iframe');
    await widget.locator('p').waitFor();
    const frame = page.frames().find((f) => f.url() === `${server.url}/widget`);
    expect(frame, 'the widget frame').to.not.equal(undefined);
    expect(await frame!.evaluate('self.origin')).to.equal('null');
    // The page's policy frames the service's own origin and https: only, so this plain-http widget of another
    // origin is refused by the browser (the one violation of this page); an https widget would load.
    expect(errors).to.not.be.empty;
    for (const e of errors) expect(e).to.include('frame-src').and.include(other);
  });

  it('renders blocks with missing, malformed and unknown fields without breaking the screen', async () => {
    const { page, errors } = await open('blank', course(blankScreens()));
    // Every known type is on the screen (blank), the unknown type draws nothing, and no block failed.
    const ids = await page.$$eval('[data-block-id]', (els) =>
      els.map((e) => e.getAttribute('data-block-id')),
    );
    for (const type of BLOCK_TYPES) expect(ids).to.include(`bare-${type}`);
    expect(ids).to.not.include('odd-unknown');
    expect(await page.getByText('never shown').count()).to.equal(0);
    expect(await page.locator('.lp-block-error').count()).to.equal(0);
    expect(await page.locator('h1').textContent()).to.equal('Blank blocks');
    // The fill-in-blank marker naming no blank stays as text; the known one became a box.
    expect(await page.locator('[data-block-id="odd-fill"] input').count()).to.equal(1);
    await page.getByRole('button', { name: en.continue }).click();
    expect(await page.locator('h1').textContent()).to.equal('Next');
    expect(await seriousAxeViolations(page)).to.deep.equal([]);
    expect(errors).to.deep.equal([]);
  });

  it('operates every quiz type with the keyboard alone', async () => {
    const { page, errors } = await open('quiz', course(quizScreens(server.url)));
    const block = (id: string) => `[data-block-id="${id}"]`;
    const status = (id: string) => page.locator(`${block(id)} [role="status"]`).first();
    const submitOf = (id: string) => `${block(id)} button[type="submit"]`;
    const saved = en.resultsAtEnd;

    // Single choice: arrow keys move through the radio group.
    await page.focus(`${block('single-1')} input[type="radio"]`);
    await page.keyboard.press('ArrowDown');
    await tabTo(page, submitOf('single-1'));
    await page.keyboard.press('Enter');
    expect(await status('single-1').textContent()).to.equal(saved);

    // Multiple choice: Space ticks, Tab moves on.
    await page.focus(`${block('multi-1')} input[type="checkbox"]`);
    await page.keyboard.press('Space');
    await page.keyboard.press('Tab');
    await page.keyboard.press('Space');
    await tabTo(page, submitOf('multi-1'));
    await page.keyboard.press('Enter');
    expect(await status('multi-1').textContent()).to.equal(saved);
    expect(await page.locator(`${block('multi-1')} input:checked`).count()).to.equal(2);

    // True/false.
    await page.focus(`${block('tf-1')} input[type="radio"]`);
    await page.keyboard.press('ArrowDown');
    expect(await page.locator(`${block('tf-1')} input[value="false"]`).isChecked()).to.equal(true);
    await tabTo(page, submitOf('tf-1'));
    await page.keyboard.press('Enter');
    expect(await status('tf-1').textContent()).to.equal(saved);

    // Fill in the blanks: the submit button stays disabled until every blank has text.
    await page.focus(`${block('fill-1')} input`);
    await page.keyboard.type('heat');
    expect(await page.locator(submitOf('fill-1')).isDisabled()).to.equal(true);
    await page.keyboard.press('Tab');
    await page.keyboard.type('oxygen');
    await tabTo(page, submitOf('fill-1'));
    await page.keyboard.press('Enter');
    expect(await status('fill-1').textContent()).to.equal(saved);

    // Match: one select per left item, changed with the arrow keys.
    const selects = page.locator(`${block('match-1')} select`);
    const count = await selects.count();
    expect(count).to.equal(3);
    await selects.first().focus();
    for (let i = 0; i < count; i++) {
      for (let k = 0; k <= i; k++) await page.keyboard.press('ArrowDown');
      if (i < count - 1) await page.keyboard.press('Tab');
    }
    const chosen = await inPage<string[]>(page, 'values', `${block('match-1')} select`);
    expect(chosen.every((v) => v !== '')).to.equal(true);
    await tabTo(page, submitOf('match-1'));
    await page.keyboard.press('Enter');
    expect(await status('match-1').textContent()).to.equal(saved);

    // Ranking: move the first item down; the focus stays on the moved item's button.
    const items = page.locator(`${block('rank-1')} .lp-ranking-text`);
    const before = await items.allTextContents();
    await page.focus(`${block('rank-1')} li:first-child button:nth-child(2)`);
    await page.keyboard.press('Enter');
    const after = await items.allTextContents();
    expect(after).to.deep.equal([before[1], before[0], ...before.slice(2)]);
    const focused = await inPage<{ label: string }>(page, 'active');
    expect(focused.label).to.equal(`${en.moveDown}: ${before[0]}`);
    await tabTo(page, submitOf('rank-1'));
    await page.keyboard.press('Enter');
    expect(await status('rank-1').textContent()).to.equal(saved);

    // Hotspot without visible spots: arrow keys move a marker, Enter places the point.
    await page.focus(`${block('hotspot-1')} .lp-hotspot-area`);
    for (let i = 0; i < 5; i++) await page.keyboard.press('ArrowLeft');
    await page.keyboard.press('Enter');
    expect(await page.locator(`${block('hotspot-1')} .lp-hotspot-mark`).count()).to.equal(1);
    await tabTo(page, submitOf('hotspot-1'));
    await page.keyboard.press('Enter');
    expect(await status('hotspot-1').textContent()).to.equal(saved);

    // Hotspot with spots: each spot is a named toggle button.
    await page.focus(`${block('spots-1')} button[aria-label="Extinguisher"]`);
    await page.keyboard.press('Enter');
    expect(
      await page
        .locator(`${block('spots-1')} button[aria-label="Extinguisher"]`)
        .getAttribute('aria-pressed'),
    ).to.equal('true');
    await tabTo(page, submitOf('spots-1'));
    await page.keyboard.press('Enter');
    expect(await status('spots-1').textContent()).to.equal(saved);

    // Scenario and poll.
    await page.focus(`${block('scenario-1')} input[type="radio"]`);
    await page.keyboard.press('Space');
    await tabTo(page, submitOf('scenario-1'));
    await page.keyboard.press('Enter');
    expect(await status('scenario-1').textContent()).to.equal(saved);
    await page.focus(`${block('poll-1')} input[type="radio"]`);
    await page.keyboard.press('Space');
    await tabTo(page, submitOf('poll-1'));
    await page.keyboard.press('Enter');
    expect(await status('poll-1').textContent()).to.equal(en.thanks);

    // Timed question: Start, a visible timer, answer before it runs out.
    await page.focus(`${block('timed-1')} button`);
    await page.keyboard.press('Enter');
    const timer = page.locator(`${block('timed-1')} [role="timer"]`);
    expect(await timer.textContent()).to.match(/^\d+ s left$/);
    await page.focus(`${block('timed-1')} input[type="radio"]`);
    await page.keyboard.press('Space');
    await tabTo(page, submitOf('timed-1'));
    await page.keyboard.press('Enter');
    expect(await status('timed-1').textContent()).to.equal(saved);
    expect(await timer.count()).to.equal(0);

    // Reflection, checklist, flashcard, accordion and stack.
    await page.focus(`${block('reflect-1')} textarea`);
    await page.keyboard.type('By the stairs');
    await tabTo(page, `${block('reflect-1')} button[type="submit"]`);
    await page.keyboard.press('Enter');
    expect(await page.locator(`${block('reflect-1')} [role="status"]`).textContent()).to.equal(en.saved);
    await page.focus(`${block('check-1')} input`);
    await page.keyboard.press('Space');
    expect(await page.locator(`${block('check-1')} input:checked`).count()).to.equal(1);
    await page.focus(`${block('card-1')} button`);
    await page.keyboard.press('Enter');
    expect(await page.locator(`${block('card-1')} button`).getAttribute('aria-pressed')).to.equal('true');
    expect(await page.locator(`${block('card-1')}`).textContent()).to.contain('Pull, Aim, Squeeze, Sweep');
    await page.focus(`${block('accordion-1')} summary`);
    await page.keyboard.press('Enter');
    expect(
      await page
        .locator(`${block('accordion-1')} details`)
        .first()
        .getAttribute('open'),
    ).to.equal('');
    await page.focus(`${block('stack-1')} button:has-text("${en.next}")`);
    await page.keyboard.press('Enter');
    expect(await page.locator(`${block('stack-1')} [aria-live]`).textContent()).to.equal('2 of 2');

    expect(await seriousAxeViolations(page)).to.deep.equal([]);
    expect(errors).to.deep.equal([]);
  });

  it('moves between screens by keyboard and Contents, focusing the new heading; swipe turns screens', async () => {
    const { page, errors } = await open('nav', course(navScreens()));
    expect(await page.locator('.lp-nav button', { hasText: en.back }).isDisabled()).to.equal(true);
    await tabTo(page, '.lp-continue');
    await page.keyboard.press('Enter');
    expect(await page.locator('h1').textContent()).to.equal('Screen number 2');
    expect(await inPage(page, 'active')).to.deep.equal({ tag: 'H1', label: null });
    expect(await page.locator('.lp-chrome-step').textContent()).to.equal('Screen 2 of 3');

    await tabTo(page, '.lp-contents-btn');
    await page.keyboard.press('Enter');
    const dialog = page.locator('dialog.lp-dialog');
    expect(await dialog.isVisible()).to.equal(true);
    expect(await dialog.locator('[aria-current="step"]').textContent()).to.contain('Screen number 2');
    await tabTo(page, 'dialog.lp-dialog li:nth-child(3) button');
    await page.keyboard.press('Enter');
    expect(await dialog.isVisible()).to.equal(false);
    expect(await page.locator('h1').textContent()).to.equal('Screen number 3');
    expect(await page.locator('.lp-continue').count()).to.equal(0); // the last screen has no Continue

    // A leftward touch swipe moves back? No: leftward moves on, rightward moves back (LTR).
    const swipe = (fromX: number, toX: number) => inPage(page, 'swipe', fromX, toX);
    await swipe(100, 400);
    expect(await page.locator('h1').textContent()).to.equal('Screen number 2');
    await swipe(400, 100);
    expect(await page.locator('h1').textContent()).to.equal('Screen number 3');
    expect(errors).to.deep.equal([]);
  });

  it('with navigation hidden draws no Back/Continue, ignores swipes, keeps Contents, and button blocks move on', async () => {
    const { page, errors } = await open('hidden', course(navScreens(), { navigation: 'hidden' }));
    expect(await page.locator('.lp-nav').count()).to.equal(0);
    expect(await page.locator('.lp-contents-btn').isVisible()).to.equal(true);
    await inPage(page, 'swipe', 400, 100);
    expect(await page.locator('h1').textContent()).to.equal('Screen number 1');
    await page.getByRole('button', { name: 'Go on 1' }).press('Enter');
    expect(await page.locator('h1').textContent()).to.equal('Screen number 2');
    expect(errors).to.deep.equal([]);
  });

  it('mirrors the layout for a right-to-left course and speaks its language', async () => {
    const screens = navScreens();
    const { page, errors } = await open(
      'rtl',
      course(screens, { direction: 'rtl', locale: 'ar', title: 'السلامة' }),
      'ar',
    );
    expect(await inPage(page, 'docAttrs')).to.deep.equal(['rtl', 'ar']);
    const ar = CHROME_STRINGS.ar;
    const cont = page.getByRole('button', { name: ar.continue });
    const back = page.getByRole('button', { name: ar.back });
    expect(await cont.isVisible()).to.equal(true);
    expect(await page.getByRole('button', { name: ar.contents }).isVisible()).to.equal(true);
    // Logical properties: Continue sits at the reading end, which is the left in RTL.
    const [c, b] = await Promise.all([cont.boundingBox(), back.boundingBox()]);
    expect(c!.x).to.be.lessThan(b!.x);
    const chrome = await page.locator('.lp-chrome-step').textContent();
    expect(chrome).to.equal('الشاشة 1 من 3');
    // A swipe rightwards moves on in RTL.
    await inPage(page, 'swipe', 100, 400);
    expect(await page.locator('h1').textContent()).to.equal('Screen number 2');
    expect(await seriousAxeViolations(page)).to.deep.equal([]);
    expect(errors).to.deep.equal([]);
  });

  for (const lang of ['es', 'fr', 'de', 'pt', 'he', 'ja', 'zh']) {
    it(`serves the chrome in ${lang}, and in English for an untranslated language`, async () => {
      const { page } = await open(`lang-${lang}`, course(navScreens(), { locale: lang }), lang);
      expect(await page.locator('.lp-continue').textContent()).to.contain(CHROME_STRINGS[lang].continue);
      expect(await page.locator('.lp-contents-btn').textContent()).to.contain(CHROME_STRINGS[lang].contents);
    });
  }
  it('falls back to English chrome for a language it has no strings for', async () => {
    const { page } = await open('lang-nl', course(navScreens(), { locale: 'nl' }), 'nl');
    expect(await page.locator('.lp-continue').textContent()).to.contain(en.continue);
    expect(await inPage(page, 'docAttrs')).to.deep.equal(['ltr', 'nl']);
  });

  it('tells the host page ready, resize, progress and completed through postMessage', async () => {
    server.add('host', { course: course(navScreens()) });
    const page = await context.newPage();
    const errors = watchErrors(page);
    await page.goto(`${server.url}/host/host`);
    const frame = page.frameLocator('#course');
    await frame.locator('#lectern-player[data-ready="true"]').waitFor();
    const heard = () => inPage<{ type: string }[]>(page, 'heard');
    await page.waitForFunction('window.heard.some(function (m) { return m.type === "resize"; })');
    const first = await heard();
    expect(first.find((m) => m.type === 'ready')).to.deep.include({
      type: 'ready',
      courseId: 'crs_test',
      screens: 3,
    });
    const resize = first.find((m) => m.type === 'resize') as unknown as { height: number };
    expect(resize.height).to.be.greaterThan(100);
    // The host sized the frame from the message, so the whole course shows without an inner scrollbar.
    expect(await page.locator('#course').getAttribute('style')).to.contain(`height: ${resize.height}px`);
    await frame.locator('.lp-continue').click();
    await frame.locator('.lp-continue').click();
    await page.waitForFunction('window.heard.some(function (m) { return m.type === "completed"; })');
    const all = await heard();
    expect(all.filter((m) => m.type === 'progress')).to.deep.equal([
      {
        source: 'lectern-player',
        type: 'progress',
        courseId: 'crs_test',
        screenId: 's2',
        index: 1,
        percent: 66.7,
      },
      {
        source: 'lectern-player',
        type: 'progress',
        courseId: 'crs_test',
        screenId: 's3',
        index: 2,
        percent: 100,
      },
    ]);
    expect(all.find((m) => m.type === 'completed')).to.deep.equal({
      source: 'lectern-player',
      type: 'completed',
      courseId: 'crs_test',
      score: null,
      passed: null,
      attempt: null,
    });
    // Retake from the end starts over.
    await frame.getByRole('button', { name: en.retake }).click();
    expect(await frame.locator('h1').textContent()).to.equal('Screen number 1');
    expect(errors).to.deep.equal([]);
  });

  it('follows the system colour scheme in auto mode, with the separate dark palette', async () => {
    const dark = '#0a0b0c';
    const c = course(navScreens(), {
      theme: { tokens: { concept: 'calm', mode: 'auto', darkPalette: { background: dark } } },
    });
    server.add('auto', { course: c });
    const bg = (page: Page) => inPage<string>(page, 'style', '#lectern-player', 'backgroundColor');
    const page = await context.newPage();
    await page.emulateMedia({ colorScheme: 'light' });
    await page.goto(`${server.url}/page/auto`);
    await waitReady(page);
    expect(await bg(page)).to.equal(rgb(CONCEPT_LOOKS.calm.palette.background));
    await page.emulateMedia({ colorScheme: 'dark' });
    expect(await bg(page)).to.equal(rgb(dark));
  });

  it('applies token overrides: palette, fonts with @font-face, reading size, corners, density and logo', async () => {
    const c = course(navScreens(), {
      theme: {
        tokens: {
          concept: 'workbench',
          mode: 'light',
          palette: { primary: '#7a1fa2' },
          fontFamily: 'Lectern Test',
          readingSize: 22,
          corners: 'pill',
          density: 'spacious',
          logoUrl: `${server.url}/media/room.svg`,
        },
        customFonts: [{ family: 'Lectern Test', url: `${server.url}/media/font.ttf`, weight: 400 }],
      },
    });
    const { page, errors } = await open('tokens', c);
    const look = {
      primary: await inPage(page, 'style', '.lp-continue', 'backgroundColor'),
      radius: await inPage(page, 'style', '.lp-continue', 'borderTopLeftRadius'),
      size: await inPage(page, 'style', '#lectern-player', 'fontSize'),
      font: await inPage<string>(page, 'style', '#lectern-player', 'fontFamily'),
      space: await inPage(page, 'cssVar', '#lectern-player', '--lp-space'),
      loaded: await inPage(page, 'fontLoaded', 'Lectern Test'),
      logo: await page.locator('.lp-logo').getAttribute('src'),
    };
    expect(look.primary).to.equal(rgb('#7a1fa2'));
    expect(look.radius).to.equal('999px');
    expect(look.size).to.equal('22px');
    expect(look.font.startsWith('"Lectern Test"')).to.equal(true);
    expect(look.space).to.equal('1.35rem');
    expect(look.loaded).to.equal(true);
    expect(look.logo).to.equal(`${server.url}/media/room.svg`);
    expect(errors).to.deep.equal([]);
  });

  describe('the seven concepts in both modes (screenshots in test/output/player)', () => {
    const looks: Record<string, string> = {};
    for (const mode of ['light', 'dark'] as const) {
      for (const concept of CONCEPTS) {
        it(`${concept} ${mode}: its own look${concept === 'workbench' || concept === 'conversation' ? ' and arrangement' : ''}, no serious axe violation`, async () => {
          await context.close();
          context = await browser.newContext({ viewport: { width: 1100, height: 900 } });
          await installPageHelpers(context);
          const c = course(allBlocksScreens(server.url), { theme: { tokens: { concept, mode } } });
          const { page, errors } = await open(`concept-${concept}-${mode}`, c);
          const probes: [string, string][] = [
            ['#lectern-player', 'backgroundColor'],
            ['.lp-chrome', 'backgroundColor'],
            ['.lp-chrome', 'flexDirection'],
            ['h1', 'fontFamily'],
            ['.lp-continue', 'backgroundColor'],
            ['.lp-continue', 'borderTopLeftRadius'],
          ];
          looks[`${concept} ${mode}`] = (
            await Promise.all(probes.map(([sel, prop]) => inPage<string>(page, 'style', sel, prop)))
          ).join('|');
          // workbench keeps the Contents beside the screen; conversation lays blocks out as messages.
          const panel = await inPage(page, 'style', '.lp-panel', 'display');
          const bubble = await inPage<string>(page, 'style', '.lp-block', 'marginInlineStart');
          expect(panel).to.equal(concept === 'workbench' ? 'block' : null);
          if (concept === 'conversation') expect(parseFloat(bubble)).to.be.greaterThan(0);
          else expect(bubble).to.equal('0px');
          expect(await inPage(page, 'style', '#lectern-player', 'colorScheme')).to.equal(mode);
          await page.screenshot({ path: path.join(OUTPUT_DIR, `${concept}-${mode}.png`), fullPage: true });
          expect(await seriousAxeViolations(page)).to.deep.equal([]);
          // The opened states too: accordion and transcript open, flashcard flipped, a verdict shown.
          for (const summary of await page.locator('summary').all()) await summary.click();
          await page.locator('.lp-flashcard-card').click();
          await page.locator('[data-block-id="single-1"] input').first().check();
          await page.locator('[data-block-id="single-1"] button[type="submit"]').click();
          await page.locator('[data-block-id="single-1"] .lp-verdict').getByText(en.resultsAtEnd).waitFor();
          expect(await page.locator('summary[aria-expanded="true"]').count()).to.be.greaterThan(1);
          expect(await page.locator('.lp-flashcard-card').getAttribute('aria-pressed')).to.equal('true');
          expect(await seriousAxeViolations(page), 'opened states').to.deep.equal([]);
          expect(errors).to.deep.equal([]);
        });
      }
      it(`no two concepts look alike in ${mode} mode`, () => {
        const mine = CONCEPTS.map((c) => looks[`${c} ${mode}`]);
        expect(
          mine.filter((l) => l === undefined),
          'every concept was drawn above',
        ).to.deep.equal([]);
        expect(new Set(mine).size).to.equal(CONCEPTS.length);
      });
    }
  });
});

function rgb(hex: string): string {
  const h = hex.slice(1);
  const full = h.length === 3 ? [...h].map((c) => c + c).join('') : h.slice(0, 6);
  const [r, g, b] = [0, 2, 4].map((i) => parseInt(full.slice(i, i + 2), 16));
  return `rgb(${r}, ${g}, ${b})`;
}
