import { expect } from 'chai';
import type { z } from 'zod';
import {
  CERTIFICATE_BORDER_STYLES,
  CERTIFICATE_CORNERS,
  CERTIFICATE_DEFAULTS,
  CERTIFICATE_ELEMENTS,
  CERTIFICATE_LAYOUTS,
  CERTIFICATE_ORIENTATIONS,
  CERTIFICATE_TEXT_LIMITS,
  CertificateTemplateInput,
  CertificateTemplatePatch,
  CertificateTokens,
  resolveCertificateTokens,
} from '@lectern/contracts';
import { issuesFromZod } from '@lectern/errors';

function issues(
  schema: z.ZodType,
  value: unknown,
): { code: string; path: (string | number)[]; message: string }[] {
  const r = schema.safeParse(value);
  return r.success ? [] : issuesFromZod(r.error.issues);
}

function accepts(value: unknown, schema: z.ZodType = CertificateTokens): void {
  expect(issues(schema, value), JSON.stringify(value)).to.deep.equal([]);
}

function refuses(value: unknown, path: (string | number)[], schema: z.ZodType = CertificateTokens): string {
  const found = issues(schema, value);
  expect(found, JSON.stringify(value)).to.not.deep.equal([]);
  expect(found.map((i) => i.path)).to.deep.include(path);
  return found.map((i) => i.message).join('; ');
}

