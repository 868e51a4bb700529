import { expect } from 'chai';
import type { z } from 'zod';
import {
  CustomFont,
  DEFAULT_THEME_CONCEPT,
  PALETTE_KEYS,
  THEME_CONCEPTS,
  THEME_CORNERS,
  THEME_DENSITIES,
  THEME_MODES,
  ThemeInput,
  ThemePatch,
  ThemeTokens,
} from '@lectern/contracts';
import { issuesFromZod } from '@lectern/errors';

/** The spec-shaped issues of a failed parse (empty when it succeeds). */
function issues(
  schema: z.ZodType,
  value: unknown,
): { code: string; path: (string | number)[]; message: string }[] {
  const r = schema.safeParse(value);
  return r.success ? [] : issuesFromZod(r.error.issues);
}

function accepts(schema: z.ZodType, value: unknown): void {
  expect(issues(schema, value), JSON.stringify(value)).to.deep.equal([]);
}

function refuses(schema: z.ZodType, value: unknown, path: (string | number)[]): string {
  const found = issues(schema, value);
  expect(found, JSON.stringify(value)).to.not.deep.equal([]);
  expect(found.map((i) => i.path)).to.deep.include(path);
  return found.map((i) => i.message).join('; ');
}

describe('ThemeTokens', () => {
  it('accepts no tokens at all (every token is optional)', () => {
    accepts(ThemeTokens, {});
  });

  it('has the 7 concepts of SPEC.md, and accepts each', () => {
    expect([...THEME_CONCEPTS]).to.deep.equal([
      'stage',
      'editorial',
      'console',
      'bright',
      'calm',
      'workbench',
      'conversation',
    ]);
    expect(THEME_CONCEPTS).to.include(DEFAULT_THEME_CONCEPT);
    for (const concept of THEME_CONCEPTS) accepts(ThemeTokens, { concept });
  });

  it('refuses an unknown concept, naming the allowed ones', () => {
    expect(refuses(ThemeTokens, { concept: 'neon' }, ['concept'])).to.contain('stage, editorial');
    refuses(ThemeTokens, { concept: 'Stage' }, ['concept']);
  });

  it('accepts each mode, corners and density value and refuses others', () => {
    expect([...THEME_MODES]).to.deep.equal(['light', 'dark', 'auto']);
    for (const mode of THEME_MODES) accepts(ThemeTokens, { mode });
    refuses(ThemeTokens, { mode: 'system' }, ['mode']);

    expect([...THEME_CORNERS]).to.deep.equal(['sharp', 'soft', 'round', 'pill']);
    for (const corners of THEME_CORNERS) accepts(ThemeTokens, { corners });
    refuses(ThemeTokens, { corners: 'rounded' }, ['corners']);
    refuses(ThemeTokens, { corners: 4 }, ['corners']);

    expect([...THEME_DENSITIES]).to.deep.equal(['compact', 'comfortable', 'spacious']);
    for (const density of THEME_DENSITIES) accepts(ThemeTokens, { density });
    refuses(ThemeTokens, { density: 'cozy' }, ['density']);
  });

  it('accepts every palette key in palette and darkPalette', () => {
    const full = Object.fromEntries(PALETTE_KEYS.map((k) => [k, '#123456']));
    expect(PALETTE_KEYS).to.include.members(['primary', 'ink']);
    accepts(ThemeTokens, { palette: full, darkPalette: full });
    accepts(ThemeTokens, { palette: { primary: '#fff' } });
  });

  it('accepts #rgb, #rrggbb and #rrggbbaa in either case', () => {
    for (const colour of ['#abc', '#ABC', '#a1b2c3', '#A1B2C3', '#a1b2c3d4', '#00000000']) {
      accepts(ThemeTokens, { palette: { primary: colour } });
    }
  });

  it('refuses other colour forms', () => {
    for (const colour of [
      'abc',
      '#ab',
      '#abcd',
      '#abcde',
      '#abcdefg',
      '#ggg',
      'red',
      'rgb(0,0,0)',
      '',
      123,
    ]) {
      const msg = refuses(ThemeTokens, { darkPalette: { ink: colour } }, ['darkPalette', 'ink']);
      if (typeof colour === 'string') expect(msg).to.contain('#rrggbb');
    }
  });

  it('refuses an unknown palette key (strict)', () => {
    const msg = refuses(ThemeTokens, { palette: { primary: '#fff', secondary: '#000' } }, ['palette']);
    expect(msg).to.contain('"secondary"').and.contain('allowed: primary');
  });

  it('refuses an unknown token (strict), naming the allowed ones', () => {
    const msg = refuses(ThemeTokens, { concept: 'calm', fontSize: 16 }, []);
    expect(msg).to.contain('"fontSize"').and.contain('readingSize');
  });

  it('readingSize is 12..28 px', () => {
    for (const readingSize of [12, 16, 17.5, 28]) accepts(ThemeTokens, { readingSize });
    for (const readingSize of [11.9, 28.1, 0, -16, '16'])
      refuses(ThemeTokens, { readingSize }, ['readingSize']);
  });

  it('displayFont and fontFamily are 1..100 characters of a font family name', () => {
    accepts(ThemeTokens, { displayFont: 'Playfair Display', fontFamily: 'Inter' });
    accepts(ThemeTokens, { fontFamily: 'x'.repeat(100) });
    refuses(ThemeTokens, { fontFamily: 'x'.repeat(101) }, ['fontFamily']);
    refuses(ThemeTokens, { fontFamily: '' }, ['fontFamily']);
    refuses(ThemeTokens, { fontFamily: '   ' }, ['fontFamily']);
    refuses(ThemeTokens, { displayFont: 'Inter; background: url(x)' }, ['displayFont']);
    refuses(ThemeTokens, { displayFont: 'Inter"}' }, ['displayFont']);
  });

  it('logoUrl must be an absolute http(s) URL', () => {
    accepts(ThemeTokens, { logoUrl: 'https://cdn.example.com/logo.svg' });
    accepts(ThemeTokens, { logoUrl: 'http://localhost:9000/media/logo.png' });
    for (const logoUrl of [
      'logo.png',
      '/media/logo.png',
      'javascript:alert(1)',
      'data:image/png;base64,AAAA',
      'ftp://x.org/a.png',
    ]) {
      refuses(ThemeTokens, { logoUrl }, ['logoUrl']);
    }
  });
});

