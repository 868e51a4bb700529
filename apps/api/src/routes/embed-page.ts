import type { PlayerConfig } from '@lectern/contracts';
import { cspHash } from '../http/page-security.js';

/**
 * The embed page: the one place its HTML comes from. It hands the player bundle a JSON config in
 * `<script type="application/json" id="lectern-player-config">` (apiBase, courseId, identity, lang, mode) and a
 * mount point `<div id="lectern-player">`; the bundle (libs/player) opens the run through /player/v1 itself.
 * Without a bundle configured the page still carries the config, so a headless or custom player can read it.
 * Its empty `data:` icon (allowed by the page policy's img-src) keeps the browser from asking for /favicon.ico.
 */
export interface EmbedPageInput {
  courseId: string;
  identity: string | null;
  lang: string | null;
  playerApiBase: string;
  /** The player bundle's script and stylesheet (content-hashed URLs under /player/assets); absent when unbuilt. */
  assets?: { js: string; css: string } | null;
  /** The response's style nonce, handed to the player on its config element for its theme sheet. */
  styleNonce?: string;
}

/** The inline style elements of the embed and error pages: the page's policy allows exactly these by hash. */
export const EMBED_PAGE_STYLE = 'html,body{margin:0;height:100%}#lectern-player{min-height:100%}';
export const ERROR_PAGE_STYLE =
  'body{font:16px/1.5 system-ui,sans-serif;margin:0;display:grid;place-items:center;min-height:100vh;color:#1b1f24}main{max-width:32rem;padding:24px;text-align:center}';
export const EMBED_STYLE_HASHES = [EMBED_PAGE_STYLE, ERROR_PAGE_STYLE].map(cspHash);

const escapeHtml = (s: string) =>
  s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

/** JSON that cannot end its <script> element: every `<` (and the line separators JS once refused) escaped. */
const scriptJson = (v: unknown) =>
  JSON.stringify(v)
    .replace(/</g, '\\u003c')
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029');

export function renderEmbedPage(input: EmbedPageInput): string {
  const config: PlayerConfig = {
    apiBase: input.playerApiBase,
    courseId: input.courseId,
    identity: input.identity,
    lang: input.lang,
    mode: 'run',
  };
  const css = input.assets ? `\n<link rel="stylesheet" href="${escapeHtml(input.assets.css)}">` : '';
  const bundle = input.assets ? `\n<script defer src="${escapeHtml(input.assets.js)}"></script>` : '';
  const nonce = input.styleNonce ? ` nonce="${escapeHtml(input.styleNonce)}"` : '';
  return `<!doctype html>
<html lang="${escapeHtml(input.lang ?? 'en')}"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<link rel="icon" href="data:,">
<title>Course</title>${css}
<style>${EMBED_PAGE_STYLE}</style>
</head><body>
<div id="lectern-player" data-course-id="${escapeHtml(input.courseId)}"></div>
<script type="application/json" id="lectern-player-config"${nonce}>${scriptJson(config)}</script>${bundle}
</body></html>
`;
}

/** Plain error pages of the embed (401, 402, 404, 429): fixed text per status, nothing about the request. */
const ERROR_PAGES: Record<number, { title: string; text: string }> = {
  401: {
    title: 'Sign-in problem',
    text: 'This course link carries a learner identity that could not be verified.',
  },
  402: {
    title: 'Course unavailable',
    text: 'This course is unavailable at the moment. Please try again later.',
  },
  404: { title: 'Course not found', text: 'There is no course at this address.' },
  429: {
    title: 'Too many requests',
    text: 'Too many courses were opened from this network. Please try again in a minute.',
  },
};

/** `page` replaces the fixed text (the preview page says why a link is refused in its own words). */
export function renderErrorPage(status: number, page?: { title: string; text: string }): string {
  page ??= ERROR_PAGES[status] ?? { title: 'Something went wrong', text: 'Please try again later.' };
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<link rel="icon" href="data:,">
<title>${page.title}</title>
<style>${ERROR_PAGE_STYLE}</style>
</head><body><main><h1>${page.title}</h1><p>${page.text}</p></main></body></html>
`;
}
