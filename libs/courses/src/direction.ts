const RTL_LANGUAGES = new Set([
  'ar',
  'arc',
  'ckb',
  'dv',
  'fa',
  'ha',
  'he',
  'iw',
  'khw',
  'ks',
  'ku',
  'ps',
  'sd',
  'syr',
  'ug',
  'ur',
  'yi',
]);
const RTL_SCRIPTS = new Set(['Arab', 'Hebr', 'Thaa', 'Syrc', 'Nkoo', 'Adlm', 'Rohg', 'Mand', 'Samr']);

type TextInfoLocale = Intl.Locale & {
  getTextInfo?: () => { direction?: string };
  textInfo?: { direction?: string };
};

/**
 * Reading direction of a BCP-47 locale (SPEC.md generation rule 1): Intl.Locale's text info where the runtime
 * has it, else the script subtag, else the language (ar, he, fa, ur, … → rtl). `az-Arab` is rtl, `ku-Latn` ltr.
 */
export function directionOf(locale: string): 'ltr' | 'rtl' {
  let loc: TextInfoLocale;
  try {
    loc = new Intl.Locale(locale) as TextInfoLocale;
  } catch {
    return 'ltr';
  }
  const info = typeof loc.getTextInfo === 'function' ? loc.getTextInfo() : loc.textInfo;
  if (info?.direction === 'rtl' || info?.direction === 'ltr') return info.direction;
  if (loc.script) return RTL_SCRIPTS.has(loc.script) ? 'rtl' : 'ltr';
  return RTL_LANGUAGES.has(loc.language) ? 'rtl' : 'ltr';
}
