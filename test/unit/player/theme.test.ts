import { expect } from 'chai';
import {
  PALETTE_KEYS,
  THEME_CONCEPTS,
  THEME_CORNERS,
  THEME_DENSITIES,
  THEME_MODES,
} from '@lectern/contracts';
import {
  CONCEPTS,
  CONCEPT_LOOKS,
  CONTRAST_PAIRS,
  CORNERS,
  DENSITIES,
  MODES,
  PALETTE_ROLES,
  contrastRatio,
  isPackagedFile,
  resolveTheme,
  themeCss,
} from '@lectern/player';

describe('player themes', () => {
  it('knows exactly the concepts, modes, corners, densities and palette keys of the contracts', () => {
    expect([...CONCEPTS]).to.deep.equal([...THEME_CONCEPTS]);
    expect([...MODES]).to.deep.equal([...THEME_MODES]);
    expect([...CORNERS]).to.deep.equal([...THEME_CORNERS]);
    expect([...DENSITIES]).to.deep.equal([...THEME_DENSITIES]);
    expect([...PALETTE_ROLES]).to.deep.equal([...PALETTE_KEYS]);
  });

  it('gives every concept a full palette in both modes', () => {
    for (const concept of CONCEPTS) {
      const look = CONCEPT_LOOKS[concept];
      for (const p of [look.palette, look.darkPalette]) {
        expect(Object.keys(p).sort(), concept).to.deep.equal([...PALETTE_ROLES].sort());
        for (const v of Object.values(p)) expect(v, concept).to.match(/^#[0-9a-f]{6}$/i);
      }
    }
  });

  it('makes the seven concepts distinct in palette, type pairing and shape, and two change the arrangement', () => {
    const signatures = CONCEPTS.map((c) => {
      const l = CONCEPT_LOOKS[c];
      return JSON.stringify([l.palette.primary, l.palette.background, l.darkPalette.primary, l.displayFont]);
    });
    expect(new Set(signatures).size).to.equal(7);
    expect(new Set(CONCEPTS.map((c) => CONCEPT_LOOKS[c].palette.primary)).size).to.equal(7);
    expect(new Set(CONCEPTS.map((c) => CONCEPT_LOOKS[c].darkPalette.primary)).size).to.equal(7);
    const arranged = CONCEPTS.filter((c) => CONCEPT_LOOKS[c].arrangement !== 'page');
    expect(arranged).to.deep.equal(['workbench', 'conversation']);
  });

  describe('WCAG 2.2 AA contrast of every concept palette', () => {
    it('computes contrast ratios as WCAG defines them', () => {
      expect(contrastRatio('#000000', '#ffffff')).to.be.closeTo(21, 1e-9);
      expect(contrastRatio('#fff', '#fff')).to.equal(1);
      expect(contrastRatio('#767676', '#ffffff')).to.be.closeTo(4.54, 0.01);
      expect(contrastRatio('#777777', '#ffffff')).to.be.closeTo(4.48, 0.01);
    });
    for (const concept of CONCEPTS) {
      for (const mode of ['light', 'dark'] as const) {
        it(`${concept} ${mode}: text ≥ 4.5:1, outlines and focus ≥ 3:1`, () => {
          const look = CONCEPT_LOOKS[concept];
          const p = mode === 'light' ? look.palette : look.darkPalette;
          const failures = CONTRAST_PAIRS.filter(({ fg, bg, min }) => contrastRatio(p[fg], p[bg]) < min).map(
            ({ fg, bg, min }) => `${fg} on ${bg}: ${contrastRatio(p[fg], p[bg]).toFixed(2)} < ${min}`,
          );
          expect(failures).to.deep.equal([]);
        });
      }
    }
  });

  describe('resolveTheme', () => {
    it('uses stage when there is no theme, with its own mode', () => {
      const t = resolveTheme(null);
      expect(t.concept).to.equal('stage');
      expect(t.mode).to.equal(CONCEPT_LOOKS.stage.mode);
      expect(t.palette).to.deep.equal(CONCEPT_LOOKS.stage.palette);
      expect(t.logoUrl).to.equal(null);
    });

    it('lets every token override its part of the concept', () => {
      const t = resolveTheme({
        tokens: {
          concept: 'editorial',
          mode: 'auto',
          palette: { primary: '#123456', ink: '#000' },
          darkPalette: { background: '#010203' },
          displayFont: 'Acme Serif',
          fontFamily: 'Inter',
          readingSize: 21,
          corners: 'pill',
          density: 'compact',
          logoUrl: 'https://cdn.example/logo.svg',
        },
      });
      expect(t.concept).to.equal('editorial');
      expect(t.mode).to.equal('auto');
      expect(t.palette.primary).to.equal('#123456');
      expect(t.palette.ink).to.equal('#000');
      expect(t.palette.accent).to.equal(CONCEPT_LOOKS.editorial.palette.accent);
      expect(t.darkPalette.background).to.equal('#010203');
      expect(t.darkPalette.primary).to.equal(CONCEPT_LOOKS.editorial.darkPalette.primary);
      expect(t.displayFont.startsWith('"Acme Serif", ')).to.equal(true);
      expect(t.fontFamily.startsWith('"Inter", ')).to.equal(true);
      expect(t.readingSize).to.equal(21);
      expect(t.corners).to.equal('pill');
      expect(t.density).to.equal('compact');
      expect(t.logoUrl).to.equal('https://cdn.example/logo.svg');
    });

    it('keeps the concept value for malformed tokens instead of writing them into CSS', () => {
      const t = resolveTheme({
        tokens: {
          concept: 'neon',
          mode: 'sepia',
          palette: { primary: 'red', ink: '#12345', onPrimary: 'url(x)' },
          displayFont: 'x;}body{display:none',
          readingSize: 99,
          corners: 'blob',
          density: 7,
          logoUrl: 'javascript:alert(1)',
        },
      });
      expect(t.concept).to.equal('stage');
      expect(t.mode).to.equal(CONCEPT_LOOKS.stage.mode);
      expect(t.palette).to.deep.equal(CONCEPT_LOOKS.stage.palette);
      expect(t.displayFont).to.not.match(/[;{}]/);
      expect(t.readingSize).to.equal(CONCEPT_LOOKS.stage.readingSize);
      expect(t.corners).to.equal(CONCEPT_LOOKS.stage.corners);
      expect(t.density).to.equal(CONCEPT_LOOKS.stage.density);
      expect(t.logoUrl).to.equal(null);
    });

    it('loads theme and course custom fonts with @font-face, dropping unusable ones', () => {
      const t = resolveTheme(
        {
          tokens: { mode: 'light' },
          customFonts: [
            { family: 'Acme Serif', url: 'https://cdn.example/a.woff2', weight: 700 },
            { family: 'Bad', url: 'ftp://x/y.woff2' },
            { family: '"}', url: 'https://cdn.example/b.woff2' },
          ],
        },
        [{ family: 'Course Sans', url: 'https://cdn.example/c.woff2', style: 'italic' }],
      );
      expect(t.fonts.map((f) => f.family)).to.deep.equal(['Acme Serif', 'Course Sans']);
      const css = themeCss(t);
      expect(css).to.contain(
        '@font-face{font-family:"Acme Serif";src:url("https://cdn.example/a.woff2");font-weight:700',
      );
      expect(css).to.contain('font-family:"Course Sans"');
      expect(css).to.contain('font-style:italic');
    });

    it("takes a SCORM package's own fonts/ and media/ files, and no other relative URL", () => {
      const t = resolveTheme(
        {
          tokens: { logoUrl: 'media/0123456789abcdef.gif' },
          customFonts: [
            { family: 'Packed', url: 'fonts/0123456789abcdef.woff2' },
            { family: 'Up', url: '../fonts/0123456789abcdef.woff2' },
            { family: 'Other', url: 'assets/0123456789abcdef.woff2' },
          ],
        },
        [{ family: 'Course', url: 'fonts/fedcba9876543210.ttf' }],
      );
      expect(t.logoUrl).to.equal('media/0123456789abcdef.gif');
      expect(t.fonts.map((f) => [f.family, f.url])).to.deep.equal([
        ['Packed', 'fonts/0123456789abcdef.woff2'],
        ['Course', 'fonts/fedcba9876543210.ttf'],
      ]);
      expect(themeCss(t)).to.contain('src:url("fonts/0123456789abcdef.woff2")');
      for (const v of ['media/0123456789abcdef.png', 'fonts/0123456789abcdef.woff2'])
        expect(isPackagedFile(v), v).to.equal(true);
      for (const v of [
        'media/0123456789ABCDEF.png',
        'media/0123.png',
        '/media/0123456789abcdef.png',
        'media/0123456789abcdef.png?x',
        'media/0123456789abcdef.png/../../x',
        'javascript:media/0123456789abcdef.png',
        'other/0123456789abcdef.png',
        null,
      ])
        expect(isPackagedFile(v), String(v)).to.equal(false);
    });

    it('writes one palette for light and dark, and both behind prefers-color-scheme for auto', () => {
      const light = themeCss(resolveTheme({ tokens: { concept: 'calm', mode: 'light' } }));
      const dark = themeCss(resolveTheme({ tokens: { concept: 'calm', mode: 'dark' } }));
      const auto = themeCss(resolveTheme({ tokens: { concept: 'calm', mode: 'auto' } }));
      expect(light).to.contain(`--lp-primary:${CONCEPT_LOOKS.calm.palette.primary}`);
      expect(light).to.not.contain(CONCEPT_LOOKS.calm.darkPalette.primary);
      expect(dark).to.contain(`--lp-primary:${CONCEPT_LOOKS.calm.darkPalette.primary}`);
      expect(dark).to.contain('color-scheme:dark');
      expect(auto).to.match(
        /--lp-primary:#3c6e5f.*@media \(prefers-color-scheme: dark\)\{.*--lp-primary:#8fc5b1/,
      );
      for (const role of PALETTE_ROLES) {
        expect(light).to.match(new RegExp(`--lp-${role.replace(/[A-Z]/g, (c) => '-' + c.toLowerCase())}:#`));
      }
    });

    it('maps corners and density to radii and spacing', () => {
      const sharp = themeCss(resolveTheme({ tokens: { corners: 'sharp', density: 'compact' } }));
      const pill = themeCss(resolveTheme({ tokens: { corners: 'pill', density: 'spacious' } }));
      expect(sharp).to.contain('--lp-radius:0px;--lp-radius-control:0px;--lp-space:0.7rem');
      expect(pill).to.contain('--lp-radius-control:999px;--lp-space:1.35rem');
    });
  });
});
