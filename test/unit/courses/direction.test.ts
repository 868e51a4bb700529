import { expect } from 'chai';
import { directionOf } from '@lectern/courses';

describe('courses: directionOf (the reading direction of a locale)', () => {
  it('right to left for RTL languages and scripts, whatever the region', () => {
    for (const tag of ['ar', 'ar-EG', 'he', 'fa-IR', 'ur', 'ps', 'yi', 'az-Arab', 'pa-Arab', 'ku-Arab'])
      expect(directionOf(tag), tag).to.equal('rtl');
  });
  it('left to right for the rest, for a Latin script of an RTL language, and for an unusable tag', () => {
    for (const tag of ['en', 'fr-CA', 'ja', 'hi', 'ku-Latn', 'az', 'en_US', '', 'not a tag'])
      expect(directionOf(tag), tag).to.equal('ltr');
  });
});
