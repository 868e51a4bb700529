/**
 * Player bench: the bundle's gzipped size, and first screen interactive — navigation start to the
 * player's `ready` (the `lectern-player-ready` performance mark, set when it posts `ready` to the host) —
 * over 20 cold loads in preview mode (a fresh browser context each, so nothing is cached), served from
 * loopback into Debian's Chromium. Two courses: a typical first screen (heading, text, image, a quiz) and
 * a screen holding every block type.
 */
import { stripAnswerKeys, type Block, type Screen } from '@lectern/courses';
import type { PlayerCourse } from '@lectern/player';
import { VALID_BLOCKS, clone } from '../unit/courses/fixtures.js';
import { buildPlayerOnce, launchChromium, startPlayerServer, waitReady } from '../support/player-browser.js';

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

  const measure = async (name: string) => {
    const times: number[] = [];
    for (let i = 0; i < LOADS; i++) {
      const context = await browser.newContext();
      const page = await context.newPage();
      await page.goto(`${server.url}/page/${name}`);
      await waitReady(page);
      times.push(
        (await page.evaluate('performance.getEntriesByName("lectern-player-ready")[0].startTime')) as number,
      );
      await context.close();
    }
    times.sort((a, b) => a - b);
    const round = (n: number) => Math.round(n);
    return {
      loads: LOADS,
      medianMs: round(quantile(times, 0.5)),
      p95Ms: round(quantile(times, 0.95)),
      maxMs: round(times[times.length - 1]),
    };
  };

  try {
    return {
      bundle: {
        jsGzipKB: +(assets.js.gzipBytes / 1024).toFixed(1),
        cssGzipKB: +(assets.css.gzipBytes / 1024).toFixed(1),
        totalGzipKB: +(assets.gzipBytes / 1024).toFixed(1),
        budgetKB: 60,
      },
      firstScreenInteractive: {
        typicalScreen: await measure('typical'),
        everyBlockScreen: await measure('every'),
      },
    };
  } finally {
    await browser.close();
    await server.close();
  }
}
