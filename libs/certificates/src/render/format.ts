const SCORE_LABELS: Record<string, string> = {
  en: 'Score',
  fr: 'Score',
  de: 'Ergebnis',
  es: 'Puntuación',
  pt: 'Pontuação',
  it: 'Punteggio',
  nl: 'Score',
  pl: 'Wynik',
  ru: 'Результат',
  uk: 'Результат',
  el: 'Βαθμολογία',
  ar: 'النتيجة',
  he: 'ציון',
  ja: 'スコア',
  zh: '成绩',
  ko: '점수',
  tr: 'Puan',
};

function language(locale: string): string {
  return locale.toLowerCase().split(/[-_]/)[0];
}

/**
 * Intl formatters by locale, built once per process (building one costs more than the rest of
 * a date's formatting); null for a tag Intl refuses. Locales are the few the service accepts.
 */
function formatterCache<F>(make: (locale: string) => F): (locale: string) => F | null {
  const cache = new Map<string, F | null>();
  return (locale) => {
    let f = cache.get(locale);
    if (f === undefined) {
      try {
        f = make(locale);
      } catch {
        f = null; // an unknown locale tag
      }
      if (cache.size > 500) cache.clear();
      cache.set(locale, f);
    }
    return f;
  };
}
const dateFormat = formatterCache((l) => new Intl.DateTimeFormat(l, { dateStyle: 'long', timeZone: 'UTC' }));
const percentFormat = formatterCache(
  (l) => new Intl.NumberFormat(l, { style: 'percent', maximumFractionDigits: 1 }),
);

/** The issue date, long form, in the certificate's locale. */
export function formatDate(iso: string, locale: string): string {
  const date = new Date(iso);
  // An unknown locale tag: fall back to English.
  const f = dateFormat(locale) ?? dateFormat('en');
  return f ? f.format(date) : date.toISOString().slice(0, 10);
}

/** "Score: 87.5%" in the certificate's language. */
export function formatScore(score: number, locale: string): string {
  const f = percentFormat(locale);
  const pct = f ? f.format(score / 100) : `${score}%`;
  return `${SCORE_LABELS[language(locale)] ?? SCORE_LABELS.en}: ${pct}`;
}