describe('CertificateTokens', () => {
  it('accepts no tokens (the built-in design), and the full defaults object', () => {
    accepts({});
    accepts(CERTIFICATE_DEFAULTS);
  });

  it('layout: centred, left, minimal, sealed', () => {
    expect([...CERTIFICATE_LAYOUTS]).to.deep.equal(['centred', 'left', 'minimal', 'sealed']);
    for (const layout of CERTIFICATE_LAYOUTS) accepts({ layout });
    expect(refuses({ layout: 'centered' }, ['layout'])).to.contain('centred');
  });

  it('orientation: landscape, portrait', () => {
    expect([...CERTIFICATE_ORIENTATIONS]).to.deep.equal(['landscape', 'portrait']);
    for (const orientation of CERTIFICATE_ORIENTATIONS) accepts({ orientation });
    refuses({ orientation: 'square' }, ['orientation']);
  });

  it('borderStyle: double plus none, thin, thick, dashed, ornate', () => {
    expect(CERTIFICATE_BORDER_STYLES).to.include('double');
    expect([...CERTIFICATE_BORDER_STYLES].sort()).to.deep.equal([
      'dashed',
      'double',
      'none',
      'ornate',
      'thick',
      'thin',
    ]);
    for (const borderStyle of CERTIFICATE_BORDER_STYLES) accepts({ borderStyle });
    refuses({ borderStyle: 'dotted' }, ['borderStyle']);
  });

  it('qrCorner and sealCorner: topStart, topEnd, bottomStart, bottomEnd', () => {
    expect([...CERTIFICATE_CORNERS]).to.deep.equal(['topStart', 'topEnd', 'bottomStart', 'bottomEnd']);
    for (const qrCorner of CERTIFICATE_CORNERS) {
      const sealCorner = qrCorner === 'topStart' ? 'topEnd' : 'topStart';
      accepts({ qrCorner, sealCorner });
    }
    refuses({ qrCorner: 'topLeft' }, ['qrCorner']);
    refuses({ sealCorner: 'bottom-end' }, ['sealCorner']);
  });

  it('refuses QR and seal in the same corner outside freeform, only when both were set', () => {
    expect(refuses({ qrCorner: 'topEnd', sealCorner: 'topEnd' }, ['sealCorner'])).to.contain(
      'different corners',
    );
    // One corner set onto the other's default: accepted, and the unset one moves to the set one's default.
    accepts({ sealCorner: CERTIFICATE_DEFAULTS.qrCorner });
    accepts({ qrCorner: CERTIFICATE_DEFAULTS.sealCorner });
    expect(resolveCertificateTokens({ sealCorner: CERTIFICATE_DEFAULTS.qrCorner })).to.include({
      sealCorner: CERTIFICATE_DEFAULTS.qrCorner,
      qrCorner: CERTIFICATE_DEFAULTS.sealCorner,
    });
    expect(resolveCertificateTokens({ qrCorner: CERTIFICATE_DEFAULTS.sealCorner })).to.include({
      qrCorner: CERTIFICATE_DEFAULTS.sealCorner,
      sealCorner: CERTIFICATE_DEFAULTS.qrCorner,
    });
    expect(resolveCertificateTokens({ qrCorner: 'topStart' })).to.include({
      qrCorner: 'topStart',
      sealCorner: CERTIFICATE_DEFAULTS.sealCorner,
    });
    accepts({ qrCorner: 'topEnd', sealCorner: 'topEnd', freeform: true });
    accepts({ qrCorner: 'topEnd', sealCorner: 'topEnd', showQr: false });
  });

  it('booleans are booleans', () => {
    for (const key of ['showScore', 'showDate', 'showQr', 'freeform']) {
      accepts({ [key]: true });
      accepts({ [key]: false });
      refuses({ [key]: 'true' }, [key]);
      refuses({ [key]: 1 }, [key]);
    }
  });

  it('text tokens accept the empty string and refuse more than their maximum length', () => {
    for (const [key, max] of Object.entries(CERTIFICATE_TEXT_LIMITS)) {
      accepts({ [key]: '' });
      accepts({ [key]: 'x'.repeat(max) });
      expect(refuses({ [key]: 'x'.repeat(max + 1) }, [key])).to.contain(`at most ${max}`);
      refuses({ [key]: 42 }, [key]);
    }
  });

  it('accentColor is a hex colour', () => {
    for (const accentColor of ['#b08d57', '#FFF', '#11223344']) accepts({ accentColor });
    for (const accentColor of ['gold', 'b08d57', '#12345', '#1234567'])
      refuses({ accentColor }, ['accentColor']);
  });

  it('logoUrl: only the URL shape is checked (the image type is checked when it is fetched)', () => {
    for (const logoUrl of [
      'https://cdn.example.com/logo.png',
      'https://cdn.example.com/logo.jpeg?v=3#x',
      'http://localhost:9000/media/ws_1/seal%20final.jpg',
      // A signed CDN URL of a PNG often has no extension.
      'https://cdn.example.com/logo',
      'https://cdn.example.com/a/8f2c1a?X-Amz-Signature=abc&X-Amz-Expires=600',
    ]) {
      accepts({ logoUrl });
    }
    refuses({ logoUrl: 'logo.png' }, ['logoUrl']);
    refuses({ logoUrl: 'ftp://cdn.example.com/logo.png' }, ['logoUrl']);
    refuses({ logoUrl: `https://cdn.example.com/${'x'.repeat(2048)}.png` }, ['logoUrl']);
  });

  it('order: unique elements from the fixed set, at least one', () => {
    accepts({ order: ['name', 'course'] });
    accepts({ order: [...CERTIFICATE_ELEMENTS].reverse() });
    refuses({ order: ['name', 'photo'] }, ['order', 1]);
    expect(refuses({ order: ['name', 'course', 'name'] }, ['order', 2])).to.contain('more than once');
    refuses({ order: [] }, ['order']);
    refuses({ order: 'name' }, ['order']);
  });

  it('positions: x, y in 0..1 and w in (0, 1], for name, course, seal, qr', () => {
    accepts({
      freeform: true,
      positions: {
        name: { x: 0.5, y: 0.4, w: 0.8 },
        course: { x: 0, y: 1, w: 1 },
        seal: { x: 1, y: 0, w: 0.01 },
        qr: { x: 0.9, y: 0.9, w: 0.1 },
      },
    });
    accepts({ positions: { qr: { x: 0.5, y: 0.5, w: 0.2 } } });
    refuses({ positions: { name: { x: -0.01, y: 0, w: 0.5 } } }, ['positions', 'name', 'x']);
    refuses({ positions: { name: { x: 1.01, y: 0, w: 0.5 } } }, ['positions', 'name', 'x']);
    refuses({ positions: { course: { x: 0.5, y: 1.5, w: 0.5 } } }, ['positions', 'course', 'y']);
    refuses({ positions: { seal: { x: 0.5, y: 0.5, w: 0 } } }, ['positions', 'seal', 'w']);
    refuses({ positions: { qr: { x: 0.5, y: 0.5, w: 1.2 } } }, ['positions', 'qr', 'w']);
    refuses({ positions: { qr: { x: 0.5, y: 0.5 } } }, ['positions', 'qr', 'w']);
    refuses({ positions: { qr: { x: '0.5', y: 0.5, w: 0.1 } } }, ['positions', 'qr', 'x']);
    refuses({ positions: { qr: { x: 0.5, y: 0.5, w: 0.1, h: 0.1 } } }, ['positions', 'qr']);
    refuses({ positions: { logo: { x: 0.5, y: 0.5, w: 0.1 } } }, ['positions']);
  });

  it('refuses an unknown token (strict), naming the allowed ones', () => {
    const msg = refuses({ layout: 'left', colour: '#fff' }, []);
    expect(msg).to.contain('"colour"').and.contain('accentColor');
  });
});

