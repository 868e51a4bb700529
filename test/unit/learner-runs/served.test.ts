import { expect } from 'chai';
import { indexCourse, passedNow, pickLocale, screenPercent } from '@lectern/learner-runs';

describe('learner runs: pure rules', () => {
  it('pickLocale: exact translation, then same language, else the source; garbage is ignored', () => {
    expect(pickLocale('en', ['fr', 'pt-BR'], 'fr')).to.equal('fr');
    expect(pickLocale('en', ['fr', 'pt-BR'], 'pt-br')).to.equal('pt-BR');
    expect(pickLocale('en', ['fr'], 'fr-CA')).to.equal('fr');
    expect(pickLocale('en', ['fr'], 'en-GB')).to.equal('en');
    expect(pickLocale('en', ['fr'], 'de')).to.equal('en');
    expect(pickLocale('en', ['fr'], 'not a tag!!')).to.equal('en');
    expect(pickLocale('en', ['fr'], null)).to.equal('en');
  });

  it('screenPercent: position of the screen, two decimals, the last screen is 100', () => {
    expect(screenPercent(0, 3)).to.equal(33.33);
    expect(screenPercent(1, 3)).to.equal(66.67);
    expect(screenPercent(2, 3)).to.equal(100);
    expect(screenPercent(0, 1)).to.equal(100);
  });

  it('passedNow: null without a mark or a finish; a mark without graded blocks passes', () => {
    expect(passedNow(80, 1, null)).to.equal(null);
    expect(passedNow(80, null, 50)).to.equal(null);
    expect(passedNow(80, 1, 80)).to.equal(true);
    expect(passedNow(79.99, 1, 80)).to.equal(false);
    expect(passedNow(null, 1, 80)).to.equal(true);
  });

  it('indexCourse: graded blocks in reading order; instructor notes cannot be answered', () => {
    const idx = indexCourse([
      {
        id: 'a',
        title: 'A',
        blocks: [
          { id: 't', type: 'quiz_true_false', correct: true },
          { id: 'n', type: 'instructor_note' },
        ],
      },
      {
        id: 'b',
        title: 'B',
        blocks: [
          { id: 'p', type: 'poll' },
          { id: 'empty', type: 'quiz_single_choice', options: [] },
        ],
      },
    ]);
    expect(idx.graded).to.deep.equal(['t']);
    expect([...idx.blocks.keys()]).to.deep.equal(['t', 'p', 'empty']);
    expect(idx.screenIndex.get('b')).to.equal(1);
  });
});
