/**
 * The certificate PDF: one A4 page drawn with pdfkit from the facts fixed at issue and
 * the template design (docs/certificates.md describes every token's effect). A pure
 * function of its input: the same certificate always renders the same page.
 */
import type QRCodeModule from 'qrcode';
import {
  resolveCertificateTokens,
  type CertificateElement,
  type CertificatePosition,
  type CertificateRenderInput,
  type ResolvedCertificateTokens,
} from '@lectern/contracts';
import type { FontLibrary } from './fonts.js';
import { drawText, setText, type SetText, type TextStyle } from './text.js';

/** A4 in PDF points. */
export const PAGE_SIZES = {
  landscape: [841.89, 595.28],
  portrait: [595.28, 841.89],
} as const;
/** The content box starts this far inside the page; `positions` are fractions of that box. */
export const CONTENT_MARGIN = 56;
/** The border frame sits this far inside the page edge. */
const BORDER_INSET = 18;
const CORNER_SIZE = 74;
const INK = '#1b1f24';
const MUTED = '#4a5058';

export interface RenderOptions {
  fonts: FontLibrary;
  /** PNG or JPEG bytes of the logo, already fetched and checked; null draws none. */
  logo: Buffer | null;
}

export interface RenderedCertificate {
  pdf: Buffer;
  warnings: string[];
}

interface Box {
  x: number;
  y: number;
  w: number;
  h: number;
}

