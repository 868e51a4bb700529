/**
 * The player in a real browser: builds the bundle (the same script `npm run build` runs), serves it with a
 * boot page per test course from a loopback HTTP server, and drives Debian's Chromium through
 * playwright-core (no browser download). axe-core is injected from node_modules.
 */
import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { chromium, type Browser, type BrowserContext, type Frame, type Page } from 'playwright-core';
import {
  contrastRatio,
  playerAssets,
  playerPageHtml,
  type PlayerAssets,
  type PlayerCourse,
} from '@lectern/player';
import { contentSecurityPolicy, newNonce } from '@lectern/api';

const root = process.cwd();
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
export const OUTPUT_DIR = path.join(root, 'test', 'output', 'player');

/** Builds the bundle into a fresh directory once per process. */
let built: Promise<PlayerAssets> | undefined;
export function buildPlayerOnce(): Promise<PlayerAssets> {
  built ??= (async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'lectern-player-'));
    await promisify(execFile)(process.execPath, [path.join(root, 'libs/player/build.mjs'), dir]);
    return playerAssets(dir);
  })();
  return built;
}

export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(`Chromium not found at ${CHROMIUM}: apt-get install -y chromium (or set CHROMIUM_PATH)`);
  }
  return chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'], headless: true });
}

export interface PreviewCase {
  course: PlayerCourse;
  lang?: string;
}

/** Media the test courses point at, served like signed media URLs would be. */
export const ROOM_SVG =
  '<svg xmlns="http://www.w3.org/2000/svg" width="400" height="200" viewBox="0 0 400 200">' +
  '<rect width="400" height="200" fill="#dfe6ee"/><rect x="60" y="70" width="40" height="80" fill="#c0392b"/>' +
  '<rect x="270" y="90" width="40" height="60" fill="#555"/></svg>';

/** A WebVTT caption file whose one cue covers the whole test clip. */
export const CAPTIONS_VTT = 'WEBVTT\n\n00:00:00.000 --> 00:00:05.000\nFire doors stay closed.\n';

function silentWav(seconds = 1, rate = 8000): Buffer {
  const samples = seconds * rate;
  const b = Buffer.alloc(44 + samples);
  b.write('RIFF', 0);
  b.writeUInt32LE(36 + samples, 4);
  b.write('WAVEfmt ', 8);
  b.writeUInt32LE(16, 16);
  b.writeUInt16LE(1, 20); // PCM
  b.writeUInt16LE(1, 22); // mono
  b.writeUInt32LE(rate, 24);
  b.writeUInt32LE(rate, 28);
  b.writeUInt16LE(1, 32);
  b.writeUInt16LE(8, 34);
  b.write('data', 36);
  b.writeUInt32LE(samples, 40);
  b.fill(128, 44);
  return b;
}

export interface PlayerServer {
  url: string;
  /** Registers a course under a name: `/page/<name>` boots it in preview, `/host/<name>` frames that page. */
  add(name: string, c: PreviewCase): void;
  close(): Promise<void>;
}

