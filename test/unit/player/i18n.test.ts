import { expect } from 'chai';
import {
  joinsLetters,
  CHROME_KEYS,
  CHROME_LANGUAGES,
  CHROME_STRINGS,
  chromeLanguage,
  chromeStrings,
  format,
} from '@lectern/player';

describe('player chrome strings', () => {
  it('speaks en, es, fr, de, pt, ar, he, ja and zh', () => {
    expect(CHROME_LANGUAGES.sort()).to.deep.equal(['ar', 'de', 'en', 'es', 'fr', 'he', 'ja', 'pt', 'zh']);
  });

  it('has every key in every language, with the same placeholders as English', () => {
    const placeholders = (s: string) => (s.match(/\{\w+\}/g) ?? []).sort();
    for (const lang of CHROME_LANGUAGES) {
      const t = CHROME_STRINGS[lang];
      expect(Object.keys(t).sort(), lang).to.deep.equal([...CHROME_KEYS].sort());
      for (const key of CHROME_KEYS) {
        expect(t[key].trim(), `${lang}.${key}`).to.not.equal('');
        expect(placeholders(t[key]), `${lang}.${key}`).to.deep.equal(placeholders(CHROME_STRINGS.en[key]));
      }
      if (lang !== 'en') {
        expect(t.continue, lang).to.not.equal(CHROME_STRINGS.en.continue);
        expect(t.contents, lang).to.not.equal(CHROME_STRINGS.en.contents);
      }
    }
  });

  it('picks the primary subtag and falls back to English', () => {
    expect(chromeLanguage('pt-BR')).to.equal('pt');
    expect(chromeLanguage('zh_Hant')).to.equal('zh');
    expect(chromeLanguage('AR')).to.equal('ar');
    expect(chromeLanguage('nl')).to.equal('en');
    expect(chromeLanguage('')).to.equal('en');
    expect(chromeLanguage(null)).to.equal('en');
    expect(chromeStrings('he').back).to.equal('חזרה');
  });

  it('fills placeholders and drops unknown ones', () => {
    expect(format('Screen {n} of {total}', { n: 2, total: 5 })).to.equal('Screen 2 of 5');
    expect(format('{n} s {x}', { n: 3 })).to.equal('3 s ');
  });
});

describe('player: scripts whose letters join', () => {
  it('knows Arabic, Persian, Urdu, Syriac, N’Ko, Mongolian and Devanagari text from the locale', () => {
    for (const tag of ['ar', 'ar-EG', 'fa', 'ur', 'ps', 'syr', 'nqo', 'mn-Mong', 'az-Arab', 'hi', 'mr', 'bn'])
      expect(joinsLetters(tag), tag).to.equal(true);
  });
  it('leaves Latin, Cyrillic, Hebrew, Greek and CJK text and unusable tags alone', () => {
    for (const tag of [
      'en',
      'fr',
      'mn',
      'ru',
      'he',
      'el',
      'ja',
      'zh',
      'az',
      'not a tag',
      '',
      null,
      undefined,
    ])
      expect(joinsLetters(tag), String(tag)).to.equal(false);
  });
});
