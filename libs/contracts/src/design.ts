/**
 * Design tokens of themes and certificate templates (SPEC.md "Theme",
 * "Certificate template"; reference: docs/design-tokens.md).
 *
 * Every token object is strict: an unknown or misspelled key is a 400, because
 * a token the renderers do not know would otherwise be stored and silently do
 * nothing. All tokens are optional; an omitted theme token keeps the concept's
 * own value, an omitted certificate token takes `CERTIFICATE_DEFAULTS`.
 */
import { z } from 'zod';

// ---------------------------------------------------------------- shared parts

/** `#rgb`, `#rrggbb` or `#rrggbbaa`, either case. */
const HEX_COLOUR = /^#(?:[0-9a-fA-F]{3}|[0-9a-fA-F]{6}|[0-9a-fA-F]{8})$/;

export const HexColour = z
  .string()
  .regex(HEX_COLOUR, { error: 'must be a hex colour: #rgb, #rrggbb or #rrggbbaa' });

/** Absolute http(s) URL, at most 2,048 characters. */
export const HttpUrl = z
  .string()
  .max(2048, { error: 'must be at most 2048 characters' })
  .pipe(z.url({ protocol: /^https?$/, error: 'must be an absolute http:// or https:// URL' }));

/**
 * A font family name as CSS and PDF renderers take it. Characters that could
 * end a CSS declaration or a quoted family name are refused.
 */
export const FontFamily = z
  .string()
  .trim()
  .min(1, { error: 'must not be empty' })
  .max(100, { error: 'must be at most 100 characters' })
  .regex(/^[^;{}<>"'\\\p{Cc}]+$/u, {
    error: 'must be a font family name without ; { } < > quotes or backslashes',
  });

/** A strict object whose unknown-key error lists the keys it does accept. */
function strictObject<const S extends z.core.$ZodLooseShape>(shape: S) {
  const known = Object.keys(shape).join(', ');
  return z.strictObject(shape, {
    error: (iss) =>
      iss.code === 'unrecognized_keys'
        ? `unknown key${iss.keys.length > 1 ? 's' : ''} ${iss.keys.map((k) => `"${k}"`).join(', ')}; allowed: ${known}`
        : undefined,
  });
}

function requiredString(max: number) {
  return z
    .string({ error: (iss) => (iss.input === undefined ? 'is required' : 'must be a string') })
    .trim()
    .min(1, { error: 'must not be empty' })
    .max(max, { error: `must be at most ${max} characters` });
}

function enumOf<const T extends readonly [string, ...string[]]>(values: T) {
  return z.enum(values, { error: `must be one of: ${values.join(', ')}` });
}

/**
 * The fields a fetched theme or certificate template carries that a write cannot set. One rule for every
 * resource (docs/authoring.md): sending them back is fine and they are ignored, so a client may PATCH the object
 * it fetched. Any other unknown key is still refused (a misspelled token would otherwise silently do nothing).
 */
const READ_ONLY_FIELDS = ['id', 'workspaceId', 'createdAt', 'updatedAt'] as const;
const ignored = () => z.unknown().optional().meta({ description: 'Read-only; ignored on write' });
const READ_ONLY_SHAPE = Object.fromEntries(READ_ONLY_FIELDS.map((k) => [k, ignored()])) as Record<
  (typeof READ_ONLY_FIELDS)[number],
  ReturnType<typeof ignored>
>;

/** A strict write body that also accepts (and drops) the read-only fields. */
function writeBody<const S extends z.core.$ZodLooseShape>(shape: S) {
  const known = Object.keys(shape).join(', ');
  return z
    .strictObject(
      { ...shape, ...READ_ONLY_SHAPE },
      {
        error: (iss) =>
          iss.code === 'unrecognized_keys'
            ? `unknown key${iss.keys.length > 1 ? 's' : ''} ${iss.keys.map((k) => `"${k}"`).join(', ')}; allowed: ${known}`
            : undefined,
      },
    )
    .transform((body) => {
      const out: Record<string, unknown> = { ...body };
      for (const k of READ_ONLY_FIELDS) delete out[k];
      return out as z.output<z.ZodObject<S>>;
    });
}

// ---------------------------------------------------------------------- theme

/** SPEC.md: the 7 concepts. Each carries a whole look; other tokens override parts of it. */
export const THEME_CONCEPTS = [
  'stage',
  'editorial',
  'console',
  'bright',
  'calm',
  'workbench',
  'conversation',
] as const;
export type ThemeConcept = (typeof THEME_CONCEPTS)[number];

/** The concept used when a theme names none, and for courses without a theme. */
export const DEFAULT_THEME_CONCEPT: ThemeConcept = 'stage';

