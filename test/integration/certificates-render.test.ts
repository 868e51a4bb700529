import { expect } from 'chai';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { REPO_ROOT } from '../support/spine.js';
import { SAMPLE_CERTIFICATE, pdfText, pdfToPng, qrText } from '../support/certificates.js';
import {
  CERTIFICATE_BORDER_STYLES,
  CERTIFICATE_LAYOUTS,
  CERTIFICATE_ORIENTATIONS,
  type CertificateRenderInput,
  type CertificateTokens,
} from '@lectern/contracts';
import { loadFontLibrary, renderCertificate, type FontLibrary } from '@lectern/certificates';

/** PNGs of every rendered variant, kept for a reviewer to look at (gitignored). */
const OUT = path.join(REPO_ROOT, 'test/output/certificates');

const base = SAMPLE_CERTIFICATE;

const full: CertificateTokens = {
  eyebrow: 'Certificate of achievement',
  signatureName: 'Dana Reyes',
  signatureTitle: 'Head of Learning',
  footerText: 'Issued under the Acme safety programme.',
  showScore: true,
};

describe('certificates: the renderer (every layout, orientation and border; scripts; tokens)', function () {
  this.timeout(120_000);
  let fonts: FontLibrary;
  const render = async (
    name: string,
    input: Omit<CertificateRenderInput, 'tokens'>,
    tokens: CertificateTokens,
  ) => {
    const { pdf, warnings } = await renderCertificate({ ...input, tokens }, { fonts, logo: null });
    await pdfToPng(pdf, path.join(OUT, `${name}.png`), 60);
    return { pdf, warnings, text: await pdfText(pdf) };
  };

  before(async () => {
    fonts = loadFontLibrary();
    await mkdir(OUT, { recursive: true });
  });

  for (const layout of CERTIFICATE_LAYOUTS) {
    for (const orientation of CERTIFICATE_ORIENTATIONS) {
      it(`${layout} × ${orientation}: name, course, serial, score, signature, footer in the text; the QR decodes to the verify URL`, async () => {
        const { pdf, text, warnings } = await render(`${layout}-${orientation}`, base, {
          ...full,
          layout,
          orientation,
        });
        for (const s of [
          'Ada Lovelace',
          'Fire safety at work',
          'LC-7KQM-W3XD-9TPA',
          'Certificate of achievement',
          'Score: 87.5%',
          'Dana Reyes',
          'Head of Learning',
          'Acme safety programme',
          'November 21, 2026',
        ])
          expect(text, s).to.include(s);
        expect(warnings).to.deep.equal([]);
        expect(await qrText(pdf)).to.equal(base.verifyUrl);
        const box = /\/MediaBox \[0 0 ([\d.]+) ([\d.]+)\]/.exec(pdf.toString('latin1'));
        const [w, h] = [Number(box?.[1]), Number(box?.[2])];
        expect(orientation === 'landscape' ? w > h : h > w, `${w}×${h}`).to.equal(true);
      });
    }
  }

  it('every border style renders', async () => {
    for (const borderStyle of CERTIFICATE_BORDER_STYLES) {
      const { text } = await render(`border-${borderStyle}`, base, { borderStyle, accentColor: '#b08d57cc' });
      expect(text, borderStyle).to.include('Ada Lovelace');
    }
  });

  it('showQr false prints the serial without a code; showDate false hides the date; showScore hides the score of an ungraded course', async () => {
    const { pdf, text } = await render(
      'no-qr',
      { ...base, score: null },
      { showQr: false, showDate: false, showScore: true },
    );
    expect(text).to.include('LC-7KQM-W3XD-9TPA').and.not.include('November').and.not.include('Score');
    expect(await qrText(pdf)).to.equal('');
  });

  it('order rearranges the stack; an empty signatureName hides the signature line', async () => {
    const { text } = await render('order', base, { order: ['course', 'name'], eyebrow: 'EYEBROW' });
    const at = (s: string) => text.indexOf(s);
    expect(at('Fire safety at work')).to.be.lessThan(at('Ada Lovelace'));
    expect(at('Ada Lovelace')).to.be.lessThan(at('EYEBROW'));
  });

  it('freeform places name, course, seal and QR from positions', async () => {
    const { pdf, text } = await render('freeform', base, {
      freeform: true,
      positions: {
        name: { x: 0.5, y: 0.1, w: 0.6 },
        course: { x: 0.5, y: 0.7, w: 0.6 },
        qr: { x: 0.5, y: 0.35, w: 0.2 },
      },
    });
    expect(text.indexOf('Ada Lovelace')).to.be.lessThan(text.indexOf('Fire safety at work'));
    expect(await qrText(pdf)).to.equal(base.verifyUrl);
  });

  it('Arabic: a right-to-left certificate whose words read in order in pdftotext', async () => {
    const { text } = await render(
      'arabic-rtl',
      {
        ...base,
        learnerName: 'محمد عبد الله',
        courseTitle: 'السلامة من الحرائق',
        locale: 'ar',
        direction: 'rtl',
      },
      { eyebrow: 'شهادة إتمام', bodyText: 'أتم بنجاح دورة', layout: 'left', showScore: true },
    );
    expect(text).to.include('محمد عبد الله').and.include('شهادة إتمام').and.include('أتم بنجاح دورة');
    expect(text).to.include('LC-7KQM-W3XD-9TPA');
  });

  it('Japanese, Chinese, Korean, Cyrillic, Greek and Hebrew names come out readable', async () => {
    for (const [locale, name, direction] of [
      ['ja', '山田 太郎', 'ltr'],
      ['zh-CN', '王小明', 'ltr'],
      ['ko', '김민수', 'ltr'],
      ['ru', 'Анна Каренина', 'ltr'],
      ['el', 'Νίκος Καζαντζάκης', 'ltr'],
      ['he', 'דוד כהן', 'rtl'],
    ] as const) {
      const { text } = await render(
        `script-${locale}`,
        { ...base, learnerName: name, locale, direction },
        {},
      );
      expect(text, locale).to.include(name);
    }
  });

  it('a mixed-script line falls back font by font (Latin and Japanese in one title)', async () => {
    const { text } = await render(
      'mixed',
      { ...base, courseTitle: '防火安全 Fire safety 101', locale: 'ja' },
      {},
    );
    expect(text).to.include('防火安全 Fire safety 101');
  });
});