describe('CERTIFICATE_DEFAULTS and resolveCertificateTokens', () => {
  it('defaults: double border, landscape, centred, QR shown, every element in order', () => {
    expect(CERTIFICATE_DEFAULTS).to.deep.include({
      borderStyle: 'double',
      orientation: 'landscape',
      layout: 'centred',
      showQr: true,
      freeform: false,
      issuerName: '',
    });
    expect(CERTIFICATE_DEFAULTS.order).to.deep.equal([...CERTIFICATE_ELEMENTS]);
    expect(CERTIFICATE_DEFAULTS.qrCorner).to.not.equal(CERTIFICATE_DEFAULTS.sealCorner);
    expect(Object.isFrozen(CERTIFICATE_DEFAULTS)).to.equal(true);
  });

  it('fills every omitted token from the defaults; no logo by default', () => {
    const resolved = resolveCertificateTokens({});
    expect(resolved).to.deep.equal({
      ...CERTIFICATE_DEFAULTS,
      order: [...CERTIFICATE_ELEMENTS],
      logoUrl: null,
    });
  });

  it('keeps given tokens, merges positions per element, and appends elements order leaves out', () => {
    const resolved = resolveCertificateTokens({
      layout: 'sealed',
      logoUrl: 'https://e.com/l.png',
      order: ['course', 'name'],
      positions: { qr: { x: 0.1, y: 0.1, w: 0.1 } },
    });
    expect(resolved.layout).to.equal('sealed');
    expect(resolved.logoUrl).to.equal('https://e.com/l.png');
    expect(resolved.order).to.deep.equal([
      'course',
      'name',
      'logo',
      'issuer',
      'eyebrow',
      'body',
      'score',
      'date',
      'signature',
    ]);
    expect(resolved.positions.qr).to.deep.equal({ x: 0.1, y: 0.1, w: 0.1 });
    expect(resolved.positions.name).to.deep.equal(CERTIFICATE_DEFAULTS.positions.name);
  });
});

describe('CertificateTemplateInput and CertificateTemplatePatch', () => {
  it('requires a name; tokens default to {}', () => {
    expect(CertificateTemplateInput.parse({ name: ' Gold ' })).to.deep.equal({ name: 'Gold', tokens: {} });
    refuses({}, ['name'], CertificateTemplateInput);
    refuses({ name: 'x'.repeat(201) }, ['name'], CertificateTemplateInput);
    refuses({ name: 'G', tokens: { layout: 'wide' } }, ['tokens', 'layout'], CertificateTemplateInput);
    refuses({ name: 'G', customFonts: [] }, [], CertificateTemplateInput);
  });

  it('patch: any subset; tokens, when sent, are validated as a whole design', () => {
    expect(CertificateTemplatePatch.parse({})).to.deep.equal({});
    expect(CertificateTemplatePatch.parse({ tokens: { showScore: true } })).to.deep.equal({
      tokens: { showScore: true },
    });
    refuses(
      { tokens: { qrCorner: 'bottomEnd', sealCorner: 'bottomEnd' } },
      ['tokens', 'sealCorner'],
      CertificateTemplatePatch,
    );
  });
});
