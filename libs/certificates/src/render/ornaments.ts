import { type Colour, type Page } from './page.js';

/** The border frame sits this far inside the page edge. */
const BORDER_INSET = 18;

/** The frame around the page in the accent colour: none, thin, thick, dashed, double or ornate. */
export function drawBorder(
  doc: PDFKit.PDFDocument,
  style: string,
  accent: Colour,
  pw: number,
  ph: number,
): void {
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

/** The left layout's accent bar along the reading edge of the content box. */
export function drawAccentBar(page: Page): void {
  const { doc, content, accent } = page;
  const barX = page.dir === 'ltr' ? content.x - 14 : content.x + content.w + 10;
  doc.save().rect(barX, content.y, 4, content.h).fillOpacity(accent.opacity).fill(accent.hex).restore();
}

/** The centred layout's short accent rule, centred on `cx` at `y`. */
export function drawNameRule(page: Page, cx: number, y: number): void {
  page.doc
    .save()
    .moveTo(cx - 40, y)
    .lineTo(cx + 40, y)
    .lineWidth(1.5)
    .strokeOpacity(page.accent.opacity)
    .stroke(page.accent.hex)
    .restore();
}

/** A rosette seal in the accent colour with a star at its centre. */
export function drawSeal(doc: PDFKit.PDFDocument, cx: number, cy: number, r: number, accent: Colour): void {
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
export function drawQr(page: Page, x: number, y: number, size: number): void {
  const { doc } = page;
  const qr = page.QRCode.create(page.input.verifyUrl, { errorCorrectionLevel: 'M' });
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
