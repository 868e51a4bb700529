import type QRCodeModule from 'qrcode';
import type { CertificateRenderInput, ResolvedCertificateTokens } from '@lectern/contracts';
import { assertFacesFor, type ChainFont, type FontLibrary } from './fonts.js';
import { setText, type SetText, type TextStyle } from './text.js';

/** A4 in PDF points. */
export const PAGE_SIZES = {
  landscape: [841.89, 595.28],
  portrait: [595.28, 841.89],
} as const;
/** The content box starts this far inside the page; `positions` are fractions of that box. */
export const CONTENT_MARGIN = 56;
/** The seal and the QR code fill a square of this side in their corners. */
export const CORNER_SIZE = 74;
export const INK = '#1b1f24';
export const MUTED = '#4a5058';

export interface Box {
  x: number;
  y: number;
  w: number;
  h: number;
}

export interface Colour {
  hex: string;
  opacity: number;
}

/** `#rgb`, `#rrggbb`, `#rrggbbaa` → pdfkit's `#rrggbb` and an opacity. */
export function parseColour(value: string): Colour {
  let v = value.replace(/^#/, '').toLowerCase();
  if (v.length === 3) v = [...v].map((c) => c + c).join('');
  const opacity = v.length === 8 ? parseInt(v.slice(6, 8), 16) / 255 : 1;
  return { hex: `#${v.slice(0, 6)}`, opacity };
}

/** One certificate page being drawn: the document, the facts and tokens, and what follows from them. */
export interface Page {
  doc: PDFKit.PDFDocument;
  input: CertificateRenderInput;
  t: ResolvedCertificateTokens;
  fonts: FontLibrary;
  QRCode: typeof QRCodeModule;
  dir: 'ltr' | 'rtl';
  /** `start` is the reading edge (left-aligned layout); every other layout centres. */
  align: 'center' | 'start';
  minimal: boolean;
  accent: Colour;
  regular: ChainFont[];
  bold: ChainFont[];
  content: Box;
  /** The logo bytes pdfkit can decode, or null to draw none. */
  logo: Buffer | null;
}

export function style(chain: ChainFont[], size: number, color: string, leading = 0): TextStyle {
  return { chain, size, color, leading };
}

/**
 * Sets text in the page's direction. Every text of the page is set here, so this is where a text in a script
 * whose faces are missing refuses the render (503 naming the package) instead of printing empty boxes.
 */
export function set(
  page: Page,
  text: string,
  st: TextStyle,
  opts: { width: number; maxLines?: number; minSize?: number; direction?: 'ltr' | 'rtl' },
): SetText {
  assertFacesFor(page.fonts, text);
  return setText(text, st, { direction: page.dir, ...opts });
}

/** Physical side of a corner named by reading edge. */
export function cornerSides(corner: string, direction: 'ltr' | 'rtl'): { left: boolean; top: boolean } {
  const start = corner.endsWith('Start');
  return { top: corner.startsWith('top'), left: direction === 'ltr' ? start : !start };
}
