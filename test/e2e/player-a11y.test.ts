/**
 * Accessibility of block controls in Chromium (preview mode, one browser for the file): a stack's and a
 * slideshow's buttons name what they move ("Next card", "Previous slide"), never a bare "Next" beside the
 * screen's Continue, in English and in a translated interface; and a press that reaches an end never leaves the
 * focus on the page body.
 */
import { expect } from 'chai';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import type { Block, Screen } from '@lectern/courses';
import { CHROME_STRINGS, CONCEPTS, contrastRatio, type PlayerCourse } from '@lectern/player';
import {
  buildPlayerOnce,
  inPage,
  installPageHelpers,
  launchChromium,
  startPlayerServer,
  waitReady,
  watchErrors,
  type PlayerServer,
} from '../support/player-browser.js';

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
});
