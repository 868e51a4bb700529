/**
 * Accessibility of block controls in Chromium (preview mode, one browser for the file): a stack's and a
 * slideshow's buttons name what they move ("Next card", "Previous slide"), never a bare "Next" beside the
 * screen's Continue, in English and in a translated interface; a press that reaches an end, a handed-in answer
 * and a timed question's Start never leave the focus on the page body; fill-in-blank boxes are named by their
 * sentence; heading levels never skip; accordion, transcript and flashcard show and say that they open or flip;
 * choices are touch-sized, in every concept × mode.
 */
import { expect } from 'chai';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { stripAnswerKeys, type Block, type Screen } from '@lectern/courses';
import { CHROME_STRINGS, CONCEPTS, contrastRatio, format, type PlayerCourse } from '@lectern/player';
import { VALID_BLOCKS, clone } from '../unit/courses/fixtures.js';
import { waitFor } from '../support/http.js';
import {
  OUTPUT_DIR,
  buildPlayerOnce,
  inPage,
  installPageHelpers,
  launchChromium,
  seriousAxeViolations,
  startPlayerServer,
  tabTo,
  waitReady,
  watchErrors,
  type PlayerServer,
} from '../support/player-browser.js';

interface Focused {
  tag: string;
  label: string | null;
  cls: string;
  text: string;
}

