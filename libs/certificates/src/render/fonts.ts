import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Font, FontCollection } from 'fontkit';
import { AppError } from '@lectern/errors';

/**
 * The faces certificates are set in: Noto Sans for Latin, Cyrillic and Greek, Noto Sans
 * Arabic, Noto Sans Hebrew and Noto Sans CJK (one collection covering Japanese, Chinese
 * and Korean), regular and bold. They come from Debian's fonts-noto-core and
 * fonts-noto-cjk (installed by .ci/run and deploy/Dockerfile); CERTIFICATE_FONT_DIR
 * points elsewhere when a machine keeps them in another place.
 *
 * Only the Latin faces (the fallback of every chain) are required: without another
 * script's faces the library loads what is there, reports what is missing (`missing()`)
 * and a certificate that needs a missing script is refused with a 503 naming the
 * package (`assertFacesFor`), while every other certificate renders as before.
 *
 * Each file is parsed once per process and the fontkit objects are shared by every
 * document (pdfkit 0.20 accepts a fontkit font): parsing Noto Sans per document cost
 * ~40 ms, a shared one ~1 ms (docs/certificates.md "Performance").
 */
export const FONT_FILES = {
  latin: { regular: 'truetype/noto/NotoSans-Regular.ttf', bold: 'truetype/noto/NotoSans-Bold.ttf' },
  arabic: {
    regular: 'truetype/noto/NotoSansArabic-Regular.ttf',
    bold: 'truetype/noto/NotoSansArabic-Bold.ttf',
  },
  hebrew: {
    regular: 'truetype/noto/NotoSansHebrew-Regular.ttf',
    bold: 'truetype/noto/NotoSansHebrew-Bold.ttf',
  },
  cjk: { regular: 'opentype/noto/NotoSansCJK-Regular.ttc', bold: 'opentype/noto/NotoSansCJK-Bold.ttc' },
} as const;

export const DEFAULT_FONT_DIR = '/usr/share/fonts';

export type FontWeight = 'regular' | 'bold';
/** `latin` covers Latin, Cyrillic and Greek (Noto Sans); `cjk` Japanese, Chinese and Korean. */
export type FontScript = keyof typeof FONT_FILES;
type Script = FontScript;

/** The Debian package that brings each script's faces. */
export const FONT_PACKAGES: Record<FontScript, string> = {
  latin: 'fonts-noto-core',
  arabic: 'fonts-noto-core',
  hebrew: 'fonts-noto-core',
  cjk: 'fonts-noto-cjk',
};

/** Letters a script's faces are needed for; anything else falls back along the chain. */
const SCRIPT_LETTERS: Record<FontScript, RegExp> = {
  latin: /[\p{Script=Latin}\p{Script=Cyrillic}\p{Script=Greek}]/u,
  arabic: /\p{Script=Arabic}/u,
  hebrew: /\p{Script=Hebrew}/u,
  cjk: /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}\p{Script=Bopomofo}]/u,
};

/** A script whose faces are not in the font folder: what to install, and the absent files (full paths). */
export interface MissingFonts {
  script: FontScript;
  package: string;
  files: string[];
}
/** Han glyphs differ by region: the collection holds one face per region. */
export type CjkRegion = 'JP' | 'KR' | 'SC' | 'TC' | 'HK';

/** One face in a fallback chain, under the name it is registered with in a PDF document. */
export interface ChainFont {
  name: string;
  font: Font;
}

export interface FontLibrary {
  /** Fallback chain for a locale and weight: the first face that has a character's glyph draws it. */
  chain(locale: string, weight: FontWeight): ChainFont[];
  /** Every face, for registering with a document. */
  all(): ChainFont[];
  /**
   * The scripts whose faces are missing, one entry per script in FONT_FILES order, as found when the
   * library was made (installing a package takes a restart); [] when every face is there. For the
   * worker's /readyz and `lectern doctor`.
   */
  missing(): MissingFonts[];
}

/** The CJK face a locale reads best in: Japanese, Korean, Traditional (Taiwan, Hong Kong) or Simplified Chinese. */
export function cjkRegionOf(locale: string): CjkRegion {
  const l = locale.toLowerCase();
  if (l.startsWith('ko')) return 'KR';
  if (l.startsWith('zh')) {
    if (/-(hk|mo)\b/.test(l)) return 'HK';
    if (/-(hant|tw)\b/.test(l)) return 'TC';
    return 'SC';
  }
  return 'JP';
}

/**
 * fontkit is loaded when fonts are, not when this library is imported: the API and the CLI
 * import @lectern/certificates for issuing and records and never draw a page, and loading
 * the PDF stack cost them seconds of start-up on a busy machine.
 */