describe('ThemeInput and ThemePatch', () => {
  it('requires a name of 1..200 characters, trimmed', () => {
    expect(ThemeInput.parse({ name: '  Brand  ' })).to.deep.equal({
      name: 'Brand',
      tokens: {},
      customFonts: [],
    });
    accepts(ThemeInput, { name: 'x'.repeat(200) });
    expect(refuses(ThemeInput, {}, ['name'])).to.contain('required');
    refuses(ThemeInput, { name: '' }, ['name']);
    refuses(ThemeInput, { name: '  ' }, ['name']);
    refuses(ThemeInput, { name: 'x'.repeat(201) }, ['name']);
  });

  it('validates tokens and customFonts, reporting nested paths', () => {
    const value = {
      name: 'Brand',
      tokens: { concept: 'editorial', palette: { primary: '#0b5' } },
      customFonts: [
        { family: 'Brand Sans', url: 'https://cdn.example.com/brand.woff2', weight: 700, style: 'italic' },
      ],
    };
    accepts(ThemeInput, value);
    refuses(ThemeInput, { name: 'B', tokens: { palette: { primary: 'blue' } } }, [
      'tokens',
      'palette',
      'primary',
    ]);
    refuses(ThemeInput, { name: 'B', customFonts: [{ family: 'F', url: 'nope' }] }, [
      'customFonts',
      0,
      'url',
    ]);
    refuses(ThemeInput, { name: 'B', extra: true }, []);
  });

  it('customFonts: family and url required; weight 1..1000 integer; style normal|italic; strict', () => {
    accepts(CustomFont, { family: 'F', url: 'https://e.com/f.woff2' });
    refuses(CustomFont, { url: 'https://e.com/f.woff2' }, ['family']);
    refuses(CustomFont, { family: 'F' }, ['url']);
    refuses(CustomFont, { family: 'F', url: 'https://e.com/f', weight: 0 }, ['weight']);
    refuses(CustomFont, { family: 'F', url: 'https://e.com/f', weight: 1001 }, ['weight']);
    refuses(CustomFont, { family: 'F', url: 'https://e.com/f', weight: 450.5 }, ['weight']);
    accepts(CustomFont, { family: 'F', url: 'https://e.com/f', style: 'normal' });
    refuses(CustomFont, { family: 'F', url: 'https://e.com/f', style: 'oblique' }, ['style']);
    refuses(CustomFont, { family: 'F', url: 'https://e.com/f', format: 'woff2' }, []);
    const many = Array.from({ length: 21 }, () => ({ family: 'F', url: 'https://e.com/f' }));
    refuses(ThemeInput, { name: 'B', customFonts: many }, ['customFonts']);
  });

  it('ThemePatch takes any subset, including nothing, and adds no defaults', () => {
    expect(ThemePatch.parse({})).to.deep.equal({});
    expect(ThemePatch.parse({ tokens: { mode: 'dark' } })).to.deep.equal({ tokens: { mode: 'dark' } });
    refuses(ThemePatch, { name: '' }, ['name']);
    refuses(ThemePatch, { tokens: { mode: 'dim' } }, ['tokens', 'mode']);
    // Read-only fields of a fetched theme are accepted and dropped; any other unknown key is refused.
    expect(
      ThemePatch.parse({ id: 'thm_1', workspaceId: 'ws_1', createdAt: 'x', updatedAt: 'y', name: 'N' }),
    ).to.deep.equal({ name: 'N' });
    refuses(ThemePatch, { nmae: 'x' }, []);
  });
});