function course(screens: Screen[], extra: Partial<PlayerCourse> = {}): PlayerCourse {
  return {
    id: 'crs_a11y',
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

describe('player accessibility: block controls (Chromium)', function () {
  this.timeout(120_000);
  let browser: Browser;
  let context: BrowserContext;
  let server: PlayerServer;

  before(async () => {
    const assets = await buildPlayerOnce();
    server = await startPlayerServer(assets);
    browser = await launchChromium();
    context = await browser.newContext({ viewport: { width: 1000, height: 800 } });
    await installPageHelpers(context);
    const screens = (): Screen[] => [
      {
        id: 's1',
        title: 'Pagers',
        blocks: [
          {
            id: 'stack',
            type: 'stack',
            cards: [
              { id: 'c1', title: 'Heat', text: 'A source of ignition' },
              { id: 'c2', title: 'Fuel', text: 'Anything that burns' },
              { id: 'c3', title: 'Oxygen', text: 'The air around us' },
            ],
          },
          {
            id: 'slides',
            type: 'slideshow',
            slides: [
              { id: 'sl1', image: `${server.url}/media/room.svg`, alt: 'A room' },
              { id: 'sl2', image: `${server.url}/media/room.svg`, alt: 'The same room' },
            ],
          },
        ] as Block[],
      },
      { id: 's2', title: 'Done', blocks: [{ id: 'h', type: 'heading', text: 'Done' } as Block] },
    ];
    server.add('pagers', { course: course(screens()) });
    server.add('pagers-fr', { course: course(screens(), { locale: 'fr' }) });
    for (const mode of ['light', 'dark'] as const)
      for (const concept of CONCEPTS)
        server.add(`link-${concept}-${mode}`, {
          course: course(
            [
              {
                id: 's1',
                title: 'Links',
                blocks: [
                  {
                    id: 'go',
                    type: 'button',
                    label: 'Open the handbook',
                    action: 'url',
                    url: 'https://example.org/',
                  },
                  { id: 'txt', type: 'text', text: 'Read [the policy](https://example.org/policy) first.' },
                ] as Block[],
              },
            ],
            { theme: { tokens: { concept, mode } } },
          ),
        });
  });
  before(() => {
    const v = clone(VALID_BLOCKS);
    mkdirSync(OUTPUT_DIR, { recursive: true });
    server.add('focus', {
      course: course(
        stripAnswerKeys([
          { id: 's1', title: 'Focus', blocks: [v.quiz_single_choice, v.ranking, v.timed_question] },
        ]),
      ),
    });
    const fill = stripAnswerKeys([{ id: 's1', title: 'Blanks', blocks: [v.fill_in_blank] }]);
    server.add('fill', { course: course(fill) });
    server.add('fill-fr', { course: course(fill, { locale: 'fr' }) });
    server.add('headings', {
      course: course([
        {
          id: 's1',
          title: 'Outline',
          blocks: [
            { id: 'h-plain', type: 'heading', text: 'No level given' },
            { id: 'md', type: 'markdown', markdown: '## A part\n\nText.\n\n#### Too deep\n\n### Back up' },
            { id: 'h-3', type: 'heading', text: 'Authored level 3', level: 3 },
            { id: 'h-1', type: 'heading', text: 'Authored level 1', level: 1 },
            v.stack,
          ] as Block[],
        },
      ]),
    });
    for (const mode of ['light', 'dark'] as const)
      for (const concept of CONCEPTS)
        server.add(`touch-${concept}-${mode}`, {
          course: course(
            stripAnswerKeys([
              {
                id: 's1',
                title: 'Open, flip, tick',
                blocks: [
                  v.accordion,
                  { ...v.audio, url: `${server.url}/media/clip.wav` },
                  v.flashcard,
                  v.quiz_single_choice,
                  v.quiz_multiple_choice,
                  v.checklist,
                ],
              },
            ]),
            { theme: { tokens: { concept, mode } } },
          ),
        });
  });
  after(async () => {
    await context?.close();
    await browser?.close();
    await server?.close();
  });

  async function open(name: string): Promise<{ page: Page; errors: string[] }> {
    const page = await context.newPage();
    const errors = watchErrors(page);
    await page.goto(`${server.url}/page/${name}`);
    await waitReady(page);
    return { page, errors };
  }

  it('names the stack and slideshow buttons by what they move, never a bare "Next" or "Previous"', async () => {
    const { page, errors } = await open('pagers');
    try {
      for (const name of ['Previous card', 'Next card', 'Previous slide', 'Next slide', 'Continue'])
        expect(await page.getByRole('button', { name, exact: true }).count(), name).to.equal(1);
      for (const name of ['Next', 'Previous'])
        expect(await page.getByRole('button', { name, exact: true }).count(), name).to.equal(0);
      expect(errors).to.deep.equal([]);
    } finally {
      await page.close();
    }
  });

  it('names them in the interface language (French)', async () => {
    const { page } = await open('pagers-fr');
    try {
      const fr = CHROME_STRINGS.fr;
      for (const name of [fr.previousCard, fr.nextCard, fr.previousSlide, fr.nextSlide])
        expect(await page.getByRole('button', { name, exact: true }).count(), name).to.equal(1);
      expect(fr.nextCard).to.not.equal(fr.next);
    } finally {
      await page.close();
    }
  });

  it('moves the focus to the other button when a press reaches an end, never to the body', async () => {
    const { page, errors } = await open('pagers');
    try {
      const next = page.getByRole('button', { name: 'Next card', exact: true });
      const prev = page.getByRole('button', { name: 'Previous card', exact: true });
      await next.focus();
      await page.keyboard.press('Enter');
      await page.getByText('2 of 3').waitFor();
      expect(await next.evaluate((el) => el === el.ownerDocument.activeElement)).to.equal(true);
      await page.keyboard.press('Enter');
      await page.getByText('3 of 3').waitFor();
      expect(await next.isDisabled()).to.equal(true);
      expect(await prev.evaluate((el) => el === el.ownerDocument.activeElement)).to.equal(true);
      // And back to the first card with the keyboard alone: the focus lands on "Next card" again.
      await page.keyboard.press('Enter');
      await page.keyboard.press('Enter');
      await page.getByText('1 of 3').waitFor();
      expect(await prev.isDisabled()).to.equal(true);
      expect(await next.evaluate((el) => el === el.ownerDocument.activeElement)).to.equal(true);
      expect((await inPage<{ tag: string } | null>(page, 'active'))?.tag).to.equal('BUTTON');
      expect(errors).to.deep.equal([]);
    } finally {
      await page.close();
    }
  });

  it('the link-style button is readable (≥ 4.5:1) in all 14 concept × mode variants', async () => {
    const hex = (rgb: string) =>
      '#' +
      (rgb.match(/\d+(\.\d+)?/g) ?? [])
        .slice(0, 3)
        .map((n) => Math.round(Number(n)).toString(16).padStart(2, '0'))
        .join('');
    const variants = (['light', 'dark'] as const).flatMap((mode) =>
      CONCEPTS.map((concept) => `${concept}-${mode}`),
    );
    const ratios = await Promise.all(
      variants.map(async (v) => {
        const { page, errors } = await open(`link-${v}`);
        try {
          const link = page.getByRole('link', { name: /Open the handbook/ });
          await link.waitFor();
          const fg = await inPage<string>(page, 'style', 'a.lp-btn', 'color');
          const bg = await inPage<string>(page, 'style', 'a.lp-btn', 'backgroundColor');
          const alpha = bg.startsWith('rgba') ? 'translucent' : 'opaque';
          expect(alpha, v).to.equal('opaque');
          expect(errors, v).to.deep.equal([]);
          return [v, contrastRatio(hex(fg), hex(bg))] as const;
        } finally {
          await page.close();
        }
      }),
    );
    for (const [v, ratio] of ratios) expect(ratio, `${v}: ${ratio.toFixed(2)}:1`).to.be.at.least(4.5);
  });
  it('moves the focus to the verdict after an answer is handed in, by keyboard alone', async () => {
    const { page, errors } = await open('focus');
    try {
      await tabTo(page, '[data-block-id="single-1"] input');
      await page.keyboard.press('Space');
      await tabTo(page, '[data-block-id="single-1"] button[type="submit"]');
      await page.keyboard.press('Enter');
      await page.locator('[data-block-id="single-1"] .lp-verdict').getByText(/./).waitFor();
      const at = await inPage<Focused>(page, 'focused');
      expect(at.tag).to.not.equal('BODY');
      expect(at.cls).to.include('lp-verdict');
      expect(at.text).to.equal(CHROME_STRINGS.en.resultsAtEnd);
      expect(errors).to.deep.equal([]);
    } finally {
      await page.close();
    }
  });

  it("moves the focus to the first option after a timed question's Start", async () => {
    const { page, errors } = await open('focus');
    try {
      await tabTo(page, '[data-block-id="timed-1"] button');
      await page.keyboard.press('Enter');
      await page.locator('[data-block-id="timed-1"] [role="timer"]').waitFor();
      const at = await inPage<Focused>(page, 'focused');
      expect(at.tag).to.equal('INPUT');
      expect(
        await page
          .locator('[data-block-id="timed-1"] input')
          .first()
          .evaluate((el) => el === el.ownerDocument.activeElement),
      ).to.equal(true);
      expect(errors).to.deep.equal([]);
    } finally {
      await page.close();
    }
  });

  it('keeps the focus on a moved ranking item, and on its other button once it reaches an end', async () => {
    const { page, errors } = await open('focus');
    try {
      const items = page.locator('[data-block-id="rank-1"] .lp-ranking-text');
      const count = await items.count();
      const text = await items.nth(count - 1).innerText();
      const en = CHROME_STRINGS.en;
      await tabTo(page, '[data-block-id="rank-1"] li:last-child .lp-ranking-moves button');
      for (let step = 1; step < count; step++) {
        await page.keyboard.press('Enter');
        await page
          .locator('[data-block-id="rank-1"] li')
          .nth(count - 1 - step)
          .getByText(text)
          .waitFor();
        const at = await inPage<Focused>(page, 'focused');
        // Up while it can go up; at the top "Move up" is disabled, so the focus is on its "Move down".
        expect(at.label, `step ${step}`).to.equal(`${step === count - 1 ? en.moveDown : en.moveUp}: ${text}`);
      }
      for (let step = 1; step < count; step++) await page.keyboard.press('Enter');
      await page.locator('[data-block-id="rank-1"] li').last().getByText(text).waitFor();
      expect((await inPage<Focused>(page, 'focused')).label).to.equal(`${en.moveUp}: ${text}`);
      expect(errors).to.deep.equal([]);
    } finally {
      await page.close();
    }
  });

  it('names each fill-in-blank box by its sentence, in English and French', async () => {
    const sentence = 'Fire needs ___, fuel and ___.';
    for (const [name, lang] of [
      ['fill', 'en'],
      ['fill-fr', 'fr'],
    ] as const) {
      const { page, errors } = await open(name);
      try {
        const t = CHROME_STRINGS[lang];
        for (const n of [1, 2]) {
          const box = page.getByRole('textbox', {
            name: format(t.blankOf, { n, name: sentence }),
            exact: true,
          });
          expect(await box.count(), `${lang} blank ${n}`).to.equal(1);
        }
        const snapshot = await page.locator('[data-block-id="fill-1"]').ariaSnapshot();
        expect(snapshot).to.include(`textbox "${format(t.blankOf, { n: 2, name: sentence })}"`);
        expect(errors).to.deep.equal([]);
      } finally {
        await page.close();
      }
    }
  });

  it('never skips a heading level: heading blocks, Markdown headings and card titles under the screen title', async () => {
    const { page, errors } = await open('headings');
    try {
      const levels = await inPage<number[]>(page, 'headingLevels', '.lp-main');
      expect(levels[0]).to.equal(1);
      expect(levels.length).to.be.at.least(7);
      for (let i = 1; i < levels.length; i++)
        expect(levels[i] - levels[i - 1], `levels ${levels.join(' ')}`).to.be.at.most(1);
      // A heading block without a level, and the source's top Markdown heading, sit one below the title.
      expect(await page.locator('[data-block-id="h-plain"] h2').count()).to.equal(1);
      expect(await page.locator('[data-block-id="md"] h2').first().innerText()).to.equal('A part');
      expect(errors).to.deep.equal([]);
    } finally {
      await page.close();
    }
  });

  describe('open, flip and tick in every concept × mode (mobile viewport)', () => {
    let mobile: BrowserContext;
    before(async () => {
      mobile = await browser.newContext({ viewport: { width: 390, height: 844 }, hasTouch: true });
      await installPageHelpers(mobile);
    });
    after(async () => {
      await mobile?.close();
    });
    for (const mode of ['light', 'dark'] as const)
      for (const concept of CONCEPTS)
        it(`${concept} ${mode}: markers and states of accordion, transcript and flashcard; 24 px choice targets`, async () => {
          const page = await mobile.newPage();
          const errors = watchErrors(page);
          try {
            await page.goto(`${server.url}/page/touch-${concept}-${mode}`);
            await waitReady(page);
            const summaries = page.locator('summary');
            expect(await summaries.count()).to.equal(3);
            for (const box of await inPage<{ width: number; height: number }[]>(
              page,
              'boxes',
              'summary .lp-disclosure',
            )) {
              expect(box.width).to.be.greaterThan(0);
              expect(box.height).to.be.greaterThan(0);
            }
            for (let i = 0; i < 3; i++)
              expect(await summaries.nth(i).getAttribute('aria-expanded')).to.equal('false');
            // By keyboard: open the first accordion item and the transcript, flip the card.
            await tabTo(page, '[data-block-id="accordion-1"] summary');
            await page.keyboard.press('Enter');
            await tabTo(page, '[data-block-id="audio-1"] summary');
            await page.keyboard.press('Space');
            await tabTo(page, '.lp-flashcard-card');
            const card = page.locator('.lp-flashcard-card');
            expect(await card.getAttribute('aria-pressed')).to.equal('false');
            await page.keyboard.press('Enter');
            expect(await card.getAttribute('aria-pressed')).to.equal('true');
            // aria-expanded follows the details' toggle event, which the browser fires in a task of its own.
            const expanded = () =>
              Promise.all([0, 1, 2].map((i) => summaries.nth(i).getAttribute('aria-expanded')));
            await waitFor(async () => (await expanded()).join() === 'true,false,true', {
              what: 'the opened accordion item and transcript to say so',
              timeoutMs: 2_000,
              intervalMs: 20,
            }).catch(() => undefined);
            expect(await expanded()).to.deep.equal(['true', 'false', 'true']);
            expect(await page.locator('[data-block-id="audio-1"] details p').isVisible()).to.equal(true);
            const flip = await inPage<{ width: number; height: number }[]>(
              page,
              'boxes',
              '.lp-flashcard-flip',
            );
            expect(flip).to.have.length(1);
            expect(flip[0].width * flip[0].height).to.be.greaterThan(0);
            expect(await card.innerText()).to.include('Pull, Aim, Squeeze, Sweep');
            // WCAG 2.5.8: every radio's and checkbox's clickable label is at least 24 × 24 CSS px.
            const targets = await inPage<{ width: number; height: number }[]>(
              page,
              'boxes',
              'label.lp-choice',
            );
            expect(targets).to.have.length(
              await page.locator('input[type="radio"], input[type="checkbox"]').count(),
            );
            expect(targets).to.have.length.at.least(7);
            for (const t of targets) {
              expect(t.width).to.be.at.least(24);
              expect(t.height).to.be.at.least(24);
            }
            await page.screenshot({
              path: path.join(OUTPUT_DIR, `a11y-open-${concept}-${mode}.png`),
              fullPage: true,
            });
            expect(await seriousAxeViolations(page)).to.deep.equal([]);
            expect(errors).to.deep.equal([]);
          } finally {
            await page.close();
          }
        });
  });
});