function fontkit(): { create(buffer: Buffer, postscriptName?: string): Font | FontCollection } {
  return createRequire(import.meta.url)('fontkit') as {
    create(buffer: Buffer, postscriptName?: string): Font | FontCollection;
  };
}

function isFont(value: unknown): value is Font {
  return typeof (value as Font | null)?.layout === 'function';
}

/** The scripts of FONT_FILES with a face missing from `dir`, and the files that are. */
export function missingFonts(dir: string = DEFAULT_FONT_DIR): MissingFonts[] {
  return (Object.keys(FONT_FILES) as FontScript[]).flatMap((script) => {
    const files = Object.values(FONT_FILES[script])
      .map((rel) => `${dir}/${rel}`)
      .filter((file) => !existsSync(file));
    return files.length ? [{ script, package: FONT_PACKAGES[script], files }] : [];
  });
}

/**
 * Throws when the Latin faces are missing: they draw every certificate (names, serials, digits), so a
 * worker without them cannot render anything and refuses to start, with the fix in the message. Answers
 * what else is missing.
 */
function checkFontFiles(dir: string): MissingFonts[] {
  const missing = missingFonts(dir);
  const latin = missing.find((m) => m.script === 'latin');
  if (latin) {
    throw new Error(
      `certificate fonts missing: ${latin.files.join(', ')}. Install the Debian package ${latin.package} ` +
        `(apt-get install ${latin.package}), or set CERTIFICATE_FONT_DIR to a folder with the same layout`,
    );
  }
  return missing;
}

/**
 * Refuses (503, not retried by the job worker) a text that needs a script whose faces are missing from
 * `fonts`, naming the package to install. Drawn anyway, its letters would print as empty boxes.
 */
export function assertFacesFor(fonts: FontLibrary, text: string): void {
  for (const m of fonts.missing()) {
    if (!SCRIPT_LETTERS[m.script].test(text)) continue;
    throw new AppError(
      'unavailable',
      `${m.package} is not installed on the certificate worker: apt-get install ${m.package} ` +
        `(this certificate needs its ${m.script === 'cjk' ? 'CJK' : m.script} faces)`,
      { retryable: false },
    );
  }
}

/**
 * The faces of `dir`, read on the first render rather than now: the job registry is built by every process that
 * runs workers (and by tests), and reading ~40 MB of CJK collections there would slow each start. The files are
 * checked now, so a machine without the Latin faces still fails at start, with the fix in the message.
 */
export function lazyFontLibrary(dir: string = DEFAULT_FONT_DIR): FontLibrary {
  const missing = checkFontFiles(dir);
  let loaded: FontLibrary | undefined;
  return {
    chain: (locale, weight) => (loaded ??= loadFontLibrary(dir)).chain(locale, weight),
    all: () => loaded?.all() ?? [],
    missing: () => loaded?.missing() ?? missing,
  };
}

/**
 * Loads the faces from `dir`. Without the Latin faces it throws, naming the files and the Debian
 * package that provides them, so such a worker fails at start, not per render; another script's
 * missing faces are left out of the chains and reported by `missing()`.
 */
export function loadFontLibrary(dir: string = DEFAULT_FONT_DIR): FontLibrary {
  const missing = checkFontFiles(dir);
  const absent = new Set(missing.map((m) => m.script));
  const buffers = new Map<string, Buffer>();
  for (const [script, faces] of Object.entries(FONT_FILES)) {
    if (absent.has(script as Script)) continue;
    for (const rel of Object.values(faces)) buffers.set(rel, readFileSync(`${dir}/${rel}`));
  }
  const fonts = new Map<string, ChainFont>();
  const face = (script: Script, weight: FontWeight, region?: CjkRegion): ChainFont => {
    const name = `${script}-${weight}${region ? `-${region}` : ''}`;
    const known = fonts.get(name);
    if (known) return known;
    const rel = FONT_FILES[script][weight];
    const postscript = region
      ? `NotoSansCJK${region.toLowerCase()}-${weight === 'bold' ? 'Bold' : 'Regular'}`
      : undefined;
    const font = fontkit().create(buffers.get(rel)!, postscript);
    if (!isFont(font)) throw new Error(`${rel}: no face ${postscript ?? ''} in the collection`);
    const made = { name, font };
    fonts.set(name, made);
    return made;
  };
  return {
    chain(locale, weight) {
      const chain: ChainFont[] = [face('latin', weight)];
      for (const script of ['arabic', 'hebrew', 'cjk'] as const) {
        if (absent.has(script)) continue;
        chain.push(face(script, weight, script === 'cjk' ? cjkRegionOf(locale) : undefined));
      }
      return chain;
    },
    all: () => [...fonts.values()],
    missing: () => missing,
  };
}
