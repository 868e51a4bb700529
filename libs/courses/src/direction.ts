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
 * Reading direction of a BCP-47 locale (SPEC.md generation rule 1): the script subtag when there is one, else
 * Intl.Locale's text info where the runtime has it, else the language (ar, he, fa, ur, … → rtl). `az-Arab` is
 * rtl, `ku-Latn` ltr.
 */
export function directionOf(locale: string): 'ltr' | 'rtl' {
  let loc: TextInfoLocale;
  try {
    loc = new Intl.Locale(locale) as TextInfoLocale;
  } catch {
    return 'ltr';
  }
  // An explicit script decides first: Node 20's text info says ltr for `az-Arab` (it reads the language only).
  if (loc.script) return RTL_SCRIPTS.has(loc.script) ? 'rtl' : 'ltr';
  const info = typeof loc.getTextInfo === 'function' ? loc.getTextInfo() : loc.textInfo;
  if (info?.direction === 'rtl' || info?.direction === 'ltr') return info.direction;
  return RTL_LANGUAGES.has(loc.language) ? 'rtl' : 'ltr';
}
