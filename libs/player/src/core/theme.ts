/**
 * The seven theme concepts and how theme tokens override them (docs/design-tokens.md, docs/player.md).
 *
 * The lists below repeat the ones in @lectern/contracts on purpose: this file is bundled into the browser
 * player, and the contracts carry zod. A unit test keeps the two in step.
 */
import type { CustomFont, PlayerTheme } from './types.js';

export const CONCEPTS = [
  'stage',
  'editorial',
  'console',
  'bright',
  'calm',
  'workbench',
  'conversation',
] as const;
export type Concept = (typeof CONCEPTS)[number];
export const MODES = ['light', 'dark', 'auto'] as const;
export type Mode = (typeof MODES)[number];
export const CORNERS = ['sharp', 'soft', 'round', 'pill'] as const;
export type Corners = (typeof CORNERS)[number];
export const DENSITIES = ['compact', 'comfortable', 'spacious'] as const;
export type Density = (typeof DENSITIES)[number];

export const PALETTE_ROLES = [
  'primary',
  'onPrimary',
  'accent',
  'onAccent',
  'ink',
  'inkMuted',
  'background',
  'surface',
  'surfaceAlt',
  'border',
  'success',
  'warning',
  'danger',
  'focus',
] as const;
export type PaletteRole = (typeof PALETTE_ROLES)[number];
export type FullPalette = Record<PaletteRole, string>;

/**
 * How a concept arranges the screen. Two concepts change the arrangement: `workbench` keeps the Contents
 * open as a side panel beside the screen, `conversation` lays the blocks out as a chat thread.
 */
export type Arrangement = 'page' | 'panel' | 'thread';

export interface ConceptLook {
  mode: 'light' | 'dark';
  palette: FullPalette;
  darkPalette: FullPalette;
  displayFont: string;
  fontFamily: string;
  /** Weight of headings: part of the type pairing. */
  displayWeight: number;
  readingSize: number;
  corners: Corners;
  density: Density;
  arrangement: Arrangement;
}

const SANS = 'system-ui, -apple-system, "Segoe UI", Roboto, "Noto Sans", "Helvetica Neue", Arial, sans-serif';
const SERIF =
  'Charter, "Bitstream Charter", "Iowan Old Style", Georgia, "Noto Serif", "Times New Roman", serif';
const MONO =
  'ui-monospace, "SFMono-Regular", Menlo, Consolas, "DejaVu Sans Mono", "Liberation Mono", monospace';

/**
 * Every palette here passes WCAG 2.2 AA for the pairs the player draws (test/unit/player/contrast.test.ts):
 * text ≥ 4.5:1, component outlines and the focus ring ≥ 3:1.
 */
