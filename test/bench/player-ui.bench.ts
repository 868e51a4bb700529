/**
 * Player bench: the bundle's gzipped size, and first screen interactive — navigation start to the
 * player's `ready` (the `lectern-player-ready` performance mark, set when it posts `ready` to the host) —
 * over 20 cold loads (a fresh browser context each, so nothing is cached) into Debian's Chromium:
 *  - preview mode, the page and bundle from a loopback HTTP server, the course inline: two courses, a typical
 *    first screen (heading, text, image, a quiz) and a screen holding every block type;
 *  - run mode through the real embed page (`startTestApp`): `GET /embed/:courseId?identity=…`, the bundle from
 *    /player/assets, then `POST /player/v1/runs` opening a new run for a new signed learner each load (the
 *    typical course, published), until the first screen is interactive.
 */
import { stripAnswerKeys, type Block, type Screen } from '@lectern/courses';
import type { PlayerCourse } from '@lectern/player';
import { VALID_BLOCKS, clone } from '../unit/courses/fixtures.js';
import { chromium, type Browser } from 'playwright-core';
import {
  CHROMIUM,
  buildPlayerOnce,
  launchChromium,
  startPlayerServer,
  waitReady,
} from '../support/player-browser.js';
import { makeWorkspace, startTestApp } from '../support/context.js';
import { createEmbedKey, publishedCourse, signIdentity } from '../support/player.js';

const LOADS = Number(process.env.BENCH_PLAYER_LOADS ?? 20);

function quantile(sorted: number[], q: number): number {
  const i = Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1);
  return sorted[Math.max(0, i)];
}

export async function run(): Promise<Record<string, unknown>> {
  const assets = await buildPlayerOnce();
  const server = await startPlayerServer(assets);
  const browser = await launchChromium();
  const v = clone(VALID_BLOCKS);
  const image = { ...v.image, url: `${server.url}/media/room.svg` };
  const typical: Screen[] = [
    { id: 's1', title: 'Welcome', blocks: [v.heading, v.text, image, v.quiz_single_choice] as Block[] },
    { id: 's2', title: 'More', blocks: [v.text, v.quiz_multiple_choice] as Block[] },
  ];
  const every: Screen[] = [{ id: 's1', title: 'Every block', blocks: Object.values(v) as Block[] }];
  const course = (screens: Screen[]): PlayerCourse => ({
    id: 'crs_bench',
    title: 'Bench',
    screens: stripAnswerKeys(screens) as PlayerCourse['screens'],
  });
  server.add('typical', { course: course(typical) });
  server.add('every', { course: course(every) });

  const measure = (name: string) => measureLoads(browser, async () => `${server.url}/page/${name}`);

  /** The embed in run mode, on the real stack; the image comes from the loopback media server. */
  const embed = async () => {
    const app = await startTestApp({ PLAYER_ASSETS_DIR: assets.dir, RATE_LIMIT_PER_MINUTE: '0' });
    const port = new URL(app.url).port;
    const runBrowser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: ['--no-sandbox', `--host-resolver-rules=MAP lectern.test:80 127.0.0.1:${port}`],
    });
    try {
      const ws = await makeWorkspace(app.rt.orm.em.fork(), 'scale', 'Bench');
      // Stored courses need unique block ids across screens.
      const screens = typical.map((sc, i) => ({
        ...sc,
        blocks: sc.blocks.map((b) => ({ ...b, id: `${b.id}-${i}` })),
      }));
      const courseId = await publishedCourse(app.base, ws.key, { title: 'Bench', screens });
      const key = await createEmbedKey(app.base, ws.key);
      let n = 0;
      return await measureLoads(runBrowser, async () => {
        const token = await signIdentity(key, { name: 'Bench' }, { sub: `bench-${++n}` });
        return `http://lectern.test/embed/${courseId}?identity=${encodeURIComponent(token)}`;
      });
    } finally {
      await runBrowser.close();
      await app.close();
    }
  };

  try {
    return {
      bundle: {
        jsGzipKB: +(assets.js.gzipBytes / 1024).toFixed(1),
        cssGzipKB: +(assets.css.gzipBytes / 1024).toFixed(1),
        totalGzipKB: +(assets.gzipBytes / 1024).toFixed(1),
        budgetKB: 60,
      },
      // BENCH_PLAYER_UI_ONLY=embed measures the run mode alone.
      firstScreenInteractive:
        process.env.BENCH_PLAYER_UI_ONLY === 'embed'
          ? { embedRunMode: await embed() }
          : {
              typicalScreen: await measure('typical'),
              everyBlockScreen: await measure('every'),
              embedRunMode: await embed(),
            },
    };
  } finally {
    await browser.close();
    await server.close();
  }
}

/** Cold loads of `url()` (a fresh context each): navigation start → `lectern-player-ready`, in ms. */
async function measureLoads(browser: Browser, url: () => Promise<string>) {
  const times: number[] = [];
  const pages: number[] = [];
  const opens: number[] = [];
  for (let i = 0; i < LOADS; i++) {
    const target = await url();
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(target);
    await waitReady(page);
    const t = (await page.evaluate(`(() => {
      const runs = performance.getEntriesByType('resource').find((e) => e.name.includes('/player/v1/runs'));
      return {
        ready: performance.getEntriesByName('lectern-player-ready')[0].startTime,
        page: performance.getEntriesByType('navigation')[0].responseEnd,
        openRun: runs ? runs.duration : null,
      };
    })()`)) as { ready: number; page: number; openRun: number | null };
    times.push(t.ready);
    pages.push(t.page);
    if (t.openRun !== null) opens.push(t.openRun);
    await context.close();
  }
  const round = (n: number) => Math.round(n);
  const median = (xs: number[]) =>
    round(
      quantile(
        [...xs].sort((a, b) => a - b),
        0.5,
      ),
    );
  times.sort((a, b) => a - b);
  return {
    loads: LOADS,
    medianMs: round(quantile(times, 0.5)),
    p95Ms: round(quantile(times, 0.95)),
    maxMs: round(times[times.length - 1]),
    // Where the time goes: the page's HTML received, and the run open (POST /player/v1/runs) in run mode.
    pageReceivedMedianMs: median(pages),
    ...(opens.length > 0 ? { openRunMedianMs: median(opens) } : {}),
  };
}
