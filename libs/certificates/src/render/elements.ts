/**
 * The elements of a certificate's stack (`order`): each is measured for a width and drawn
 * at a top edge, so a layout can place them without knowing what they are.
 */
import type { CertificateElement } from '@lectern/contracts';
import { formatDate, formatScore } from './format.js';
import { drawNameRule, drawSeal } from './ornaments.js';
import { INK, MUTED, set, style, type Page } from './page.js';
import { drawText, type TextStyle } from './text.js';

/** One element of the centre stack, measured for a width and drawn at a top edge. */
export interface Item {
  el: CertificateElement | 'seal';
  height: number;
  gapAfter: number;
  draw(y: number): void;
}

/** A text element: set once for the width, drawn in the accent's opacity when it is in the accent colour. */
function textItem(
  page: Page,
  el: CertificateElement,
  text: string,
  st: TextStyle,
  width: number,
  x: number,
  fit: { maxLines?: number; minSize?: number } = {},
  gapAfter = 10,
): Item {
  const { doc, accent } = page;
  const setted = set(page, text, st, { width, ...fit });
  return {
    el,
    height: setted.height,
    gapAfter,
    draw: (y) => {
      doc.save().fillOpacity(st.color === accent.hex ? accent.opacity : 1);
      drawText(doc, setted, st, { x, y, width, align: page.align, direction: page.dir });
      doc.restore();
    },
  };
}

/** The template's logo, fitted in a 180 × 52 box on the stack's alignment. */
function logoItem(page: Page, width: number, x: number): Item | null {
  const { doc, logo, align, dir } = page;
  if (!logo) return null;
  const h = 52;
  const w = Math.min(width, 180);
  const lx = align === 'center' ? x + (width - w) / 2 : dir === 'ltr' ? x : x + width - w;
  return {
    el: 'logo',
    height: h,
    gapAfter: 14,
    draw: (y) => {
      doc.image(logo, lx, y, {
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

/** A rule to sign on, the signatory's name under it and their title under that. */
function signatureItem(page: Page, width: number, x: number): Item | null {
  const { doc, t, align, dir, regular, bold } = page;
  if (!t.signatureName.trim()) return null;
  const sw = Math.min(200, width);
  const name = set(page, t.signatureName, style(bold, 11, INK), { width: sw, maxLines: 1, minSize: 7 });
  const title = t.signatureTitle.trim()
    ? set(page, t.signatureTitle, style(regular, 9.5, MUTED), { width: sw, maxLines: 2, minSize: 7 })
    : null;
  const sx = align === 'center' ? x + (width - sw) / 2 : dir === 'ltr' ? x : x + width - sw;
  return {
    el: 'signature',
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
          { x: sx, y: ruleY + 4 + name.height, width: sw, align: 'center', direction: dir },
        );
    },
  };
}

/** The item of one element for a column of `width` at `x`; null when the element has nothing to show. */
export function elementItem(page: Page, el: CertificateElement, width: number, x: number): Item | null {
  const { input, t, regular, bold, accent, minimal } = page;
  const text = (
    content: string,
    st: TextStyle,
    fit: { maxLines?: number; minSize?: number },
    gapAfter: number,
  ) => textItem(page, el, content, st, width, x, fit, gapAfter);
  switch (el) {
    case 'logo':
      return logoItem(page, width, x);
    case 'issuer':
      return input.issuerName.trim()
        ? text(input.issuerName, style(bold, 12, accent.hex), { maxLines: 2, minSize: 9 }, 14)
        : null;
    case 'eyebrow':
      return t.eyebrow.trim()
        ? text(t.eyebrow, style(regular, 16, accent.hex), { maxLines: 2, minSize: 10 }, 10)
        : null;
    case 'name':
      return text(
        input.learnerName,
        style(bold, t.layout === 'sealed' ? 40 : 36, INK),
        { maxLines: 2, minSize: 18 },
        minimal ? 8 : 12,
      );
    case 'body':
      return t.bodyText.trim()
        ? text(t.bodyText, style(regular, 13, MUTED, 0.1), { maxLines: 6, minSize: 8 }, 8)
        : null;
    case 'course':
      return text(input.courseTitle, style(bold, 22, INK), { maxLines: 3, minSize: 12 }, 14);
    case 'score':
      return t.showScore && input.score !== null
        ? text(formatScore(input.score, input.locale), style(regular, 12, MUTED), {}, 6)
        : null;
    case 'date':
      return t.showDate
        ? text(formatDate(input.issuedAt, input.locale), style(regular, 12, MUTED), {}, 6)
        : null;
    case 'signature':
      return signatureItem(page, width, x);
  }
}

/** The sealed layout's large seal at the head of the stack, centred on `cx`. */
export function sealItem(page: Page, cx: number): Item {
  const r = 46;
  return {
    el: 'seal',
    height: 2 * r,
    gapAfter: 14,
    draw: (y) => drawSeal(page.doc, cx, y + r, r, page.accent),
  };
}

/** The name with the centred layout's accent rule under it, centred on `cx`. */
export function withNameRule(page: Page, name: Item, cx: number): Item {
  return {
    ...name,
    height: name.height + 10,
    draw: (y) => {
      name.draw(y);
      drawNameRule(page, cx, y + name.height + 4);
    },
  };
}