export const CONCEPT_LOOKS: Record<Concept, ConceptLook> = {
  stage: {
    mode: 'dark',
    palette: {
      primary: '#5b2bd6',
      onPrimary: '#ffffff',
      accent: '#a4266a',
      onAccent: '#ffffff',
      ink: '#1b1a1f',
      inkMuted: '#55525c',
      background: '#f4f1ec',
      surface: '#ffffff',
      surfaceAlt: '#ece7df',
      border: '#857f8f',
      success: '#1b7a3a',
      warning: '#8f5400',
      danger: '#b3261e',
      focus: '#5b2bd6',
    },
    darkPalette: {
      primary: '#b69cff',
      onPrimary: '#1a0f3a',
      accent: '#ff8cc6',
      onAccent: '#3a0a22',
      ink: '#f3f1f7',
      inkMuted: '#bdb8c8',
      background: '#121117',
      surface: '#1d1b24',
      surfaceAlt: '#29262f',
      border: '#8c8699',
      success: '#6fdc8c',
      warning: '#ffc35c',
      danger: '#ff8a80',
      focus: '#ffd166',
    },
    displayFont: '"Avenir Next", "Segoe UI", ' + SANS,
    fontFamily: SANS,
    displayWeight: 800,
    readingSize: 19,
    corners: 'round',
    density: 'spacious',
    arrangement: 'page',
  },
  editorial: {
    mode: 'light',
    palette: {
      primary: '#8b1e1e',
      onPrimary: '#ffffff',
      accent: '#1f4e79',
      onAccent: '#ffffff',
      ink: '#1f1b16',
      inkMuted: '#5c544a',
      background: '#faf7f0',
      surface: '#fffdf8',
      surfaceAlt: '#f1ebdd',
      border: '#8c8373',
      success: '#2e6b34',
      warning: '#835500',
      danger: '#a11d1d',
      focus: '#1f4e79',
    },
    darkPalette: {
      primary: '#f0a89a',
      onPrimary: '#2a0b06',
      accent: '#9cc3e8',
      onAccent: '#0d2236',
      ink: '#efe9dc',
      inkMuted: '#bdb3a1',
      background: '#16140f',
      surface: '#1e1b15',
      surfaceAlt: '#2a261e',
      border: '#8a816f',
      success: '#8fd19e',
      warning: '#e8bf6a',
      danger: '#f28b82',
      focus: '#9cc3e8',
    },
    displayFont: 'Didot, "Bodoni 72", "Playfair Display", Georgia, "Noto Serif", serif',
    fontFamily: SERIF,
    displayWeight: 700,
    readingSize: 20,
    corners: 'sharp',
    density: 'comfortable',
    arrangement: 'page',
  },
  console: {
    mode: 'dark',
    palette: {
      primary: '#0b6e4f',
      onPrimary: '#ffffff',
      accent: '#005f87',
      onAccent: '#ffffff',
      ink: '#0f1a14',
      inkMuted: '#4a5a50',
      background: '#f5f7f5',
      surface: '#ffffff',
      surfaceAlt: '#e9eeea',
      border: '#7a8980',
      success: '#0b6e2f',
      warning: '#855000',
      danger: '#b00020',
      focus: '#005f87',
    },
    darkPalette: {
      primary: '#3ddc97',
      onPrimary: '#04140c',
      accent: '#5fd7ff',
      onAccent: '#001a24',
      ink: '#d7f5e3',
      inkMuted: '#93b8a4',
      background: '#0b0f0d',
      surface: '#111814',
      surfaceAlt: '#18211c',
      border: '#5f7d6d',
      success: '#3ddc97',
      warning: '#ffcb6b',
      danger: '#ff7b7b',
      focus: '#ffcb6b',
    },
    displayFont: MONO,
    fontFamily: MONO,
    displayWeight: 700,
    readingSize: 16,
    corners: 'sharp',
    density: 'compact',
    arrangement: 'page',
  },
  bright: {
    mode: 'light',
    palette: {
      primary: '#c8105a',
      onPrimary: '#ffffff',
      accent: '#0052cc',
      onAccent: '#ffffff',
      ink: '#1a1440',
      inkMuted: '#4b4470',
      background: '#fff8e7',
      surface: '#ffffff',
      surfaceAlt: '#fff0c2',
      border: '#7c7799',
      success: '#107c3c',
      warning: '#8a4b00',
      danger: '#c1121f',
      focus: '#0052cc',
    },
    darkPalette: {
      primary: '#ff7aa8',
      onPrimary: '#2b0014',
      accent: '#7cc4ff',
      onAccent: '#001c38',
      ink: '#fff7e6',
      inkMuted: '#d3cbf2',
      background: '#160f33',
      surface: '#221a4a',
      surfaceAlt: '#2d2460',
      border: '#9087c8',
      success: '#6ee7a0',
      warning: '#ffd166',
      danger: '#ff9aa9',
      focus: '#ffd166',
    },
    displayFont: '"Trebuchet MS", "Avenir Next Rounded", Nunito, "Arial Rounded MT Bold", ' + SANS,
    fontFamily: SANS,
    displayWeight: 900,
    readingSize: 18,
    corners: 'pill',
    density: 'comfortable',
    arrangement: 'page',
  },
  calm: {
    mode: 'light',
    palette: {
      primary: '#3c6e5f',
      onPrimary: '#ffffff',
      accent: '#4a6285',
      onAccent: '#ffffff',
      ink: '#22302b',
      inkMuted: '#52615b',
      background: '#f3f6f4',
      surface: '#fbfcfb',
      surfaceAlt: '#e6eeea',
      border: '#84968e',
      success: '#2f6b45',
      warning: '#775611',
      danger: '#a33b3b',
      focus: '#4a6285',
    },
    darkPalette: {
      primary: '#8fc5b1',
      onPrimary: '#0d201a',
      accent: '#a9bde0',
      onAccent: '#142033',
      ink: '#e4ece8',
      inkMuted: '#a9b8b1',
      background: '#141a18',
      surface: '#1b2320',
      surfaceAlt: '#232d29',
      border: '#74877f',
      success: '#93cfa5',
      warning: '#e0c27a',
      danger: '#eb9c9c',
      focus: '#a9bde0',
    },
    displayFont: 'Optima, Candara, "Noto Sans", "Segoe UI", ' + SANS,
    fontFamily: 'Seravek, "Gill Sans Nova", Ubuntu, Calibri, "DejaVu Sans", ' + SANS,
    displayWeight: 500,
    readingSize: 18,
    corners: 'soft',
    density: 'spacious',
    arrangement: 'page',
  },
  workbench: {
    mode: 'light',
    palette: {
      primary: '#1f5fbf',
      onPrimary: '#ffffff',
      accent: '#6b3fa0',
      onAccent: '#ffffff',
      ink: '#16191d',
      inkMuted: '#525a66',
      background: '#eef0f3',
      surface: '#ffffff',
      surfaceAlt: '#f4f5f7',
      border: '#838b97',
      success: '#1c6e3d',
      warning: '#8a5100',
      danger: '#b42318',
      focus: '#1f5fbf',
    },
    darkPalette: {
      primary: '#7fb0ff',
      onPrimary: '#0a1a33',
      accent: '#c4a5f2',
      onAccent: '#1f0f36',
      ink: '#e6e9ee',
      inkMuted: '#a7afbc',
      background: '#0f1115',
      surface: '#171a20',
      surfaceAlt: '#1f232b',
      border: '#6f7785',
      success: '#7ad49b',
      warning: '#f0b85a',
      danger: '#ff8f85',
      focus: '#7fb0ff',
    },
    displayFont: SANS,
    fontFamily: SANS,
    displayWeight: 600,
    readingSize: 16,
    corners: 'soft',
    density: 'compact',
    arrangement: 'panel',
  },
  conversation: {
    mode: 'light',
    palette: {
      primary: '#0a66c2',
      onPrimary: '#ffffff',
      accent: '#0b7a75',
      onAccent: '#ffffff',
      ink: '#15191f',
      inkMuted: '#515a6a',
      background: '#eef1f6',
      surface: '#ffffff',
      surfaceAlt: '#e6ebf3',
      border: '#838ea0',
      success: '#1b7a43',
      warning: '#8a5300',
      danger: '#b42318',
      focus: '#0a66c2',
    },
    darkPalette: {
      primary: '#6aa9ff',
      onPrimary: '#06162d',
      accent: '#5fd4cc',
      onAccent: '#04211f',
      ink: '#e8ecf3',
      inkMuted: '#a9b2c2',
      background: '#0d1017',
      surface: '#161b24',
      surfaceAlt: '#222a38',
      border: '#6f7a8e',
      success: '#79d6a0',
      warning: '#f1bd61',
      danger: '#ff9187',
      focus: '#6aa9ff',
    },
    displayFont: '"SF Pro Rounded", "Segoe UI Variable Display", ' + SANS,
    fontFamily: SANS,
    displayWeight: 700,
    readingSize: 17,
    corners: 'round',
    density: 'comfortable',
    arrangement: 'thread',
  },
};