export async function startPlayerServer(assets: PlayerAssets): Promise<PlayerServer> {
  const cases = new Map<string, PreviewCase>();
  const wav = silentWav();
  const font = '/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf';
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    const send = (status: number, type: string, body: string | Buffer) => {
      res.writeHead(status, { 'content-type': type, 'cache-control': 'no-store' });
      res.end(body);
    };
    const [, kind, name] = url.pathname.split('/');
    if (kind === 'assets') {
      const asset = assets.byName(name);
      return asset ? send(200, asset.contentType, readFileSync(asset.path)) : send(404, 'text/plain', 'no');
    }
    if (kind === 'media' && name === 'room.svg') return send(200, 'image/svg+xml', ROOM_SVG);
    if (kind === 'media' && name === 'clip.wav') return send(200, 'audio/wav', wav);
    if (kind === 'media' && name === 'captions.vtt') return send(200, 'text/vtt', CAPTIONS_VTT);
    if (kind === 'media' && name === 'font.ttf' && existsSync(font))
      return send(200, 'font/ttf', readFileSync(font));
    if (kind === 'widget') return send(200, 'text/html', '<!doctype html><title>Widget</title><p>Widget</p>');
    if (kind === 'favicon.ico') return send(204, 'image/x-icon', '');
    const c = cases.get(name ?? '');
    if (kind === 'page' && c) {
      // The policy the service's embed and preview pages send, so every block is checked under it.
      const styleNonce = newNonce();
      res.setHeader('content-security-policy', contentSecurityPolicy({ frameAncestors: ['*'], styleNonce }));
      const html = playerPageHtml({
        styleNonce,
        config: { mode: 'preview', course: c.course, lang: c.lang ?? null },
        assets,
        assetBase: '/assets',
        title: c.course.title,
        lang: c.course.locale ?? 'en',
        dir: c.course.direction,
      });
      return send(200, 'text/html; charset=utf-8', html);
    }
    if (kind === 'host' && c) {
      // A customer's page: the snippet of docs/player.md, recording what it hears.
      const html = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Host</title></head><body>
<iframe id="course" src="/page/${encodeURIComponent(name)}" title="Course" style="width:100%;border:0" height="300"></iframe>
<script>
window.heard = [];
window.addEventListener('message', function (e) {
  var m = e.data;
  if (!m || m.source !== 'lectern-player') return;
  window.heard.push(m);
  if (m.type === 'resize') document.getElementById('course').style.height = m.height + 'px';
});
</script></body></html>`;
      return send(200, 'text/html; charset=utf-8', html);
    }
    send(404, 'text/plain', 'not found');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    add: (name, c) => cases.set(name, c),
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Console errors and uncaught exceptions of a page, collected from the moment it is opened. */
export function watchErrors(page: Page): string[] {
  const errors: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(`console: ${m.text()}`);
  });
  page.on('pageerror', (e) => errors.push(`pageerror: ${e.message}`));
  return errors;
}

export async function waitReady(page: Page): Promise<void> {
  await page.waitForSelector('#lectern-player[data-ready="true"]');
}

/**
 * Helpers that run inside the page. They are plain JavaScript installed with `addInitScript`: the test
 * sources compile without the DOM library (the server code must not see browser types).
 */
const PAGE_HELPERS = `window.lpt = {
  style: function (sel, prop) { var el = document.querySelector(sel); return el ? getComputedStyle(el)[prop] : null; },
  cssVar: function (sel, name) { var el = document.querySelector(sel); return el ? getComputedStyle(el).getPropertyValue(name).trim() : null; },
  isActive: function (sel) { var el = document.querySelector(sel); return el !== null && el === document.activeElement; },
  active: function () { var a = document.activeElement; return a ? { tag: a.tagName, label: a.getAttribute('aria-label') } : null; },
  focused: function () { var a = document.activeElement; return a ? { tag: a.tagName, label: a.getAttribute('aria-label'), cls: a.getAttribute('class') || '', text: (a.textContent || '').trim() } : null; },
  headingLevels: function (sel) { return Array.prototype.map.call(document.querySelectorAll(sel + ' :is(h1, h2, h3, h4, h5, h6)'), function (h) { return Number(h.tagName.slice(1)); }); },
  boxes: function (sel) { return Array.prototype.map.call(document.querySelectorAll(sel), function (e) { var r = e.getBoundingClientRect(); return { width: r.width, height: r.height }; }); },
  docAttrs: function () { return [document.documentElement.dir, document.documentElement.lang]; },
  values: function (sel) { return Array.prototype.map.call(document.querySelectorAll(sel), function (e) { return e.value; }); },
  fontLoaded: function (family) { return document.fonts.ready.then(function () { return document.fonts.check('16px "' + family + '"'); }); },
  swipe: function (fromX, toX) {
    var main = document.querySelector('.lp-main');
    main.dispatchEvent(new PointerEvent('pointerdown', { pointerType: 'touch', clientX: fromX, clientY: 300, bubbles: true }));
    main.dispatchEvent(new PointerEvent('pointerup', { pointerType: 'touch', clientX: toX, clientY: 300, bubbles: true }));
  },
  axe: function () {
    return window.axe.run(document).then(function (r) { return r.violations; });
  },
  heard: function () { return window.heard || []; }
};`;

/**
 * Every Content-Security-Policy violation in any frame of the page, logged as a console error, so the tests that
 * watch console errors (watchErrors) fail on one: the pages run under a strict policy (docs/player.md).
 */
const CSP_WATCH = `document.addEventListener('securitypolicyviolation', function (e) {
  console.error('CSP violation: ' + e.violatedDirective + ' blocked ' + (e.blockedURI || 'inline') + ' in ' + e.documentURI);
});`;

export async function installPageHelpers(context: BrowserContext): Promise<void> {
  await context.addInitScript({ content: PAGE_HELPERS });
  await watchCspViolations(context);
}

/** Logs CSP violations as console errors (CSP_WATCH) in every page of `target` from its next navigation on. */
export async function watchCspViolations(target: BrowserContext | Page): Promise<void> {
  await target.addInitScript({ content: CSP_WATCH });
}

/** Calls one of the page helpers with JSON arguments. */
export function inPage<T>(page: Page | Frame, helper: string, ...args: unknown[]): Promise<T> {
  return page.evaluate(`window.lpt.${helper}(...${JSON.stringify(args)})`) as Promise<T>;
}

export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: unknown[] }[];
}

const AXE = path.join(root, 'node_modules', 'axe-core', 'axe.min.js');

/** Serious and critical axe-core violations of the page as it is now. */
export async function seriousAxeViolations(page: Page): Promise<AxeViolation[]> {
  // Evaluated, not added as a <script> element: the pages' policy allows no inline script.
  if (!(await page.evaluate('typeof window.axe !== "undefined"')))
    await page.evaluate(readFileSync(AXE, 'utf8'));
  const violations = await inPage<AxeViolation[]>(page, 'axe');
  return violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => ({
      id: v.id,
      impact: v.impact,
      help: v.help,
      nodes: v.nodes.map((n) => ({ target: n.target })),
    }));
}

/** Presses Tab until the element matching `selector` has the focus (keyboard only, as a learner would). */
export async function tabTo(page: Page, selector: string, max = 40): Promise<void> {
  for (let i = 0; i < max; i++) {
    if (await inPage<boolean>(page, 'isActive', selector)) return;
    await page.keyboard.press('Tab');
  }
  throw new Error(`Tab never reached ${selector}`);
}

/**
 * The contrast of two CSS colours as the page resolves them (any syntax the browser takes, through a canvas), by
 * the player's own WCAG formula (`contrastRatio`).
 */
export async function contrastInPage(page: Page, a: string, b: string): Promise<number> {
  const [x, y] = (await page.evaluate(
    `(function (colours) {
      var c = document.createElement('canvas').getContext('2d');
      return colours.map(function (css) {
        c.clearRect(0, 0, 1, 1); c.fillStyle = css; c.fillRect(0, 0, 1, 1);
        var d = c.getImageData(0, 0, 1, 1).data;
        return '#' + [d[0], d[1], d[2]].map(function (n) { return n.toString(16).padStart(2, '0'); }).join('');
      });
    })(${JSON.stringify([a, b])})`,
  )) as [string, string];
  return contrastRatio(x, y);
}
