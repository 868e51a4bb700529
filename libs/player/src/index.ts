/**
 * The player: one browser renderer for every course, bundled once (libs/player/build.mjs, run by
 * `npm run build`) and served by the API's embed page, the authors' preview and SCORM packages.
 *
 * This entry is the server's face of it: where the built bundle is (`playerAssets`), the boot page that
 * loads it (`playerPageHtml`), and the pure rules the browser code shares (theme resolution and contrast,
 * chrome strings, the event outbox, the Player API client), exported so they are tested as units. The
 * browser code itself (src/browser) is never imported on the server.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { PlayerConfig } from './core/types.js';

export * from './core/types.js';
export * from './core/theme.js';
export * from './core/i18n.js';
export * from './core/queue.js';
export * from './core/drafts.js';
export * from './core/client.js';
export * from './core/markdown.js';
export * from './core/scorm.js';
export * from './core/suspend.js';
export * from './core/track.js';
export * from './core/embed.js';
export * from './core/certificate.js';

export interface PlayerAssetFile {
  /** File name, content-hashed (`player-<hash>.js`): serve it with a year-long immutable cache. */
  file: string;
  path: string;
  contentType: string;
  bytes: number;
  gzipBytes: number;
}

export interface PlayerAssets {
  dir: string;
  js: PlayerAssetFile;
  css: PlayerAssetFile;
  /** JS + CSS gzipped, against the 60 KB budget. */
  gzipBytes: number;
  /** The asset by file name, or null for any other name (so a route can never serve another file). */
  byName(name: string): PlayerAssetFile | null;
}

/** Where `npm run build` puts the bundle: `<repo>/dist/player`, found from this file in source or compiled form. */
export function defaultPlayerAssetsDir(): string {
  const up = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
  return path.basename(up) === 'dist' ? path.join(up, 'player') : path.join(up, 'dist', 'player');
}

interface Manifest {
  js: { file: string; bytes: number; gzipBytes: number };
  css: { file: string; bytes: number; gzipBytes: number };
  gzipBytes: number;
}

/**
 * The built bundle. Throws with the command to run when the bundle is missing, so a server started
 * without `npm run build` says what is wrong instead of serving a blank page.
 */
export function playerAssets(dir = defaultPlayerAssetsDir()): PlayerAssets {
  const manifestPath = path.join(dir, 'manifest.json');
  if (!existsSync(manifestPath)) {
    throw new Error(`the player bundle is missing (${manifestPath}); build it with \`npm run build\``);
  }
  const manifest = JSON.parse(readFileSync(manifestPath, 'utf8')) as Manifest;
  const file = (m: Manifest['js'], contentType: string): PlayerAssetFile => ({
    ...m,
    path: path.join(dir, m.file),
    contentType,
  });
  const js = file(manifest.js, 'text/javascript; charset=utf-8');
  const css = file(manifest.css, 'text/css; charset=utf-8');
  return {
    dir,
    js,
    css,
    gzipBytes: manifest.gzipBytes,
    byName: (name) => (name === js.file ? js : name === css.file ? css : null),
  };
}

/** JSON that is safe inside `<script>`: no `</script>`, no `<!--`, no line separators that end a JS string. */
export function scriptJson(value: unknown): string {
  return JSON.stringify(value)
    .replace(/</g, '\\u003c')
    .replace(/>/g, '\\u003e')
    .replace(/&/g, '\\u0026')
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029');
}

const escapeHtml = (s: string) =>
  s.replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] ?? c,
  );

/**
 * The page that boots the player (the embed page and the preview route serve it; docs/player.md).
 * `assetBase` is the URL path under which `playerAssets().js.file` and `.css.file` are served.
 */
export function playerPageHtml(input: {
  config: PlayerConfig;
  assets: Pick<PlayerAssets, 'js' | 'css'>;
  assetBase: string;
  title?: string;
  lang?: string;
  dir?: 'ltr' | 'rtl';
  /** The response's style nonce (a page under a strict CSP): the player's theme sheet carries it. */
  styleNonce?: string;
}): string {
  const base = input.assetBase.replace(/\/+$/, '');
  const nonce = input.styleNonce ? ` nonce="${escapeHtml(input.styleNonce)}"` : '';
  const lang = escapeHtml(input.lang ?? 'en');
  const dir = input.dir === 'rtl' ? 'rtl' : 'ltr';
  return (
    `<!doctype html>\n<html lang="${lang}" dir="${dir}">\n<head>\n<meta charset="utf-8">\n` +
    `<meta name="viewport" content="width=device-width, initial-scale=1">\n` +
    `<title>${escapeHtml(input.title ?? '')}</title>\n` +
    `<link rel="stylesheet" href="${escapeHtml(`${base}/${input.assets.css.file}`)}">\n` +
    `<script type="application/json" id="lectern-player-config"${nonce}>${scriptJson(input.config)}</script>\n` +
    `<script defer src="${escapeHtml(`${base}/${input.assets.js.file}`)}"></script>\n` +
    `</head>\n<body>\n<div id="lectern-player" class="lp"></div>\n</body>\n</html>\n`
  );
}