/** Radius of cards and of controls, in px (`pill` rounds controls fully). */
export const CORNER_RADII: Record<Corners, { card: number; control: number }> = {
  sharp: { card: 0, control: 0 },
  soft: { card: 6, control: 4 },
  round: { card: 16, control: 10 },
  pill: { card: 22, control: 999 },
};

/** Spacing unit in rem: the gap between blocks is 2 units, padding inside a block 1.25. */
export const DENSITY_SPACE: Record<Density, number> = { compact: 0.7, comfortable: 1, spacious: 1.35 };

export interface ResolvedTheme {
  concept: Concept;
  mode: Mode;
  palette: FullPalette;
  darkPalette: FullPalette;
  displayFont: string;
  fontFamily: string;
  displayWeight: number;
  readingSize: number;
  corners: Corners;
  density: Density;
  arrangement: Arrangement;
  logoUrl: string | null;
  fonts: CustomFont[];
}

const HEX = /^#(?:[0-9a-f]{3}|[0-9a-f]{6}|[0-9a-f]{8})$/i;
/** Characters that could end a CSS declaration or a quoted name; the API refuses them, the player drops them. */
const UNSAFE_FONT = /[;{}<>"'\\\u0000-\u001f\u007f]/g;

const oneOf = <T extends string>(list: readonly T[], v: unknown): T | undefined =>
  typeof v === 'string' && (list as readonly string[]).includes(v) ? (v as T) : undefined;

export const isHttpUrl = (v: unknown): v is string => typeof v === 'string' && /^https?:\/\/[^\s]+$/i.test(v);
/**
 * A file a SCORM package carries (`fonts/<sha256-16>.<ext>`, `media/<sha256-16>.<ext>`), relative to the page at
 * the package root. Only that exact shape: a relative URL of any other form is still not loaded.
 */
export const isPackagedFile = (v: unknown): v is string =>
  typeof v === 'string' && /^(?:fonts|media)\/[0-9a-f]{16}\.[a-z0-9]{2,5}$/.test(v);
const isFileUrl = (v: unknown): v is string => isHttpUrl(v) || isPackagedFile(v);

function fontName(v: unknown): string | undefined {
  if (typeof v !== 'string') return undefined;
  const clean = v.replace(UNSAFE_FONT, '').trim();
  return clean === '' ? undefined : clean;
}

function overlay(base: FullPalette, over: unknown): FullPalette {
  const out = { ...base };
  if (typeof over !== 'object' || over === null) return out;
  for (const role of PALETTE_ROLES) {
    const v = (over as Record<string, unknown>)[role];
    if (typeof v === 'string' && HEX.test(v)) out[role] = v;
  }
  return out;
}

function fontsOf(list: unknown): CustomFont[] {
  if (!Array.isArray(list)) return [];
  const out: CustomFont[] = [];
  for (const f of list) {
    if (typeof f !== 'object' || f === null) continue;
    const r = f as Record<string, unknown>;
    const family = fontName(r.family);
    if (family === undefined || !isFileUrl(r.url)) continue;
    const weight =
      typeof r.weight === 'number' && r.weight >= 1 && r.weight <= 1000 ? Math.round(r.weight) : 400;
    out.push({ family, url: r.url, weight, style: r.style === 'italic' ? 'italic' : 'normal' });
  }
  return out;
}

/**
 * Theme tokens → the complete look the player draws. Every token is optional and an omitted or malformed
 * one keeps the concept's value (the API validates on write; the player still never trusts a value into CSS).
 */
export function resolveTheme(theme: PlayerTheme | null | undefined, courseFonts?: unknown): ResolvedTheme {
  const t = (theme?.tokens ?? {}) as Record<string, unknown>;
  const concept = oneOf(CONCEPTS, t.concept) ?? 'stage';
  const look = CONCEPT_LOOKS[concept];
  const size =
    typeof t.readingSize === 'number' && t.readingSize >= 12 && t.readingSize <= 28 ? t.readingSize : null;
  const displayFont = fontName(t.displayFont);
  const fontFamily = fontName(t.fontFamily);
  return {
    concept,
    mode: oneOf(MODES, t.mode) ?? look.mode,
    palette: overlay(look.palette, t.palette),
    darkPalette: overlay(look.darkPalette, t.darkPalette),
    // A named family first, then the concept's stack as the fallback while it loads or if it is missing.
    displayFont: displayFont !== undefined ? `"${displayFont}", ${look.displayFont}` : look.displayFont,
    fontFamily: fontFamily !== undefined ? `"${fontFamily}", ${look.fontFamily}` : look.fontFamily,
    displayWeight: look.displayWeight,
    readingSize: size ?? look.readingSize,
    corners: oneOf(CORNERS, t.corners) ?? look.corners,
    density: oneOf(DENSITIES, t.density) ?? look.density,
    arrangement: look.arrangement,
    logoUrl: isFileUrl(t.logoUrl) ? t.logoUrl : null,
    fonts: [...fontsOf(theme?.customFonts), ...fontsOf(courseFonts)],
  };
}

const kebab = (role: string) => role.replace(/[A-Z]/g, (c) => '-' + c.toLowerCase());

function paletteVars(p: FullPalette, scheme: 'light' | 'dark'): string {
  return PALETTE_ROLES.map((r) => `--lp-${kebab(r)}:${p[r]};`).join('') + `color-scheme:${scheme};`;
}

/**
 * The style sheet a theme adds on top of the player's CSS: palette variables (both palettes and a
 * `prefers-color-scheme` switch for `auto`), type, size, corners, density and @font-face for custom fonts.
 * `scope` is the selector of the player's root element.
 */
export function themeCss(theme: ResolvedTheme, scope = '.lp'): string {
  const r = CORNER_RADII[theme.corners];
  const base =
    `${scope}{--lp-display:${theme.displayFont};--lp-body:${theme.fontFamily};` +
    `--lp-display-weight:${theme.displayWeight};--lp-size:${theme.readingSize}px;` +
    `--lp-radius:${r.card}px;--lp-radius-control:${r.control}px;--lp-space:${DENSITY_SPACE[theme.density]}rem;}`;
  const light = `${scope}{${paletteVars(theme.palette, 'light')}}`;
  const dark = `${scope}{${paletteVars(theme.darkPalette, 'dark')}}`;
  const colours =
    theme.mode === 'light'
      ? light
      : theme.mode === 'dark'
        ? dark
        : `${light}@media (prefers-color-scheme: dark){${dark}}`;
  const faces = theme.fonts
    .map(
      (f) =>
        `@font-face{font-family:"${f.family}";src:url("${encodeURI(f.url).replace(/"/g, '%22')}");` +
        `font-weight:${f.weight ?? 400};font-style:${f.style ?? 'normal'};font-display:swap;}`,
    )
    .join('');
  return faces + base + colours;
}

// ------------------------------------------------------------------ contrast (WCAG 2.2, 1.4.3 / 1.4.11)

function channels(hex: string): [number, number, number] {
  let h = hex.slice(1);
  if (h.length === 3) h = [...h].map((c) => c + c).join('');
  return [0, 2, 4].map((i) => parseInt(h.slice(i, i + 2), 16)) as [number, number, number];
}

/** Relative luminance as WCAG defines it (sRGB). */
export function luminance(hex: string): number {
  const [r, g, b] = channels(hex).map((c) => {
    const s = c / 255;
    return s <= 0.04045 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
  });
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
}

/** Contrast ratio between two opaque hex colours, 1–21. */
export function contrastRatio(a: string, b: string): number {
  const [hi, lo] = [luminance(a), luminance(b)].sort((x, y) => y - x);
  return (hi + 0.05) / (lo + 0.05);
}

/**
 * The colour pairs the player draws and the ratio each needs: text 4.5:1 (1.4.3), outlines of controls and
 * the focus ring 3:1 (1.4.11). Status colours are used as text (feedback, the timer), so they need 4.5.
 */
export const CONTRAST_PAIRS: { fg: PaletteRole; bg: PaletteRole; min: number }[] = [
  { fg: 'ink', bg: 'background', min: 4.5 },
  { fg: 'ink', bg: 'surface', min: 4.5 },
  { fg: 'ink', bg: 'surfaceAlt', min: 4.5 },
  { fg: 'inkMuted', bg: 'surface', min: 4.5 },
  { fg: 'inkMuted', bg: 'background', min: 4.5 },
  { fg: 'inkMuted', bg: 'surfaceAlt', min: 4.5 },
  { fg: 'onPrimary', bg: 'primary', min: 4.5 },
  { fg: 'onAccent', bg: 'accent', min: 4.5 },
  { fg: 'primary', bg: 'surface', min: 4.5 },
  { fg: 'primary', bg: 'background', min: 4.5 },
  { fg: 'accent', bg: 'surface', min: 4.5 },
  { fg: 'accent', bg: 'background', min: 4.5 },
  { fg: 'success', bg: 'surface', min: 4.5 },
  { fg: 'warning', bg: 'surface', min: 4.5 },
  { fg: 'danger', bg: 'surface', min: 4.5 },
  { fg: 'border', bg: 'surface', min: 3 },
  { fg: 'focus', bg: 'background', min: 3 },
  { fg: 'focus', bg: 'surface', min: 3 },
];
