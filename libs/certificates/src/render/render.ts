/**
 * The certificate PDF: one A4 page drawn with pdfkit from the facts fixed at issue and
 * the template design (docs/certificates.md describes every token's effect). A pure
 * function of its input: the same certificate always renders the same page.
 *
 * This file sets the document up and draws the page in order: the frame (ornaments.ts),
 * the footer, then the elements (elements.ts) where the layout puts them (layout.ts).
 */
import { resolveCertificateTokens, type CertificateRenderInput } from '@lectern/contracts';
import type { FontLibrary } from './fonts.js';
import { drawFooter, drawIdentityNote, placeFreeform, placeStack } from './layout.js';
import { drawAccentBar, drawBorder } from './ornaments.js';
import { CONTENT_MARGIN, CORNER_SIZE, PAGE_SIZES, parseColour, type Page } from './page.js';

export { CONTENT_MARGIN, PAGE_SIZES, parseColour };

export interface RenderOptions {
  fonts: FontLibrary;
  /** PNG or JPEG bytes of the logo, already fetched and checked; null draws none. */
  logo: Buffer | null;
}

export interface RenderedCertificate {
  pdf: Buffer;
  warnings: string[];
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
  const t = resolveCertificateTokens(input.tokens);
  const warnings: string[] = [];
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

  const minimal = t.layout === 'minimal';
  const page: Page = {
    doc,
    input,
    t,
    fonts: opts.fonts,
    QRCode,
    dir: input.direction,
    align: t.layout === 'left' ? 'start' : 'center',
    minimal,
    accent: parseColour(t.accentColor),
    regular,
    bold,
    content: { x: CONTENT_MARGIN, y: CONTENT_MARGIN, w: pw - 2 * CONTENT_MARGIN, h: ph - 2 * CONTENT_MARGIN },
    logo: null,
  };

  drawBorder(doc, minimal && t.borderStyle === 'ornate' ? 'double' : t.borderStyle, page.accent, pw, ph);
  if (t.layout === 'left') drawAccentBar(page);
  page.logo = opts.logo ? openImage(doc, opts.logo, warnings) : null;

  // The stack keeps clear of the corners (seal, QR code) on both sides.
  const side = CORNER_SIZE + 16;
  const stackX = page.content.x + side;
  const stackW = page.content.w - 2 * side;
  const footerH = drawFooter(page, stackX, stackW);
  const bottomH = footerH + drawIdentityNote(page, stackX, stackW, footerH);
  if (t.freeform) placeFreeform(page);
  else placeStack(page, stackX, stackW, bottomH);

  doc.end();
  return { pdf: await finished, warnings };
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
