import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Font, FontCollection } from 'fontkit';

/**
 * The faces certificates are set in: Noto Sans for Latin, Cyrillic and Greek, Noto Sans
 * Arabic, Noto Sans Hebrew and Noto Sans CJK (one collection covering Japanese, Chinese
 * and Korean), regular and bold. They come from Debian's fonts-noto-core and
 * fonts-noto-cjk (installed by .ci/run and deploy/Dockerfile); CERTIFICATE_FONT_DIR
 * points elsewhere when a machine keeps them in another place.
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
type Script = keyof typeof FONT_FILES;
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

/** Throws one error naming every face missing from `dir` and the Debian packages that provide them. */
function checkFontFiles(dir: string): void {
  const missing = Object.values(FONT_FILES)
    .flatMap((faces) => Object.values(faces))
    .map((rel) => `${dir}/${rel}`)
    .filter((file) => !existsSync(file));
  if (missing.length) {
    throw new Error(
      `certificate fonts missing: ${missing.join(', ')}. Install the Debian packages fonts-noto-core and ` +
        'fonts-noto-cjk (apt-get install fonts-noto-core fonts-noto-cjk), or set CERTIFICATE_FONT_DIR to a folder with the same layout',
    );
  }
}

/**
 * The faces of `dir`, read on the first render rather than now: the job registry is built by every process that
 * runs workers (and by tests), and reading ~40 MB of CJK collections there would slow each start. The files are
 * checked now, so a machine without them still fails at start, with the fix in the message.
 */
export function lazyFontLibrary(dir: string = DEFAULT_FONT_DIR): FontLibrary {
  checkFontFiles(dir);
  let loaded: FontLibrary | undefined;
  return {
    chain: (locale, weight) => (loaded ??= loadFontLibrary(dir)).chain(locale, weight),
    all: () => loaded?.all() ?? [],
  };
}

/**
 * Loads the faces from `dir`. Throws one error naming every missing file and the Debian
 * packages that provide them, so a worker without fonts fails at start, not per render.
 */
export function loadFontLibrary(dir: string = DEFAULT_FONT_DIR): FontLibrary {
  checkFontFiles(dir);
  const buffers = new Map<string, Buffer>();
  for (const faces of Object.values(FONT_FILES)) {
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
      return [
        face('latin', weight),
        face('arabic', weight),
        face('hebrew', weight),
        face('cjk', weight, cjkRegionOf(locale)),
      ];
    },
    all: () => [...fonts.values()],
  };
}
