/**
 * Reading direction, the editorial masthead and video captions in Chromium, in preview mode: hotspot arrow keys
 * in RTL and LTR, the editorial drop cap only for scripts whose letters stand alone, an editorial header with no
 * blank band and a progress bar that can be seen (light and dark), and a video's WebVTT track showing its cue.
 * Screenshots of each under test/output/player.
 */
import { expect } from 'chai';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { stripAnswerKeys, type Screen } from '@lectern/courses';
import { CONCEPTS, type PlayerCourse } from '@lectern/player';
import {
  OUTPUT_DIR,
  buildPlayerOnce,
  contrastInPage,
  inPage,
  installPageHelpers,
  launchChromium,
  seriousAxeViolations,
  startPlayerServer,
  waitReady,
  watchErrors,
  type PlayerServer,
} from '../support/player-browser.js';

function course(screens: Screen[], extra: Partial<PlayerCourse> = {}): PlayerCourse {
  return {
    id: 'crs_rtl',
    title: 'Fire safety',
    direction: 'ltr',
    locale: 'en',
    quizFeedback: 'deferred',
    navigation: 'default',
    passingScore: 70,
    theme: null,
    screens: stripAnswerKeys(screens) as PlayerCourse['screens'],
    ...extra,
  };
}

const arabic = { direction: 'rtl', locale: 'ar', title: 'السلامة' } as const;