interface Colour {
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

const SCORE_LABELS: Record<string, string> = {
  en: 'Score',
  fr: 'Score',
  de: 'Ergebnis',
  es: 'Puntuación',
  pt: 'Pontuação',
  it: 'Punteggio',
  nl: 'Score',
  pl: 'Wynik',
  ru: 'Результат',
  uk: 'Результат',
  el: 'Βαθμολογία',
  ar: 'النتيجة',
  he: 'ציון',
  ja: 'スコア',
  zh: '成绩',
  ko: '점수',
  tr: 'Puan',
};

function language(locale: string): string {
  return locale.toLowerCase().split(/[-_]/)[0];
}

/**
 * Intl formatters by locale, built once per process (building one costs more than the rest of
 * a date's formatting); null for a tag Intl refuses. Locales are the few the service accepts.
 */
function formatterCache<F>(make: (locale: string) => F): (locale: string) => F | null {
  const cache = new Map<string, F | null>();
  return (locale) => {
    let f = cache.get(locale);
    if (f === undefined) {
      try {
        f = make(locale);
      } catch {
        f = null; // an unknown locale tag
      }
      if (cache.size > 500) cache.clear();
      cache.set(locale, f);
    }
    return f;
  };
}
const dateFormat = formatterCache((l) => new Intl.DateTimeFormat(l, { dateStyle: 'long', timeZone: 'UTC' }));
const percentFormat = formatterCache(
  (l) => new Intl.NumberFormat(l, { style: 'percent', maximumFractionDigits: 1 }),
);

function formatDate(iso: string, locale: string): string {
  const date = new Date(iso);
  // An unknown locale tag: fall back to English.
  const f = dateFormat(locale) ?? dateFormat('en');
  return f ? f.format(date) : date.toISOString().slice(0, 10);
}

function formatScore(score: number, locale: string): string {
  const f = percentFormat(locale);
  const pct = f ? f.format(score / 100) : `${score}%`;
  return `${SCORE_LABELS[language(locale)] ?? SCORE_LABELS.en}: ${pct}`;
}

/** Physical side of a corner named by reading edge. */
function cornerSides(corner: string, direction: 'ltr' | 'rtl'): { left: boolean; top: boolean } {
  const start = corner.endsWith('Start');
  return { top: corner.startsWith('top'), left: direction === 'ltr' ? start : !start };
}

/** One element of the centre stack, measured for a width and drawn at a top edge. */
interface Item {
  el: CertificateElement | 'seal';
  height: number;
  gapAfter: number;
  draw(y: number): void;
}

export async function renderCertificate(
  input: CertificateRenderInput,
  opts: RenderOptions,
): Promise<RenderedCertificate> {
  // Loaded on the first render, not on import (see fonts.ts): only the worker draws pages.
  const [{ default: PDFDocument }, { default: QRCode }] = await Promise.all([
    import('pdfkit'),
    import('qrcode'),
  ]);
  const t: ResolvedCertificateTokens = resolveCertificateTokens(input.tokens);
  const warnings: string[] = [];
  const dir = input.direction;
  const [pw, ph] = PAGE_SIZES[t.orientation];
  const issuedAt = new Date(input.issuedAt);
  const doc = new PDFDocument({
    size: [pw, ph],
    margin: 0,
    lang: input.locale,
    displayTitle: true,
    info: {
      Title: `Certificate ${input.serial}: ${input.courseTitle}`,
      Author: input.issuerName,
      Subject: `${input.learnerName} — ${input.courseTitle}`,
      Keywords: `${input.serial} ${input.verifyUrl}`,
      Creator: 'Lectern',
      Producer: 'Lectern',
      CreationDate: issuedAt,
      ModDate: issuedAt,
    },
  });
  const chunks: Buffer[] = [];
  doc.on('data', (c: Buffer) => chunks.push(c));
  const finished = new Promise<Buffer>((resolve, reject) => {
    doc.on('end', () => resolve(Buffer.concat(chunks)));
    doc.on('error', reject);
  });

  const regular = opts.fonts.chain(input.locale, 'regular');
  const bold = opts.fonts.chain(input.locale, 'bold');
  for (const f of [...regular, ...bold])
    doc.registerFont(f.name, f.font as unknown as PDFKit.Mixins.PDFFontSource);

  const accent = parseColour(t.accentColor);
  const content: Box = {
    x: CONTENT_MARGIN,
    y: CONTENT_MARGIN,
    w: pw - 2 * CONTENT_MARGIN,
    h: ph - 2 * CONTENT_MARGIN,
  };
  const minimal = t.layout === 'minimal';
  const align: 'center' | 'start' = t.layout === 'left' ? 'start' : 'center';

  // ------------------------------------------------------------------ frame
  drawBorder(doc, minimal && t.borderStyle === 'ornate' ? 'double' : t.borderStyle, accent, pw, ph);
  if (t.layout === 'left') {
    const barX = dir === 'ltr' ? content.x - 14 : content.x + content.w + 10;
    doc.save().rect(barX, content.y, 4, content.h).fillOpacity(accent.opacity).fill(accent.hex).restore();
  }

  // ------------------------------------------------------------- text items
  const style = (chain: typeof regular, size: number, color: string, leading = 0): TextStyle => ({
    chain,
    size,
    color,
    leading,
  });
  const textItem = (
    el: CertificateElement,
    text: string,
    st: TextStyle,
    width: number,
    x: number,
    fit: { maxLines?: number; minSize?: number } = {},
    gapAfter = 10,
  ): Item => {
    const set: SetText = setText(text, st, { width, direction: dir, ...fit });
    return {
      el,
      height: set.height,
      gapAfter,
      draw: (y) => {
        doc.save().fillOpacity(st.color === accent.hex ? accent.opacity : 1);
        drawText(doc, set, st, { x, y, width, align, direction: dir });
        doc.restore();
      },
    };
  };

  const logoImage = opts.logo ? openImage(doc, opts.logo, warnings) : null;
  const makeItem = (el: CertificateElement, width: number, x: number): Item | null => {
    switch (el) {
      case 'logo': {
        if (!logoImage) return null;
        const h = 52;
        const w = Math.min(width, 180);
        const lx = align === 'center' ? x + (width - w) / 2 : dir === 'ltr' ? x : x + width - w;
        return {
          el,
          height: h,
          gapAfter: 14,
          draw: (y) => {
            doc.image(logoImage, lx, y, {
              fit: [w, h],
              ...(align === 'center'
                ? { align: 'center' as const }
                : dir === 'rtl'
                  ? { align: 'right' as const }
                  : {}),
              valign: 'center',
            });
          },
        };
      }
      case 'issuer':
        return input.issuerName.trim()
          ? textItem(
              el,
              input.issuerName,
              style(bold, 12, accent.hex),
              width,
              x,
              { maxLines: 2, minSize: 9 },
              14,
            )
          : null;
      case 'eyebrow':
        return t.eyebrow.trim()
          ? textItem(
              el,
              t.eyebrow,
              style(regular, 16, accent.hex),
              width,
              x,
              { maxLines: 2, minSize: 10 },
              10,
            )
          : null;
      case 'name':
        return textItem(
          el,
          input.learnerName,
          style(bold, t.layout === 'sealed' ? 40 : 36, INK),
          width,
          x,
          { maxLines: 2, minSize: 18 },
          minimal ? 8 : 12,
        );
      case 'body':
        return t.bodyText.trim()
          ? textItem(el, t.bodyText, style(regular, 13, MUTED, 0.1), width, x, { maxLines: 6, minSize: 8 }, 8)
          : null;
      case 'course':
        return textItem(
          el,
          input.courseTitle,
          style(bold, 22, INK),
          width,
          x,
          { maxLines: 3, minSize: 12 },
          14,
        );
      case 'score':
        return t.showScore && input.score !== null
          ? textItem(el, formatScore(input.score, input.locale), style(regular, 12, MUTED), width, x, {}, 6)
          : null;
      case 'date':
        return t.showDate
          ? textItem(el, formatDate(input.issuedAt, input.locale), style(regular, 12, MUTED), width, x, {}, 6)
          : null;
      case 'signature': {
        if (!t.signatureName.trim()) return null;
        const sw = Math.min(200, width);
        const name = setText(t.signatureName, style(bold, 11, INK), {
          width: sw,
          direction: dir,
          maxLines: 1,
          minSize: 7,
        });
        const title = t.signatureTitle.trim()
          ? setText(t.signatureTitle, style(regular, 9.5, MUTED), {
              width: sw,
              direction: dir,
              maxLines: 2,
              minSize: 7,
            })
          : null;
        const sx = align === 'center' ? x + (width - sw) / 2 : dir === 'ltr' ? x : x + width - sw;
        return {
          el,
          height: 26 + 4 + name.height + (title?.height ?? 0),
          gapAfter: 6,
          draw: (y) => {
            const ruleY = y + 26;
            doc
              .save()
              .moveTo(sx, ruleY)
              .lineTo(sx + sw, ruleY)
              .lineWidth(0.75)
              .stroke(INK)
              .restore();
            drawText(
              doc,
              name,
              { color: INK },
              { x: sx, y: ruleY + 4, width: sw, align: 'center', direction: dir },
            );
            if (title)
              drawText(
                doc,
                title,
                { color: MUTED },
                {
                  x: sx,
                  y: ruleY + 4 + name.height,
                  width: sw,
                  align: 'center',
                  direction: dir,
                },
              );
          },
        };
      }
    }
  };

  // ------------------------------------------------------------ footer
  const side = CORNER_SIZE + 16;
  const stackX = content.x + side;
  const stackW = content.w - 2 * side;
  let footerH = 0;
  if (t.footerText.trim()) {
    const set = setText(t.footerText, style(regular, 9, MUTED), {
      width: stackW,
      direction: dir,
      maxLines: 3,
      minSize: 6.5,
    });
    footerH = set.height + 8;
    drawText(
      doc,
      set,
      { color: MUTED },
      {
        x: stackX,
        y: content.y + content.h - set.height,
        width: stackW,
        align: 'center',
        direction: dir,
      },
    );
  }

  // ---------------------------------------------------- stack and corners
  const qrSize = CORNER_SIZE;
  if (t.freeform) {
    placeFreeform();
  } else {
    const items = t.order.map((el) => makeItem(el, stackW, stackX)).filter((i): i is Item => i !== null);
    if (t.layout === 'sealed') {
      const r = 46;
      items.unshift({
        el: 'seal',
        height: 2 * r,
        gapAfter: 14,
        draw: (y) => drawSeal(doc, stackX + stackW / 2, y + r, r, accent),
      });
    } else if (t.layout === 'centred') {
      // A short accent rule under the name.
      const at = items.findIndex((i) => i.el === 'name');
      if (at >= 0) {
        const nameItem = items[at];
        items[at] = {
          ...nameItem,
          height: nameItem.height + 10,
          draw: (y) => {
            nameItem.draw(y);
            const ry = y + nameItem.height + 4;
            doc
              .save()
              .moveTo(stackX + stackW / 2 - 40, ry)
              .lineTo(stackX + stackW / 2 + 40, ry)
              .lineWidth(1.5)
              .strokeOpacity(accent.opacity)
              .stroke(accent.hex)
              .restore();
          },
        };
      }
    }
    stack(items, content.y, content.y + content.h - footerH);

    const cornerBox = (corner: string, size: number, extra = 0): Box => {
      const s = cornerSides(corner, dir);
      return {
        x: s.left ? content.x : content.x + content.w - size,
        y: s.top ? content.y : content.y + content.h - size - extra,
        w: size,
        h: size,
      };
    };
    if (t.layout !== 'sealed' && !minimal) {
      const b = cornerBox(t.sealCorner, CORNER_SIZE);
      drawSeal(doc, b.x + b.w / 2, b.y + b.h / 2, b.w / 2, accent);
    }
    const serialH = 22;
    if (t.showQr) {
      const b = cornerBox(t.qrCorner, qrSize, serialH);
      drawQr(QRCode, doc, input.verifyUrl, b.x, b.y, qrSize);
      serialText(b.x - 30, b.y + qrSize + 3, qrSize + 60);
    } else {
      // No code: the serial alone marks the corner.
      const b = cornerBox(t.qrCorner, qrSize, 0);
      serialText(b.x - 30, cornerSides(t.qrCorner, dir).top ? b.y : b.y + qrSize - 12, qrSize + 60);
    }
  }

  doc.end();
  return { pdf: await finished, warnings };

  // ---------------------------------------------------------------- helpers

  /** Lays items top-down, centred vertically in [top, bottom]; gaps shrink when space is short. */
  function stack(items: Item[], top: number, bottom: number): void {
    const content = items.reduce((s, i) => s + i.height, 0);
    const gaps = items.slice(0, -1).reduce((s, i) => s + i.gapAfter, 0);
    const room = bottom - top;
    const gapScale = gaps > 0 ? Math.max(0.2, Math.min(1, (room - content) / gaps)) : 1;
    const total = content + gaps * gapScale;
    let y = top + Math.max(0, (room - total) / 2);
    for (const item of items) {
      item.draw(y);
      y += item.height + item.gapAfter * gapScale;
    }
  }

  function serialText(x: number, y: number, width: number): void {
    const set = setText(input.serial, style(regular, 8, INK), {
      width,
      direction: 'ltr',
      maxLines: 1,
      minSize: 6,
    });
    drawText(doc, set, { color: INK }, { x, y, width, align: 'center', direction: 'ltr' });
  }

  function placeFreeform(): void {
    const at = (p: CertificatePosition) => ({
      cx: content.x + p.x * content.w,
      y: content.y + p.y * content.h,
      w: p.w * content.w,
    });
    const placed: Record<'name' | 'course', { top: number; bottom: number }> = {
      name: { top: 0, bottom: 0 },
      course: { top: 0, bottom: 0 },
    };
    for (const el of ['name', 'course'] as const) {
      const p = at(t.positions[el]);
      const item = makeItem(el, p.w, p.cx - p.w / 2)!;
      item.draw(p.y);
      placed[el] = { top: p.y, bottom: p.y + item.height };
    }
    // The other elements keep their place in `order` around the two positioned ones:
    // before the first, between them, after the second.
    const firstEl = t.order.indexOf('name') < t.order.indexOf('course') ? 'name' : 'course';
    const secondEl = firstEl === 'name' ? 'course' : 'name';
    const iFirst = t.order.indexOf(firstEl);
    const iSecond = t.order.indexOf(secondEl);
    const build = (els: CertificateElement[]) =>
      els.map((el) => makeItem(el, content.w, content.x)).filter((i): i is Item => i !== null);
    const before = build(t.order.slice(0, iFirst));
    const between = build(t.order.slice(iFirst + 1, iSecond));
    const after = build(t.order.slice(iSecond + 1));
    let y = placed[firstEl].top - 10 - before.reduce((s, i) => s + i.height + i.gapAfter, 0);
    for (const item of before) {
      item.draw(y);
      y += item.height + item.gapAfter;
    }
    y = placed[firstEl].bottom + 10;
    for (const item of between) {
      item.draw(y);
      y += item.height + item.gapAfter;
    }
    y = Math.max(placed[secondEl].bottom, y) + 10;
    for (const item of after) {
      item.draw(y);
      y += item.height + item.gapAfter;
    }
    if (!minimal) {
      const s = at(t.positions.seal);
      drawSeal(doc, s.cx, s.y + s.w / 2, s.w / 2, accent);
    }
    const q = at(t.positions.qr);
    if (t.showQr) drawQr(QRCode, doc, input.verifyUrl, q.cx - q.w / 2, q.y, q.w);
    serialText(q.cx - q.w / 2 - 30, q.y + (t.showQr ? q.w + 3 : 0), q.w + 60);
  }
}

/** The logo bytes when pdfkit can decode them (a truncated PNG would otherwise fail the whole render). */
function openImage(doc: PDFKit.PDFDocument, bytes: Buffer, warnings: string[]): Buffer | null {
  try {
    (doc as unknown as { openImage(src: Buffer): unknown }).openImage(bytes);
    return bytes;
  } catch (err) {
    warnings.push(`logo left out: the image could not be read (${(err as Error).message})`);
    return null;
  }
}

function drawBorder(doc: PDFKit.PDFDocument, style: string, accent: Colour, pw: number, ph: number): void {
  const rect = (inset: number, width: number) =>
    doc
      .save()
      .rect(inset, inset, pw - 2 * inset, ph - 2 * inset)
      .lineWidth(width)
      .strokeOpacity(accent.opacity)
      .stroke(accent.hex)
      .restore();
  const i = BORDER_INSET;
  switch (style) {
    case 'none':
      return;
    case 'thin':
      rect(i, 0.75);
      return;
    case 'thick':
      rect(i, 5);
      return;
    case 'dashed':
      doc
        .save()
        .rect(i, i, pw - 2 * i, ph - 2 * i)
        .dash(7, { space: 4 })
        .lineWidth(1.25)
        .strokeOpacity(accent.opacity)
        .stroke(accent.hex)
        .undash()
        .restore();
      return;
    case 'double':
      rect(i, 2.5);
      rect(i + 6, 0.75);
      return;
    case 'ornate': {
      rect(i, 2.5);
      rect(i + 6, 0.75);
      rect(i + 11, 0.5);
      // A diamond in each corner and at the middle of each edge, between the rules.
      const d = 7;
      const points: [number, number][] = [
        [i + 6, i + 6],
        [pw - i - 6, i + 6],
        [i + 6, ph - i - 6],
        [pw - i - 6, ph - i - 6],
        [pw / 2, i + 6],
        [pw / 2, ph - i - 6],
        [i + 6, ph / 2],
        [pw - i - 6, ph / 2],
      ];
      doc.save().fillOpacity(accent.opacity);
      for (const [x, y] of points) {
        doc
          .moveTo(x, y - d)
          .lineTo(x + d, y)
          .lineTo(x, y + d)
          .lineTo(x - d, y)
          .closePath();
      }
      doc.fill(accent.hex).restore();
      return;
    }
  }
}

/** A rosette seal in the accent colour with a star at its centre. */
function drawSeal(doc: PDFKit.PDFDocument, cx: number, cy: number, r: number, accent: Colour): void {
  const points = 36;
  doc.save().fillOpacity(accent.opacity);
  for (let k = 0; k <= points * 2; k++) {
    const a = (Math.PI * k) / points;
    const rr = k % 2 === 0 ? r : r * 0.9;
    const x = cx + rr * Math.cos(a);
    const y = cy + rr * Math.sin(a);
    if (k === 0) doc.moveTo(x, y);
    else doc.lineTo(x, y);
  }
  doc.closePath().fill(accent.hex);
  doc
    .circle(cx, cy, r * 0.74)
    .lineWidth(Math.max(0.5, r * 0.03))
    .stroke('#ffffff');
  const star = 5;
  for (let k = 0; k < star * 2; k++) {
    const a = -Math.PI / 2 + (Math.PI * k) / star;
    const rr = k % 2 === 0 ? r * 0.38 : r * 0.16;
    const x = cx + rr * Math.cos(a);
    const y = cy + rr * Math.sin(a);
    if (k === 0) doc.moveTo(x, y);
    else doc.lineTo(x, y);
  }
  doc.closePath().fill('#ffffff').restore();
}

/**
 * The verification QR code as vector rectangles (one per run of dark modules in a row):
 * sharp at any zoom and ~10× cheaper than embedding a PNG (STACK-NOTES.md). Black on
 * the white page whatever the accent colour, so every phone reads it.
 */
function drawQr(
  QRCode: typeof QRCodeModule,
  doc: PDFKit.PDFDocument,
  url: string,
  x: number,
  y: number,
  size: number,
): void {
  const qr = QRCode.create(url, { errorCorrectionLevel: 'M' });
  const n = qr.modules.size;
  const m = size / n;
  doc.save();
  for (let row = 0; row < n; row++) {
    let col = 0;
    while (col < n) {
      if (!qr.modules.get(row, col)) {
        col++;
        continue;
      }
      let end = col;
      while (end < n && qr.modules.get(row, end)) end++;
      // A hair of overlap so no seam shows between adjacent rows in viewers that anti-alias.
      doc.rect(x + col * m, y + row * m, (end - col) * m, m + 0.05);
      col = end;
    }
  }
  doc.fill('#000000').restore();
}
