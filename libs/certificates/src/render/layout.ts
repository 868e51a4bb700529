/**
 * Where the elements go: the footer along the bottom edge, then either the centre stack
 * with the seal and the QR code in corners, or the freeform positions.
 */
import { ASSERTED_IDENTITY_NOTE, type CertificatePosition } from '@lectern/contracts';
import { certificateWording } from '../wording.js';
import { elementItem, sealItem, withNameRule, type Item } from './elements.js';
import { drawQr, drawSeal } from './ornaments.js';
import { CORNER_SIZE, INK, MUTED, cornerSides, set, style, type Box, type Page } from './page.js';
import { drawText } from './text.js';

/** The serial under the QR code (or alone in its corner), left to right whatever the page's direction. */
function drawSerial(page: Page, x: number, y: number, width: number): void {
  const setted = set(page, page.input.serial, style(page.regular, 8, INK), {
    width,
    direction: 'ltr',
    maxLines: 1,
    minSize: 6,
  });
  drawText(page.doc, setted, { color: INK }, { x, y, width, align: 'center', direction: 'ltr' });
}

/** The footer text at the bottom of the content box; answers the height it takes (0 without one). */
export function drawFooter(page: Page, x: number, width: number): number {
  const { t, content } = page;
  if (!t.footerText.trim()) return 0;
  const setted = set(page, t.footerText, style(page.regular, 9, MUTED), { width, maxLines: 3, minSize: 6.5 });
  drawText(
    page.doc,
    setted,
    { color: MUTED },
    { x, y: content.y + content.h - setted.height, width, align: 'center', direction: page.dir },
  );
  return setted.height + 8;
}

/**
 * On a certificate of a run whose learner an LMS asserted (`source: scorm`), the line that says so, just above the
 * footer (`below` is the footer's height); answers the height it takes. Nothing on any other certificate.
 */
export function drawIdentityNote(page: Page, x: number, width: number, below: number): number {
  const { content } = page;
  if (page.input.source !== 'scorm') return 0;
  const note = certificateWording(page.input.locale).assertedNote;
  // The English sentence stays left to right on a right-to-left certificate; a translated one reads its way.
  const direction = note === ASSERTED_IDENTITY_NOTE ? 'ltr' : page.dir;
  const setted = set(page, note, style(page.regular, 9, MUTED), {
    width,
    direction,
    maxLines: 2,
    minSize: 6.5,
  });
  drawText(
    page.doc,
    setted,
    { color: MUTED },
    { x, y: content.y + content.h - below - setted.height, width, align: 'center', direction },
  );
  return setted.height + 8;
}

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

/**
 * The elements of `order` stacked in the column between the corners (headed by the seal in
 * the sealed layout, the name ruled in the centred one), the seal in its corner (but in the
 * sealed and minimal layouts) and the QR code with the serial under it in its corner.
 */
export function placeStack(page: Page, stackX: number, stackW: number, footerH: number): void {
  const { t, content, dir, minimal } = page;
  const items = t.order
    .map((el) => elementItem(page, el, stackW, stackX))
    .filter((i): i is Item => i !== null);
  const cx = stackX + stackW / 2;
  if (t.layout === 'sealed') {
    items.unshift(sealItem(page, cx));
  } else if (t.layout === 'centred') {
    const at = items.findIndex((i) => i.el === 'name');
    if (at >= 0) items[at] = withNameRule(page, items[at], cx);
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
    drawSeal(page.doc, b.x + b.w / 2, b.y + b.h / 2, b.w / 2, page.accent);
  }
  const qrSize = CORNER_SIZE;
  const serialH = 22;
  if (t.showQr) {
    const b = cornerBox(t.qrCorner, qrSize, serialH);
    drawQr(page, b.x, b.y, qrSize);
    drawSerial(page, b.x - 30, b.y + qrSize + 3, qrSize + 60);
  } else {
    // No code: the serial alone marks the corner.
    const b = cornerBox(t.qrCorner, qrSize, 0);
    drawSerial(page, b.x - 30, cornerSides(t.qrCorner, dir).top ? b.y : b.y + qrSize - 12, qrSize + 60);
  }
}

/**
 * Freeform: the name, the course, the seal and the QR code at their `positions`; the other
 * elements keep their place in `order` around the two positioned ones (before the first,
 * between them, after the second), across the full content width.
 */
export function placeFreeform(page: Page): void {
  const { t, content, minimal } = page;
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
    const item = elementItem(page, el, p.w, p.cx - p.w / 2)!;
    item.draw(p.y);
    placed[el] = { top: p.y, bottom: p.y + item.height };
  }
  const firstEl = t.order.indexOf('name') < t.order.indexOf('course') ? 'name' : 'course';
  const secondEl = firstEl === 'name' ? 'course' : 'name';
  const iFirst = t.order.indexOf(firstEl);
  const iSecond = t.order.indexOf(secondEl);
  const build = (els: typeof t.order) =>
    els.map((el) => elementItem(page, el, content.w, content.x)).filter((i): i is Item => i !== null);
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
    drawSeal(page.doc, s.cx, s.y + s.w / 2, s.w / 2, page.accent);
  }
  const q = at(t.positions.qr);
  if (t.showQr) drawQr(page, q.cx - q.w / 2, q.y, q.w);
  drawSerial(page, q.cx - q.w / 2 - 30, q.y + (t.showQr ? q.w + 3 : 0), q.w + 60);
}
