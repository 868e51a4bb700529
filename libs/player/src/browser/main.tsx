/**
 * Entry of the player bundle. Reads the boot configuration the page carries in
 * `<script type="application/json" id="lectern-player-config">`, opens the run (or takes the inline course
 * in preview, or grades it here inside a SCORM package), applies the theme and renders into `#lectern-player`
 * (created when the page has none).
 */
import { render } from 'preact';
import { ANONYMOUS_ID, PlayerApiError, PlayerClient } from '../core/client.js';
import { chromeLanguage, chromeStrings, joinsLetters } from '../core/i18n.js';
import { resolveTheme, themeCss } from '../core/theme.js';
import type { PlayerConfig, PlayerCourse } from '../core/types.js';
import { App } from './app.js';
import { bootScorm } from './scorm-boot.js';
import { Session, postToHost } from './session.js';
import './player.css';

export const CONFIG_ELEMENT_ID = 'lectern-player-config';
const ANON_KEY = 'lectern:anonymousId';

function readConfig(): PlayerConfig | null {
  const el = document.getElementById(CONFIG_ELEMENT_ID);
  if (!el?.textContent) return null;
  try {
    return JSON.parse(el.textContent) as PlayerConfig;
  } catch {
    return null;
  }
}

/**
 * Adds the theme's style sheet. A page served under a strict Content-Security-Policy (the embed and preview
 * pages: no inline style but by hash or nonce) puts a per-response nonce on the config element; the sheet
 * carries it, or the browser would refuse it. A page without one (a SCORM package) needs none.
 */
function addStyle(css: string, id?: string): void {
  const style = document.createElement('style');
  if (id) style.id = id;
  const nonce = document.getElementById(CONFIG_ELEMENT_ID)?.nonce;
  if (nonce) style.nonce = nonce;
  style.textContent = css;
  document.head.appendChild(style);
}

function mountPoint(): HTMLElement {
  let root = document.getElementById('lectern-player');
  if (!root) {
    root = document.createElement('div');
    root.id = 'lectern-player';
    document.body.appendChild(root);
  }
  root.classList.add('lp');
  return root;
}

function anonymousId(): string {
  try {
    const kept = localStorage.getItem(ANON_KEY);
    if (kept && ANONYMOUS_ID.test(kept)) return kept;
    const fresh = crypto.randomUUID().replace(/-/g, '');
    localStorage.setItem(ANON_KEY, fresh);
    return fresh;
  } catch {
    // No storage: this run cannot be resumed from this browser, but it can still be taken.
    return crypto.randomUUID().replace(/-/g, '');
  }
}

/** Sizes the host's iframe: the content height, posted whenever it changes. */
function watchHeight(el: HTMLElement, courseId: string): void {
  let last = -1;
  const post = () => {
    const height = Math.ceil(el.getBoundingClientRect().height);
    if (height === last) return;
    last = height;
    postToHost({ type: 'resize', courseId, height });
  };
  new ResizeObserver(post).observe(el);
  post();
}

function showError(root: HTMLElement, lang: string | null | undefined, detail: string): void {
  const t = chromeStrings(lang);
  root.setAttribute('lang', chromeLanguage(lang));
  addStyle(themeCss(resolveTheme(null)));
  render(
    <main class="lp-main lp-error">
      <div role="alert">
        <h1 class="lp-screen-title">{t.loadError}</h1>
        <p class="lp-muted">{detail}</p>
      </div>
    </main>,
    root,
  );
}

function start(
  root: HTMLElement,
  course: PlayerCourse,
  session: Session,
  lang: string | null | undefined,
): void {
  const theme = resolveTheme(course.theme ?? null, course.customFonts);
  addStyle(themeCss(theme), 'lectern-player-theme');
  // The chrome speaks the language the course was served in, else the one asked for.
  const chromeTag = course.locale ?? lang;
  const t = chromeStrings(chromeTag);
  const dir = course.direction === 'rtl' ? 'rtl' : 'ltr';
  document.documentElement.setAttribute('dir', dir);
  document.documentElement.setAttribute('lang', course.locale ?? chromeLanguage(lang));
  root.setAttribute('dir', dir);
  root.dataset.concept = theme.concept;
  root.dataset.arrangement = theme.arrangement;
  root.dataset.density = theme.density;
  root.dataset.corners = theme.corners;
  root.dataset.navigation = course.navigation === 'hidden' ? 'hidden' : 'default';
  // Text in a script whose letters join gets no first-letter styling (the editorial drop cap would break it).
  root.dataset.letters = joinsLetters(course.locale ?? chromeTag) ? 'joined' : 'separate';
  if (course.title) document.title = course.title;
  render(<App session={session} theme={theme} t={t} />, root);
  const frame = root.querySelector<HTMLElement>('.lp-frame') ?? root;
  watchHeight(frame, course.id);
  postToHost({ type: 'ready', courseId: course.id, screens: course.screens.length });
  // Navigation start → this mark is the "first screen interactive" time the bench reads.
  performance.mark('lectern-player-ready');
  root.dataset.ready = 'true';
}

async function boot(): Promise<void> {
  const root = mountPoint();
  const config = readConfig();
  if (config === null) return showError(root, navigator.language, 'missing configuration');
  if (config.mode === 'preview') {
    const course = config.course;
    if (!course || !Array.isArray(course.screens)) return showError(root, config.lang, 'missing course');
    return start(root, course, new Session(course, null), config.lang);
  }
  if (config.mode === 'scorm') {
    if (!config.course || !Array.isArray(config.course.screens))
      return showError(root, config.lang, 'missing course');
    return bootScorm(config, (course, session) => start(root, course, session, config.lang));
  }
  const client = new PlayerClient(config.apiBase, (url, init) => fetch(url, init));
  const open = () =>
    client.openRun({
      courseId: config.courseId,
      identity: config.identity,
      lang: config.lang,
      anonymousId: config.identity ? undefined : anonymousId(),
    });
  try {
    const run = await open();
    const session = new Session(run.course, {
      ...run,
      client,
      reopen: open,
      identified: Boolean(config.identity),
    });
    start(root, run.course, session, config.lang);
  } catch (err) {
    const detail = err instanceof PlayerApiError ? `${err.status || ''} ${err.message}`.trim() : String(err);
    showError(root, config.lang, detail);
  }
}

void boot();