describe('player: RTL, the editorial masthead and video captions (Chromium)', function () {
  this.timeout(120_000);
  let browser: Browser;
  let server: PlayerServer;
  let context: BrowserContext;

  before(async function () {
    this.timeout(180_000);
    server = await startPlayerServer(await buildPlayerOnce());
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

  async function open(name: string, c: PlayerCourse): Promise<{ page: Page; errors: string[] }> {
    server.add(name, { course: c });
    const page = await context.newPage();
    const errors = watchErrors(page);
    await page.goto(`${server.url}/page/${name}`);
    await waitReady(page);
    return { page, errors };
  }
  const shot = (page: Page, name: string) =>
    page.screenshot({ path: path.join(OUTPUT_DIR, `${name}.png`), fullPage: true });

  const hotspots = (base: string): Screen[] => [
    {
      id: 's1',
      title: 'Spots',
      blocks: [
        {
          id: 'spots',
          type: 'hotspot',
          image: `${base}/media/room.svg`,
          alt: 'A room',
          question: 'Find the extinguisher',
          showSpots: true,
          spots: [
            { id: 'a', x: 0.2, y: 0.5, radius: 0.1, correct: true, label: 'Extinguisher' },
            { id: 'b', x: 0.5, y: 0.5, radius: 0.1, label: 'Door' },
            { id: 'c', x: 0.8, y: 0.5, radius: 0.1, label: 'Bin' },
          ],
        },
        {
          id: 'free',
          type: 'hotspot',
          image: `${base}/media/room.svg`,
          alt: 'A room',
          question: 'Point at the bin',
          spots: [{ id: 'x', x: 0.8, y: 0.5, radius: 0.1, correct: true }],
        },
      ],
    },
  ];

  for (const dir of ['ltr', 'rtl'] as const) {
    it(`hotspot arrow keys in ${dir.toUpperCase()} follow the reading direction; spots sit where the image shows them`, async () => {
      const { page, errors } = await open(
        `hotspot-${dir}`,
        course(hotspots(server.url), dir === 'rtl' ? arabic : {}),
      );
      const focused = () => page.evaluate('document.activeElement.getAttribute("aria-label")');
      await page.focus('button.lp-spot[aria-label="Door"]');
      // Like a radio group: ArrowRight is the next spot in LTR and the previous one in RTL; Down is always next.
      await page.keyboard.press('ArrowRight');
      expect(await focused()).to.equal(dir === 'rtl' ? 'Extinguisher' : 'Bin');
      await page.keyboard.press('ArrowLeft');
      expect(await focused()).to.equal('Door');
      await page.keyboard.press('ArrowLeft');
      expect(await focused()).to.equal(dir === 'rtl' ? 'Bin' : 'Extinguisher');
      await page.keyboard.press('ArrowDown');
      expect(await focused()).to.equal(dir === 'rtl' ? 'Extinguisher' : 'Door');
      await page.keyboard.press('Space');
      expect(await page.locator('button.lp-spot[aria-pressed="true"]').getAttribute('aria-label')).to.equal(
        dir === 'rtl' ? 'Extinguisher' : 'Door',
      );

      // The image is never mirrored: a spot sits at its x from the image's left edge in RTL too (0.2: the
      // extinguisher, the red shape at 15–25 % of room.svg).
      const img = (await page.locator('[data-block-id="spots"] img').boundingBox())!;
      const ext = (await page.locator('button.lp-spot[aria-label="Extinguisher"]').boundingBox())!;
      expect((ext.x + ext.width / 2 - img.x) / img.width).to.be.closeTo(0.2, 0.01);

      // The point follows the reading direction like the spots: ArrowRight goes forwards in LTR (rightwards),
      // backwards in RTL (leftwards); ArrowLeft the other way.
      const area = '[data-block-id="free"] .lp-hotspot-area';
      await page.focus(area);
      const cursorX = async () => {
        const box = await page.locator('.lp-hotspot-cursor').boundingBox();
        return box!.x;
      };
      const start = await cursorX();
      for (let i = 0; i < 5; i++) await page.keyboard.press('ArrowRight');
      const afterRight = await cursorX();
      if (dir === 'rtl') expect(afterRight).to.be.lessThan(start);
      else expect(afterRight).to.be.greaterThan(start);
      for (let i = 0; i < 10; i++) await page.keyboard.press('ArrowLeft');
      if (dir === 'rtl') expect(await cursorX()).to.be.greaterThan(start);
      else expect(await cursorX()).to.be.lessThan(start);
      expect(await seriousAxeViolations(page)).to.deep.equal([]);
      await shot(page, `hotspot-keys-${dir}`);
      expect(errors).to.deep.equal([]);
    });
  }

  const editorial = (mode: 'light' | 'dark') => ({ tokens: { concept: 'editorial', mode } });
  const prose: Screen[] = [
    {
      id: 's1',
      title: 'Intro',
      blocks: [{ id: 't1', type: 'text', text: 'Fire needs heat, fuel and oxygen.' }],
    },
    { id: 's2', title: 'Next', blocks: [{ id: 't2', type: 'text', text: 'Keep exits clear.' }] },
    { id: 's3', title: 'Last', blocks: [{ id: 't3', type: 'text', text: 'Well done.' }] },
  ];

  it('the editorial drop cap is for scripts whose letters stand alone: en has it, ar and hi do not', async () => {
    const firstLetterSize = (page: Page) =>
      page.evaluate(
        `parseFloat(getComputedStyle(document.querySelector('.lp-block-text p'), '::first-letter').fontSize) /
         parseFloat(getComputedStyle(document.querySelector('.lp-block-text p')).fontSize)`,
      ) as Promise<number>;
    const cases = [
      ['en', {}, 'Fire needs heat, fuel and oxygen.', true],
      ['ar', arabic, 'تحتاج النار إلى حرارة ووقود وأكسجين.', false],
      ['hi', { locale: 'hi' }, 'आग को गर्मी, ईंधन और ऑक्सीजन चाहिए।', false],
      ['he', { direction: 'rtl', locale: 'he' }, 'אש צריכה חום, דלק וחמצן.', true],
    ] as const;
    for (const [name, extra, text, dropCap] of cases) {
      const screens = [{ id: 's1', title: name, blocks: [{ id: 't1', type: 'text', text }] }] as Screen[];
      const { page, errors } = await open(
        `dropcap-${name}`,
        course(screens, { ...extra, theme: editorial('light') }),
      );
      expect(await page.locator('#lectern-player').getAttribute('data-letters'), name).to.equal(
        dropCap ? 'separate' : 'joined',
      );
      const ratio = await firstLetterSize(page);
      if (dropCap) expect(ratio, name).to.be.greaterThan(2);
      else expect(ratio, name).to.equal(1);
      await shot(page, `editorial-dropcap-${name}`);
      expect(errors).to.deep.equal([]);
      await page.close();
    }
  });

  for (const mode of ['light', 'dark'] as const) {
    for (const dir of ['ltr', 'rtl'] as const) {
      it(`editorial header in ${mode} ${dir.toUpperCase()}: no blank band, a progress bar with 3:1 contrast`, async () => {
        const { page, errors } = await open(
          `editorial-${mode}-${dir}`,
          course(prose, { ...(dir === 'rtl' ? arabic : {}), theme: editorial(mode) }),
        );
        await page.focus('.lp-continue');
        await page.keyboard.press('Enter');
        await page.locator('.lp-screen-title').getByText('Next').waitFor();
        const header = (await page.evaluate(`(function () {
          var h = document.querySelector('.lp-chrome').getBoundingClientRect();
          // What the header shows: its leaf elements and its controls (a container may be taller than its text).
          var shown = document.querySelectorAll('.lp-chrome *');
          var spans = Array.prototype.filter.call(shown, function (el) {
            if (el.children.length > 0 && el.tagName !== 'BUTTON') return false;
            var r = el.getBoundingClientRect(); return r.width > 0 && r.height > 0;
          }).map(function (el) { var r = el.getBoundingClientRect(); return [r.top, r.bottom]; })
            .sort(function (a, b) { return a[0] - b[0]; });
          var gap = 0, at = h.top + parseFloat(getComputedStyle(document.querySelector('.lp-chrome')).borderTopWidth);
          spans.forEach(function (s) { gap = Math.max(gap, s[0] - at); at = Math.max(at, s[1]); });
          gap = Math.max(gap, h.bottom - at);
          var p = document.querySelector('.lp-progress'), pr = p.getBoundingClientRect();
          var probe = document.createElement('span');
          probe.style.color = 'var(--lp-primary)';
          p.parentElement.appendChild(probe);
          var fill = getComputedStyle(probe).color;
          probe.remove();
          var bg = getComputedStyle(document.querySelector('.lp-chrome')).backgroundColor;
          return { gap: gap, height: h.height, progress: [pr.width, pr.height], fill: fill, bg: bg, value: p.value };
        })()`)) as {
          gap: number;
          height: number;
          progress: [number, number];
          fill: string;
          bg: string;
          value: number;
        };
        expect(header.gap, JSON.stringify(header)).to.be.at.most(24);
        expect(header.progress[0]).to.be.greaterThan(40);
        expect(header.progress[1]).to.be.at.least(4);
        expect(header.value).to.be.greaterThan(0);
        const contrast = await contrastInPage(page, header.fill, header.bg);
        expect(contrast, `${header.fill} on ${header.bg}`).to.be.at.least(3);
        expect(await seriousAxeViolations(page)).to.deep.equal([]);
        await shot(page, `editorial-header-${mode}-${dir}`);
        expect(errors).to.deep.equal([]);
      });
    }
  }

  it('every concept shows its progress bar (a box with width and height)', async () => {
    for (const concept of CONCEPTS) {
      const { page } = await open(`progress-${concept}`, course(prose, { theme: { tokens: { concept } } }));
      const box = await page.locator('.lp-progress').boundingBox();
      expect(box?.width, concept).to.be.greaterThan(40);
      expect(box?.height, concept).to.be.at.least(2);
      await page.close();
    }
  });

  it('a video with a WebVTT track: the track is loaded, showing, and its cue is read', async () => {
    const screens: Screen[] = [
      {
        id: 's1',
        title: 'Watch',
        blocks: [
          {
            id: 'v1',
            type: 'video',
            url: `${server.url}/media/clip.wav`,
            caption: 'Fire doors',
            tracks: [
              { src: `${server.url}/media/captions.vtt`, srclang: 'en', label: 'English', default: true },
              {
                src: `${server.url}/media/captions.vtt`,
                srclang: 'fr',
                label: 'Français',
                kind: 'subtitles',
              },
            ],
          },
        ],
      },
    ];
    for (const dir of ['ltr', 'rtl'] as const) {
      const { page, errors } = await open(
        `captions-${dir}`,
        course(screens, dir === 'rtl' ? { direction: 'rtl', locale: 'ar' } : {}),
      );
      expect(await page.locator('video track').count()).to.equal(2);
      await page.waitForFunction(
        `(function () { var t = document.querySelector('video').textTracks[0];
          return t && t.mode === 'showing' && t.cues && t.cues.length > 0; })()`,
      );
      const tracks = await page.evaluate(`Array.prototype.map.call(document.querySelector('video').textTracks,
        function (t) { return [t.kind, t.language, t.label, t.mode, t.cues ? Array.prototype.map.call(t.cues, function (c) { return c.text; }) : null]; })`);
      expect(tracks).to.deep.equal([
        ['captions', 'en', 'English', 'showing', ['Fire doors stay closed.']],
        ['subtitles', 'fr', 'Français', 'disabled', null],
      ]);
      expect(await inPage(page, 'docAttrs')).to.deep.equal([dir, dir === 'rtl' ? 'ar' : 'en']);
      expect(await seriousAxeViolations(page)).to.deep.equal([]);
      await shot(page, `video-captions-${dir}`);
      expect(errors).to.deep.equal([]);
      await page.close();
    }
  });
});
