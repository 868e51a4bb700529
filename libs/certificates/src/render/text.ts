/**
 * Text setting for certificates: font fallback per character, line wrapping and the
 * Unicode bidirectional algorithm, on top of pdfkit.
 *
 * pdfkit draws one font per call and lays a line out word by word from left to right,
 * so on its own it prints an Arabic or Hebrew line with its words in reverse order and
 * cannot mix scripts that need different fonts. Here a line is split into runs of one
 * font and one direction (bidi-js computes the embedding levels and the visual order),
 * each run is measured and drawn at its own x with `lineBreak: false`, and fontkit —
 * which pdfkit calls for every run — shapes Arabic (initial, medial, final forms,
 * ligatures) and reverses the glyphs of a right-to-left run.
 */
import bidiFactory from 'bidi-js';
import type { ChainFont } from './fonts.js';

const bidi = bidiFactory();

export interface TextStyle {
  chain: ChainFont[];
  size: number;
  color: string;
  /** Extra space between lines, as a fraction of the size. */
  leading?: number;
}

export interface Run {
  text: string;
  font: ChainFont;
  width: number;
}

export interface Line {
  runs: Run[];
  width: number;
}

export interface SetText {
  lines: Line[];
  size: number;
  lineHeight: number;
  height: number;
  /** The first face of the chain: its ascent sets each line's baseline. */
  head: ChainFont;
}

/** Characters after which a line may break, or which may break anywhere (CJK). */
const CJK = /[\u2E80-\u9FFF\uAC00-\uD7AF\uF900-\uFAFF\uFF00-\uFFEF\u{20000}-\u{3FFFF}]/u;
const SPACE = /\s/u;
/**
 * Paired punctuation drawn mirrored in right-to-left text (Unicode Bidi_Mirrored, the
 * pairs that occur in names and titles). bidi-js 1.1.0's getMirroredCharactersMap
 * returned nothing for them, so the table is ours.
 */
const MIRROR: Record<string, string> = {
  '(': ')',
  ')': '(',
  '[': ']',
  ']': '[',
  '{': '}',
  '}': '{',
  '<': '>',
  '>': '<',
  '«': '»',
  '»': '«',
  '‹': '›',
  '›': '‹',
};
const STRONG_RTL = /[\u0590-\u08FF\uFB1D-\uFDFF\uFE70-\uFEFF]/u;

function widthOf(font: ChainFont, text: string, size: number): number {
  return (font.font.layout(text).advanceWidth / font.font.unitsPerEm) * size;
}

/** Font index per UTF-16 unit: the previous character's face when it has the glyph (fewer runs), else the first that does. */
function assignFonts(text: string, chain: ChainFont[]): number[] {
  const out = new Array<number>(text.length);
  let prev = -1;
  for (let i = 0; i < text.length;) {
    const cp = text.codePointAt(i)!;
    const units = cp > 0xffff ? 2 : 1;
    let pick: number;
    if (prev >= 0 && (SPACE.test(String.fromCodePoint(cp)) || chain[prev].font.hasGlyphForCodePoint(cp))) {
      pick = prev;
    } else {
      pick = chain.findIndex((f) => f.font.hasGlyphForCodePoint(cp));
      // No face has it: the first face's .notdef box, rather than dropping the character silently.
      if (pick < 0) pick = prev >= 0 ? prev : 0;
    }
    for (let u = 0; u < units; u++) out[i + u] = pick;
    prev = pick;
    i += units;
  }
  // Leading spaces take the face of what follows them.
  const firstSolid = out.findIndex((_, i) => !SPACE.test(text[i]));
  if (firstSolid > 0) out.fill(out[firstSolid], 0, firstSolid);
  return out;
}

/** Break opportunities: [start, end) pieces that stay on one line (a word and its trailing spaces, or one CJK character). */
function pieces(text: string): [number, number][] {
  const out: [number, number][] = [];
  let start = 0;
  const chars = Array.from(text);
  let i = 0;
  for (let c = 0; c < chars.length; c++) {
    const ch = chars[c];
    const next = chars[c + 1];
    i += ch.length;
    const breakAfter =
      next === undefined ||
      (SPACE.test(ch) && !SPACE.test(next)) ||
      CJK.test(ch) ||
      (CJK.test(next) && !SPACE.test(ch));
    if (breakAfter) {
      out.push([start, i]);
      start = i;
    }
  }
  return out;
}

/** Runs of one face, in logical order, for measuring a slice. */
function measure(text: string, fonts: number[], chain: ChainFont[], size: number, from: number, to: number) {
  let width = 0;
  let s = from;
  for (let i = from + 1; i <= to; i++) {
    if (i === to || fonts[i] !== fonts[s]) {
      width += widthOf(chain[fonts[s]], text.slice(s, i), size);
      s = i;
    }
  }
  return width;
}

function reverseCodePoints(s: string): string {
  return Array.from(s).reverse().join('');
}

/**
 * Sets `text` in lines no wider than `width`, shrinking the size (down to `minSize`)
 * until it fits in `maxLines`. A word wider than the line still gets a line of its own
 * (it overflows rather than being cut).
 */
