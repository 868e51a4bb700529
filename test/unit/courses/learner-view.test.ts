import { expect } from 'chai';
import { canonicalJson, gradeAnswer, learnerItemId, stripAnswerKeys, type Block } from '@lectern/courses';
import { allTypesScreens, oneBlock, VALID_BLOCKS } from './fixtures.js';

const view = (block: Block, secret?: string): Block =>
  stripAnswerKeys(oneBlock(block), { secret })[0].blocks[0];

describe('courses: stripAnswerKeys (learner view)', () => {
  it('leaves no answer key anywhere in a course with every block type', () => {
    const text = canonicalJson(stripAnswerKeys(allTypesScreens()));
    for (const key of [
      '"correct"',
      '"answers"',
      '"explanation"',
      '"outcome"',
      '"pairs"',
      '"caseSensitive"',
    ]) {
      expect(text).not.to.contain(key);
    }
    // The stored ranking order and the match pairing are not recoverable from ids either.
    for (const id of ['"r1"', '"r2"', '"r3"', '"r4"']) expect(text).not.to.contain(id);
  });

  it('does not modify its input', () => {
    const screens = allTypesScreens();
    const before = structuredClone(screens);
    stripAnswerKeys(screens);
    expect(screens).to.deep.equal(before);
  });

  it('drops instructor notes, unknown fields and unknown screen fields', () => {
    const screens = [
      {
        id: 's1',
        title: 'One',
        secretNotes: 'x',
        blocks: [VALID_BLOCKS.instructor_note, { ...VALID_BLOCKS.text, corect: 'leak' }],
      },
    ];
    expect(stripAnswerKeys(screens)).to.deep.equal([{ id: 's1', title: 'One', blocks: [VALID_BLOCKS.text] }]);
  });

  it('keeps content blocks as they are', () => {
    for (const block of [
      VALID_BLOCKS.heading,
      VALID_BLOCKS.flashcard,
      VALID_BLOCKS.poll,
      VALID_BLOCKS.stack,
    ]) {
      expect(view(block)).to.deep.equal(block);
    }
  });

  it('choice questions keep option ids and texts only', () => {
    expect(view(VALID_BLOCKS.quiz_single_choice)).to.deep.equal({
      id: 'single-1',
      type: 'quiz_single_choice',
      question: 'Which gas feeds a fire?',
      options: [
        { id: 'a', text: 'Oxygen' },
        { id: 'b', text: 'Helium' },
        { id: 'c', text: 'Argon' },
      ],
    });
    expect(view(VALID_BLOCKS.timed_question).options).to.deep.equal([
      { id: 'a', text: '112' },
      { id: 'b', text: '411' },
    ]);
    expect(view(VALID_BLOCKS.timed_question).seconds).to.equal(20);
  });

  it('true/false loses its key; fill-in-blank keeps markers and blank ids only', () => {
    expect(view(VALID_BLOCKS.quiz_true_false)).to.deep.equal({
      id: 'tf-1',
      type: 'quiz_true_false',
      statement: 'Water puts out oil fires.',
    });
    expect(view(VALID_BLOCKS.fill_in_blank)).to.deep.equal({
      id: 'fill-1',
      type: 'fill_in_blank',
      text: 'Fire needs {{b1}}, fuel and {{b2}}.',
      blanks: [{ id: 'b1' }, { id: 'b2' }],
    });
  });

  it('match shows lefts and keyed rights, and the shown ids grade', () => {
    const v = view(VALID_BLOCKS.match, 'k');
    expect(v.left).to.deep.equal([
      { id: 'p1', text: 'Class A' },
      { id: 'p2', text: 'Class B' },
      { id: 'p3', text: 'Class C' },
    ]);
    const right = v.right as { id: string; text: string }[];
    expect(right.map((r) => r.text)).to.have.members(['Solids', 'Liquids', 'Gases']);
    expect(right.map((r) => r.id)).to.deep.equal([...right.map((r) => r.id)].sort());
    const idOf = new Map(right.map((r) => [r.text, r.id]));
    const answer = { p1: idOf.get('Solids'), p2: idOf.get('Liquids'), p3: idOf.get('Gases') };
    expect(gradeAnswer(VALID_BLOCKS.match, answer, { secret: 'k' })).to.equal(true);
  });

  it('ranking items carry keyed ids and are not in the stored order', () => {
    const v = view(VALID_BLOCKS.ranking);
    const items = v.items as { id: string; text: string }[];
    expect(items.map((i) => i.id)).to.deep.equal([...items.map((i) => i.id)].sort());
    expect(items.map((i) => i.id)).to.have.members(
      ['r1', 'r2', 'r3', 'r4'].map((id) => learnerItemId('rank-1', id)),
    );
  });

  it('hotspot hides its spots unless they are shown, and never shows which is correct', () => {
    expect(view(VALID_BLOCKS.hotspot)).not.to.have.property('spots');
    const shown = view({ ...VALID_BLOCKS.hotspot, showSpots: true });
    expect(shown.spots).to.deep.equal([
      { id: 'ext', x: 0.2, y: 0.5, radius: 0.05, label: 'Extinguisher' },
      { id: 'bin', x: 0.7, y: 0.5, radius: 0.05, label: 'Bin' },
    ]);
  });

  it('scenario choices keep id and text only', () => {
    expect(view(VALID_BLOCKS.scenario).choices).to.deep.equal([
      { id: 'alarm', text: 'Raise the alarm' },
      { id: 'ignore', text: 'Carry on working' },
    ]);
  });

  it('gives [] for garbage', () => {
    expect(stripAnswerKeys(null)).to.deep.equal([]);
    expect(stripAnswerKeys([null, { title: 'no id' }])).to.deep.equal([]);
  });
});