export const THEME_MODES = ['light', 'dark', 'auto'] as const;
export const THEME_CORNERS = ['sharp', 'soft', 'round', 'pill'] as const;
export const THEME_DENSITIES = ['compact', 'comfortable', 'spacious'] as const;

/**
 * Palette roles. `on*` colours are text/icons drawn on the matching fill;
 * `focus` is the keyboard focus ring.
 */
export const PALETTE_KEYS = [
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
export type PaletteKey = (typeof PALETTE_KEYS)[number];

/** Reading size of body text, in CSS px. */
export const READING_SIZE = { min: 12, max: 28 } as const;

export const Palette = strictObject(
  Object.fromEntries(PALETTE_KEYS.map((k) => [k, HexColour.optional()])) as Record<
    PaletteKey,
    z.ZodOptional<typeof HexColour>
  >,
);
export type Palette = z.infer<typeof Palette>;

export const ThemeTokens = strictObject({
  concept: enumOf(THEME_CONCEPTS).optional(),
  mode: enumOf(THEME_MODES).optional(),
  palette: Palette.optional(),
  /** Used in dark mode (and in `auto` when the learner's system is dark); not derived from `palette`. */
  darkPalette: Palette.optional(),
  /** Headings. */
  displayFont: FontFamily.optional(),
  /** Body text. */
  fontFamily: FontFamily.optional(),
  readingSize: z
    .number({ error: 'must be a number (CSS px)' })
    .min(READING_SIZE.min, { error: `must be at least ${READING_SIZE.min} (px)` })
    .max(READING_SIZE.max, { error: `must be at most ${READING_SIZE.max} (px)` })
    .optional(),
  corners: enumOf(THEME_CORNERS).optional(),
  density: enumOf(THEME_DENSITIES).optional(),
  logoUrl: HttpUrl.optional(),
});
export type ThemeTokens = z.infer<typeof ThemeTokens>;

export const FONT_STYLES = ['normal', 'italic'] as const;
export const MAX_CUSTOM_FONTS = 20;

/** A font file uploaded in the dashboard (or hosted elsewhere) and the face it provides. */
export const CustomFont = strictObject({
  family: FontFamily,
  url: HttpUrl,
  /** CSS font-weight of this file; 400 when omitted. */
  weight: z
    .number({ error: 'must be a number' })
    .int({ error: 'must be a whole number' })
    .min(1, { error: 'must be from 1 to 1000' })
    .max(1000, { error: 'must be from 1 to 1000' })
    .optional(),
  /** `normal` when omitted. */
  style: enumOf(FONT_STYLES).optional(),
});
export type CustomFont = z.infer<typeof CustomFont>;

const ThemeName = requiredString(200);

const CustomFonts = z
  .array(CustomFont)
  .max(MAX_CUSTOM_FONTS, { error: `must hold at most ${MAX_CUSTOM_FONTS} fonts` });

/** POST /themes. `tokens` and `customFonts` default to `{}` and `[]`. */
export const ThemeInput = writeBody({
  name: ThemeName,
  tokens: ThemeTokens.default({}),
  customFonts: CustomFonts.default([]),
});
export type ThemeInput = z.infer<typeof ThemeInput>;

/** PATCH /themes/:id: any subset of the create fields; `tokens` replaces the tokens wholesale. */
export const ThemePatch = writeBody({
  name: ThemeName.optional(),
  tokens: ThemeTokens.optional(),
  customFonts: CustomFonts.optional(),
});
export type ThemePatch = z.infer<typeof ThemePatch>;

// --------------------------------------------------------- certificate template

export const CERTIFICATE_LAYOUTS = ['centred', 'left', 'minimal', 'sealed'] as const;
export const CERTIFICATE_ORIENTATIONS = ['landscape', 'portrait'] as const;
/** `thin`/`thick` are single rules; `ornate` is a decorative frame in the accent colour. */
export const CERTIFICATE_BORDER_STYLES = ['none', 'thin', 'thick', 'double', 'dashed', 'ornate'] as const;
/** Named by reading edge: in a right-to-left course `topStart` is the top right. */
export const CERTIFICATE_CORNERS = ['topStart', 'topEnd', 'bottomStart', 'bottomEnd'] as const;
/** Elements of the centre stack that `order` rearranges. */
export const CERTIFICATE_ELEMENTS = [
  'logo',
  'issuer',
  'eyebrow',
  'name',
  'body',
  'course',
  'score',
  'date',
  'signature',
] as const;
export type CertificateElement = (typeof CERTIFICATE_ELEMENTS)[number];
/** Elements placed from `positions` in freeform mode. */
export const CERTIFICATE_POSITIONED = ['name', 'course', 'seal', 'qr'] as const;

/** Maximum lengths of the text tokens, in characters. */
export const CERTIFICATE_TEXT_LIMITS = {
  issuerName: 200,
  eyebrow: 120,
  bodyText: 1000,
  signatureName: 120,
  signatureTitle: 120,
  footerText: 500,
} as const;

function text(max: number) {
  return z.string({ error: 'must be a string' }).max(max, { error: `must be at most ${max} characters` });
}

/**
 * SPEC.md wants a PNG or JPEG logo, but a URL's shape says little about what it serves (a signed CDN URL
 * of a PNG often has no extension), so only the URL is checked here; the image type is checked when the
 * certificate renderer fetches it (docs/design-tokens.md).
 */
export const CertificateLogoUrl = HttpUrl;

const Fraction = z
  .number({ error: 'must be a number between 0 and 1' })
  .min(0, { error: 'must be between 0 and 1' })
  .max(1, { error: 'must be between 0 and 1' });

/**
 * Fractions of the page inside its margin: `x` is the horizontal centre, `y`
 * the top edge, `w` the width (0 < w ≤ 1).
 */
export const CertificatePosition = strictObject({
  x: Fraction,
  y: Fraction,
  w: z
    .number({ error: 'must be a number greater than 0 and at most 1' })
    .gt(0, { error: 'must be greater than 0' })
    .max(1, { error: 'must be at most 1' }),
});
export type CertificatePosition = z.infer<typeof CertificatePosition>;

export const CertificatePositions = strictObject({
  name: CertificatePosition.optional(),
  course: CertificatePosition.optional(),
  seal: CertificatePosition.optional(),
  qr: CertificatePosition.optional(),
});
export type CertificatePositions = z.infer<typeof CertificatePositions>;

const CertificateOrder = z
  .array(enumOf(CERTIFICATE_ELEMENTS))
  .min(1, { error: 'must list at least one element' })
  .superRefine((order, ctx) => {
    const seen = new Set<string>();
    order.forEach((element, i) => {
      if (seen.has(element)) {
        ctx.addIssue({ code: 'custom', path: [i], message: `"${element}" is listed more than once` });
      }
      seen.add(element);
    });
  });

const CertificateTokenFields = strictObject({
  /** Empty string: the workspace name is printed. */
  issuerName: text(CERTIFICATE_TEXT_LIMITS.issuerName).optional(),
  eyebrow: text(CERTIFICATE_TEXT_LIMITS.eyebrow).optional(),
  bodyText: text(CERTIFICATE_TEXT_LIMITS.bodyText).optional(),
  signatureName: text(CERTIFICATE_TEXT_LIMITS.signatureName).optional(),
  signatureTitle: text(CERTIFICATE_TEXT_LIMITS.signatureTitle).optional(),
  footerText: text(CERTIFICATE_TEXT_LIMITS.footerText).optional(),
  accentColor: HexColour.optional(),
  borderStyle: enumOf(CERTIFICATE_BORDER_STYLES).optional(),
  orientation: enumOf(CERTIFICATE_ORIENTATIONS).optional(),
  showScore: z.boolean({ error: 'must be true or false' }).optional(),
  showDate: z.boolean({ error: 'must be true or false' }).optional(),
  showQr: z.boolean({ error: 'must be true or false' }).optional(),
  logoUrl: CertificateLogoUrl.optional(),
  layout: enumOf(CERTIFICATE_LAYOUTS).optional(),
  order: CertificateOrder.optional(),
  freeform: z.boolean({ error: 'must be true or false' }).optional(),
  positions: CertificatePositions.optional(),
  qrCorner: enumOf(CERTIFICATE_CORNERS).optional(),
  sealCorner: enumOf(CERTIFICATE_CORNERS).optional(),
});

function deepFreeze<T extends object>(value: T): Readonly<T> {
  for (const inner of Object.values(value)) {
    if (typeof inner === 'object' && inner !== null) deepFreeze(inner);
  }
  return Object.freeze(value);
}

/** The values the built-in default design uses for every omitted token. No logo by default. */
export const CERTIFICATE_DEFAULTS = deepFreeze({
  issuerName: '',
  eyebrow: 'Certificate of completion',
  bodyText: 'has successfully completed',
  signatureName: '',
  signatureTitle: '',
  footerText: '',
  accentColor: '#1f3a5f',
  borderStyle: 'double',
  orientation: 'landscape',
  showScore: false,
  showDate: true,
  showQr: true,
  layout: 'centred',
  order: [...CERTIFICATE_ELEMENTS],
  freeform: false,
  positions: {
    name: { x: 0.5, y: 0.38, w: 0.8 },
    course: { x: 0.5, y: 0.56, w: 0.8 },
    seal: { x: 0.12, y: 0.78, w: 0.14 },
    qr: { x: 0.9, y: 0.8, w: 0.12 },
  },
  qrCorner: 'bottomEnd',
  sealCorner: 'bottomStart',
} as const satisfies Required<Omit<z.infer<typeof CertificateTokenFields>, 'logoUrl'>>);

/**
 * Certificate template tokens. Besides each field's own rule: outside
 * freeform mode the QR code and the seal cannot share a corner, unless the QR
 * code is hidden. Only corners the caller set can clash: when one is set to the
 * other's default corner, the unset one moves to the set one's default
 * (`resolveCertificateTokens`).
 */
export const CertificateTokens = CertificateTokenFields.superRefine((tokens, ctx) => {
  if (tokens.freeform === true) return;
  if ((tokens.showQr ?? CERTIFICATE_DEFAULTS.showQr) === false) return;
  if (tokens.qrCorner === undefined || tokens.sealCorner === undefined) return;
  if (tokens.qrCorner === tokens.sealCorner) {
    ctx.addIssue({
      code: 'custom',
      path: ['sealCorner'],
      message: `qrCorner and sealCorner are both ${tokens.qrCorner}; put them in different corners`,
    });
  }
});
export type CertificateTokens = z.infer<typeof CertificateTokens>;

const TemplateName = requiredString(200);

/** POST /certificates. `tokens` defaults to `{}` (the built-in design). */
export const CertificateTemplateInput = writeBody({
  name: TemplateName,
  tokens: CertificateTokens.default({}),
});
export type CertificateTemplateInput = z.infer<typeof CertificateTemplateInput>;

/** PATCH /certificates/:id: `tokens`, when sent, replaces the whole design. */
export const CertificateTemplatePatch = writeBody({
  name: TemplateName.optional(),
  tokens: CertificateTokens.optional(),
});
export type CertificateTemplatePatch = z.infer<typeof CertificateTemplatePatch>;

export type ResolvedCertificateTokens = Omit<
  Required<CertificateTokens>,
  'logoUrl' | 'positions' | 'order'
> & {
  logoUrl: string | null;
  order: CertificateElement[];
  positions: Record<(typeof CERTIFICATE_POSITIONED)[number], CertificatePosition>;
};

/**
 * Stored tokens → the full design the renderer draws. `order` only
 * rearranges: elements it leaves out follow in their default order (visibility
 * is `showScore`/`showDate`/an empty text, never `order`).
 */
export function resolveCertificateTokens(tokens: CertificateTokens): ResolvedCertificateTokens {
  const d = CERTIFICATE_DEFAULTS;
  const listed = tokens.order ?? [];
  // One corner set onto the other's default: the unset one takes the set one's default instead.
  let qrCorner: (typeof CERTIFICATE_CORNERS)[number] = tokens.qrCorner ?? d.qrCorner;
  let sealCorner: (typeof CERTIFICATE_CORNERS)[number] = tokens.sealCorner ?? d.sealCorner;
  if (qrCorner === sealCorner && tokens.qrCorner === undefined) qrCorner = d.sealCorner;
  else if (qrCorner === sealCorner && tokens.sealCorner === undefined) sealCorner = d.qrCorner;
  return {
    issuerName: tokens.issuerName ?? d.issuerName,
    eyebrow: tokens.eyebrow ?? d.eyebrow,
    bodyText: tokens.bodyText ?? d.bodyText,
    signatureName: tokens.signatureName ?? d.signatureName,
    signatureTitle: tokens.signatureTitle ?? d.signatureTitle,
    footerText: tokens.footerText ?? d.footerText,
    accentColor: tokens.accentColor ?? d.accentColor,
    borderStyle: tokens.borderStyle ?? d.borderStyle,
    orientation: tokens.orientation ?? d.orientation,
    showScore: tokens.showScore ?? d.showScore,
    showDate: tokens.showDate ?? d.showDate,
    showQr: tokens.showQr ?? d.showQr,
    logoUrl: tokens.logoUrl ?? null,
    layout: tokens.layout ?? d.layout,
    order: [...listed, ...CERTIFICATE_ELEMENTS.filter((e) => !listed.includes(e))],
    freeform: tokens.freeform ?? d.freeform,
    positions: {
      name: { ...(tokens.positions?.name ?? d.positions.name) },
      course: { ...(tokens.positions?.course ?? d.positions.course) },
      seal: { ...(tokens.positions?.seal ?? d.positions.seal) },
      qr: { ...(tokens.positions?.qr ?? d.positions.qr) },
    },
    qrCorner,
    sealCorner,
  };
}