export function setText(
  raw: string,
  style: TextStyle,
  opts: { width: number; direction: 'ltr' | 'rtl'; maxLines?: number; minSize?: number },
): SetText {
  const text = raw.replace(/\s+/gu, ' ').trim();
  const { chain } = style;
  const fonts = assignFonts(text, chain);
  const parts = pieces(text);
  const levels = bidi.getEmbeddingLevels(text, opts.direction);
  const maxLines = opts.maxLines ?? Infinity;
  const minSize = opts.minSize ?? style.size;

  let size = style.size;
  let breaks: [number, number][] = [];
  for (;;) {
    breaks = [];
    let lineStart = 0;
    let lineEnd = 0;
    let used = 0;
    for (const [s, e] of parts) {
      const trimmedEnd = SPACE.test(text[e - 1]) ? e - 1 : e;
      const w = measure(text, fonts, chain, size, s, trimmedEnd);
      if (lineEnd > lineStart && used + w > opts.width) {
        breaks.push([lineStart, lineEnd]);
        lineStart = s;
        used = 0;
      }
      used += measure(text, fonts, chain, size, s, e);
      lineEnd = e;
    }
    if (lineEnd > lineStart) breaks.push([lineStart, lineEnd]);
    if (breaks.length <= maxLines || size <= minSize) break;
    size = Math.max(minSize, size * 0.92);
  }

  const lines: Line[] = breaks.map(([start, end]) => {
    let e = end;
    while (e > start && SPACE.test(text[e - 1])) e--;
    if (e === start) return { runs: [], width: 0 };
    // Visual order of this line's UTF-16 units.
    const order = Array.from({ length: e - start }, (_, k) => start + k);
    for (const [a, b] of bidi.getReorderSegments(text, levels, start, e - 1)) {
      const seg = order.slice(a - start, b - start + 1).reverse();
      order.splice(a - start, seg.length, ...seg);
    }
    // Group visually adjacent units that share a face and a direction and are adjacent in the text.
    const runs: Run[] = [];
    let k = 0;
    while (k < order.length) {
      const first = order[k];
      const rtl = (levels.levels[first] & 1) === 1;
      let lo = first;
      let hi = first;
      let j = k + 1;
      while (j < order.length) {
        const idx = order[j];
        const sameDir = ((levels.levels[idx] & 1) === 1) === rtl;
        const adjacent = rtl ? idx === lo - 1 : idx === hi + 1;
        // Right-to-left runs are cut at spaces: pdfkit 0.20 dropped the width of some spaces
        // inside a shaped Arabic run (the words touched), so words are placed one by one.
        const wordEdge = rtl && SPACE.test(text[idx]) !== SPACE.test(text[first]);
        if (!sameDir || !adjacent || wordEdge || fonts[idx] !== fonts[first]) break;
        if (rtl) lo = idx;
        else hi = idx;
        j++;
      }
      let logical = '';
      for (let u = lo; u <= hi; u++) logical += rtl ? (MIRROR[text[u]] ?? text[u]) : text[u];
      const font = chain[fonts[first]];
      // fontkit reverses runs of a right-to-left script itself; a right-to-left run of
      // neutral characters only (punctuation between Arabic words) is reversed here.
      const drawn = rtl && !STRONG_RTL.test(logical) ? reverseCodePoints(logical) : logical;
      runs.push({ text: drawn, font, width: widthOf(font, drawn, size) });
      k = j;
    }
    return { runs, width: runs.reduce((sum, r) => sum + r.width, 0) };
  });
  const lineHeight = size * (1.25 + (style.leading ?? 0));
  return { lines, size, lineHeight, height: lines.length * lineHeight, head: chain[0] };
}

export interface DrawTarget {
  font(name: string): DrawTarget;
  fontSize(size: number): DrawTarget;
  fillColor(color: string): DrawTarget;
  text(text: string, x: number, y: number, options: { lineBreak: false }): DrawTarget;
}

/**
 * Draws set text in the box starting at (x, y) of width `width`. `align: start` is the
 * reading edge: left in a left-to-right certificate, right in a right-to-left one.
 */
export function drawText(
  doc: DrawTarget,
  set: SetText,
  style: Pick<TextStyle, 'color'>,
  box: { x: number; y: number; width: number; align: 'center' | 'start'; direction: 'ltr' | 'rtl' },
): number {
  let y = box.y;
  doc.fillColor(style.color);
  // pdfkit places text by the top of the face's ascender; faces differ (CJK sits higher than
  // Latin), so every run is placed from one baseline per line, set by the first face.
  const ascentOf = (f: ChainFont) => (f.font.ascent / f.font.unitsPerEm) * set.size;
  for (const line of set.lines) {
    const baseline = y + ascentOf(set.head);
    let x =
      box.align === 'center'
        ? box.x + (box.width - line.width) / 2
        : box.direction === 'rtl'
          ? box.x + box.width - line.width
          : box.x;
    for (const run of line.runs) {
      doc
        .font(run.font.name)
        .fontSize(set.size)
        .text(run.text, x, baseline - ascentOf(run.font), { lineBreak: false });
      x += run.width;
    }
    y += set.lineHeight;
  }
  return set.height;
}
