import { expect } from 'chai';
import {
  BLOCK_TYPES,
  GRADED_TYPES,
  feedbackFor,
  gradeAnswer,
  isGraded,
  learnerItemId,
  scoreAnswers,
  stripAnswerKeys,
  type Block,
} from '@lectern/courses';
import { clone, oneBlock, VALID_BLOCKS } from './fixtures.js';

const GARBAGE: unknown[] = [
  undefined,
  null,
  0,
  1,
  -1,
  NaN,
  '',
  ' ',
  'zzz',
  true,
  false,
  [],
  [null],
  {},
  { x: 'a' },
  [[]],
  () => 1,
];

/** The learner-view ids of a block's ranking items / match right sides, in stored order. */
const learnerIds = (block: Block, list: 'items' | 'pairs', secret?: string) =>
  (block[list] as { id: string }[]).map((x) => learnerItemId(block.id, x.id, { secret }));

describe('courses: grading', () => {
  it('grades exactly the nine answerable types; poll and reflection are not graded', () => {
    expect([...GRADED_TYPES].sort()).to.deep.equal(
      [
        'fill_in_blank',
        'hotspot',
        'match',
        'quiz_multiple_choice',
        'quiz_single_choice',
        'quiz_true_false',
        'ranking',
        'scenario',
        'timed_question',
      ].sort(),
    );
    for (const type of BLOCK_TYPES) {
      expect(isGraded(VALID_BLOCKS[type]), type).to.equal((GRADED_TYPES as readonly string[]).includes(type));
    }
    expect(isGraded(VALID_BLOCKS.poll)).to.equal(false);
    expect(isGraded(VALID_BLOCKS.reflection)).to.equal(false);
  });

  it('does not count a graded-type block stored without an answer key', () => {
    expect(isGraded({ id: 'q', type: 'quiz_single_choice', question: 'Q?' })).to.equal(false);
    expect(isGraded({ id: 'q', type: 'quiz_true_false', statement: 'S' })).to.equal(false);
    expect(
      isGraded({ id: 'q', type: 'scenario', situation: 'S', choices: [{ id: 'a', text: 'A' }] }),
    ).to.equal(false);
    expect(
      isGraded({ id: 'q', type: 'fill_in_blank', text: '{{a}}', blanks: [{ id: 'a', answers: [] }] }),
    ).to.equal(false);
    expect(isGraded({ id: 'r', type: 'ranking', items: [{ id: 'a', text: 'A' }] })).to.equal(false);
    expect(isGraded(null)).to.equal(false);
    expect(isGraded('quiz_single_choice')).to.equal(false);
  });

  it('never grades a non-graded block or garbage block true, and never throws', () => {
    for (const block of [
      VALID_BLOCKS.poll,
      VALID_BLOCKS.reflection,
      VALID_BLOCKS.text,
      null,
      'x',
      42,
      [],
      {},
    ]) {
      expect(gradeAnswer(block, 'y')).to.equal(false);
    }
  });

  for (const type of GRADED_TYPES) {
    it(`${type}: garbage answers are wrong, never an error`, () => {
      // For true/false a boolean is a real answer, not garbage.
      const garbage = type === 'quiz_true_false' ? GARBAGE.filter((g) => typeof g !== 'boolean') : GARBAGE;
      for (const answer of garbage)
        expect(gradeAnswer(VALID_BLOCKS[type], answer), String(answer)).to.equal(false);
    });
  }

  describe('quiz_single_choice and timed_question', () => {
    for (const type of ['quiz_single_choice', 'timed_question'] as const) {
      it(`${type}: the correct option id is right, others wrong`, () => {
        expect(gradeAnswer(VALID_BLOCKS[type], 'a')).to.equal(true);
        expect(gradeAnswer(VALID_BLOCKS[type], 'b')).to.equal(false);
        expect(gradeAnswer(VALID_BLOCKS[type], 'nope')).to.equal(false);
        expect(gradeAnswer(VALID_BLOCKS[type], ['a'])).to.equal(false);
        expect(gradeAnswer(VALID_BLOCKS[type], 'A')).to.equal(false);
      });
    }
  });

  describe('quiz_multiple_choice', () => {
    const b = VALID_BLOCKS.quiz_multiple_choice;
    it('is right only for exactly the set of correct ids, in any order', () => {
      expect(gradeAnswer(b, ['a', 'b'])).to.equal(true);
      expect(gradeAnswer(b, ['b', 'a'])).to.equal(true);
      expect(gradeAnswer(b, ['b', 'a', 'a'])).to.equal(true);
    });
    it('is wrong for a subset, a superset, an unknown id or a lone string', () => {
      expect(gradeAnswer(b, ['a'])).to.equal(false);
      expect(gradeAnswer(b, ['a', 'b', 'c'])).to.equal(false);
      expect(gradeAnswer(b, ['a', 'x'])).to.equal(false);
      expect(gradeAnswer(b, 'a')).to.equal(false);
      expect(gradeAnswer(b, ['a', 2])).to.equal(false);
    });
  });

  describe('quiz_true_false', () => {
    it('takes a boolean equal to the key', () => {
      expect(gradeAnswer(VALID_BLOCKS.quiz_true_false, false)).to.equal(true);
      expect(gradeAnswer(VALID_BLOCKS.quiz_true_false, true)).to.equal(false);
      expect(gradeAnswer({ ...VALID_BLOCKS.quiz_true_false, correct: true }, true)).to.equal(true);
    });
    it('does not take strings or numbers for booleans', () => {
      expect(gradeAnswer(VALID_BLOCKS.quiz_true_false, 'false')).to.equal(false);
      expect(gradeAnswer(VALID_BLOCKS.quiz_true_false, 0)).to.equal(false);
    });
  });

  describe('fill_in_blank', () => {
    const b = VALID_BLOCKS.fill_in_blank;
    it('takes an array in blank order, trimmed and case-insensitive, with alternatives', () => {
      expect(gradeAnswer(b, ['heat', 'oxygen'])).to.equal(true);
      expect(gradeAnswer(b, ['  HEAT ', 'o2'])).to.equal(true);
      expect(gradeAnswer(b, ['Heat', 'Air'])).to.equal(true);
    });
    it('takes an object keyed by blank id', () => {
      expect(gradeAnswer(b, { b2: 'air', b1: 'heat' })).to.equal(true);
      expect(gradeAnswer(b, { b1: 'heat' })).to.equal(false);
    });
    it('is wrong when any blank is wrong, empty, missing or in the wrong place', () => {
      expect(gradeAnswer(b, ['heat', 'water'])).to.equal(false);
      expect(gradeAnswer(b, ['oxygen', 'heat'])).to.equal(false);
      expect(gradeAnswer(b, ['heat', ''])).to.equal(false);
      expect(gradeAnswer(b, ['heat'])).to.equal(false);
      expect(gradeAnswer(b, ['heat', 'oxygen', 'extra'])).to.equal(false);
      expect(gradeAnswer(b, 'heat')).to.equal(false);
      expect(gradeAnswer(b, ['heat', 7])).to.equal(false);
    });
    it('collapses inner whitespace', () => {
      const one = {
        id: 'f',
        type: 'fill_in_blank',
        text: '{{x}}',
        blanks: [{ id: 'x', answers: ['carbon dioxide'] }],
      };
      expect(gradeAnswer(one, ' carbon   dioxide ')).to.equal(true);
    });
    it('takes a plain string for a single blank', () => {
      const one = {
        id: 'f',
        type: 'fill_in_blank',
        text: 'A {{x}}',
        blanks: [{ id: 'x', answers: ['Paris'] }],
      };
      expect(gradeAnswer(one, 'paris')).to.equal(true);
      expect(gradeAnswer(one, ['paris'])).to.equal(true);
      expect(gradeAnswer(one, 'rome')).to.equal(false);
    });
    it('respects caseSensitive', () => {
      const cs = {
        id: 'f',
        type: 'fill_in_blank',
        text: '{{x}}',
        caseSensitive: true,
        blanks: [{ id: 'x', answers: ['NaCl'] }],
      };
      expect(gradeAnswer(cs, 'NaCl')).to.equal(true);
      expect(gradeAnswer(cs, ' NaCl ')).to.equal(true);
      expect(gradeAnswer(cs, 'nacl')).to.equal(false);
    });
  });

  describe('match', () => {
    const b = VALID_BLOCKS.match;
    const [r1, r2, r3] = learnerIds(b, 'pairs');
    it('takes an object left id → right id (learner-view ids)', () => {
      expect(gradeAnswer(b, { p1: r1, p2: r2, p3: r3 })).to.equal(true);
      expect(gradeAnswer(b, { p3: r3, p1: r1, p2: r2 })).to.equal(true);
    });
    it('takes an array of [left, right] or {left, right}', () => {
      expect(
        gradeAnswer(b, [
          ['p1', r1],
          ['p2', r2],
          ['p3', r3],
        ]),
      ).to.equal(true);
      expect(
        gradeAnswer(b, [
          { left: 'p1', right: r1 },
          { left: 'p2', right: r2 },
          { left: 'p3', right: r3 },
        ]),
      ).to.equal(true);
    });
    it('is wrong when any pair is wrong or missing, or a left repeats', () => {
      expect(gradeAnswer(b, { p1: r2, p2: r1, p3: r3 })).to.equal(false);
      expect(gradeAnswer(b, { p1: r1, p2: r2 })).to.equal(false);
      expect(gradeAnswer(b, { p1: r1, p2: r2, p3: r3, p4: r3 })).to.equal(false);
      expect(
        gradeAnswer(b, [
          ['p1', r1],
          ['p1', r1],
          ['p2', r2],
          ['p3', r3],
        ]),
      ).to.equal(false);
      expect(
        gradeAnswer(b, [
          ['p1', r1, 'x'],
          ['p2', r2],
          ['p3', r3],
        ]),
      ).to.equal(false);
    });
    it('does not accept the stored pair ids for the right side (they would give the answer away)', () => {
      expect(gradeAnswer(b, { p1: 'p1', p2: 'p2', p3: 'p3' })).to.equal(false);
    });
    it('treats two identical right-hand texts as interchangeable', () => {
      const twin = clone(b);
      (twin.pairs as { right: string }[])[1].right = 'Solids';
      const [t1, t2, t3] = learnerIds(twin, 'pairs');
      expect(gradeAnswer(twin, { p1: t2, p2: t1, p3: t3 })).to.equal(true);
    });
    it('keys the learner ids with the secret', () => {
      const [s1, s2, s3] = learnerIds(b, 'pairs', 'sekrit');
      expect(gradeAnswer(b, { p1: s1, p2: s2, p3: s3 }, { secret: 'sekrit' })).to.equal(true);
      expect(gradeAnswer(b, { p1: s1, p2: s2, p3: s3 })).to.equal(false);
      expect(gradeAnswer(b, { p1: r1, p2: r2, p3: r3 }, { secret: 'sekrit' })).to.equal(false);
    });
  });

  describe('ranking', () => {
    const b = VALID_BLOCKS.ranking;
    const ids = learnerIds(b, 'items');
    it('is right for the learner-view ids in the stored order', () => {
      expect(gradeAnswer(b, ids)).to.equal(true);
    });
    it('is wrong for any other order, a partial or repeated list, or stored ids', () => {
      expect(gradeAnswer(b, [ids[1], ids[0], ids[2], ids[3]])).to.equal(false);
      expect(gradeAnswer(b, [...ids].reverse())).to.equal(false);
      expect(gradeAnswer(b, ids.slice(0, 3))).to.equal(false);
      expect(gradeAnswer(b, [ids[0], ids[0], ids[2], ids[3]])).to.equal(false);
      expect(gradeAnswer(b, ['r1', 'r2', 'r3', 'r4'])).to.equal(false);
    });
    it('lets items with identical text swap places', () => {
      const twin = clone(b);
      (twin.items as { text: string }[])[1].text = 'Pull the pin';
      const t = learnerIds(twin, 'items');
      expect(gradeAnswer(twin, [t[1], t[0], t[2], t[3]])).to.equal(true);
    });
    it('grades what stripAnswerKeys shows, once the learner puts it in order', () => {
      const view = stripAnswerKeys(oneBlock(b))[0].blocks[0];
      const shown = (view.items as { id: string; text: string }[]).map((i) => i.id);
      expect(shown).to.have.members(ids);
      const byText = new Map((view.items as { id: string; text: string }[]).map((i) => [i.text, i.id]));
      const ordered = (b.items as { text: string }[]).map((i) => byText.get(i.text));
      expect(gradeAnswer(b, ordered)).to.equal(true);
    });
  });

  describe('hotspot', () => {
    const b = VALID_BLOCKS.hotspot;
    it('takes a point inside a correct spot', () => {
      expect(gradeAnswer(b, { x: 0.2, y: 0.5 })).to.equal(true);
      expect(gradeAnswer(b, { x: 0.23, y: 0.53 })).to.equal(true);
      expect(gradeAnswer(b, { x: 0.25, y: 0.5 })).to.equal(true);
    });
    it('refuses a point outside, inside a wrong spot, or not numeric', () => {
      expect(gradeAnswer(b, { x: 0.26, y: 0.5 })).to.equal(false);
      expect(gradeAnswer(b, { x: 0.7, y: 0.5 })).to.equal(false);
      expect(gradeAnswer(b, { x: 0.5, y: 0.5 })).to.equal(false);
      expect(gradeAnswer(b, { x: '0.2', y: '0.5' })).to.equal(false);
      expect(gradeAnswer(b, { x: 0.2 })).to.equal(false);
      expect(gradeAnswer(b, [0.2, 0.5])).to.equal(false);
    });
    it('lets the nearest spot decide where a correct and a wrong spot overlap', () => {
      const overlap = clone(b);
      overlap.spots = [
        { id: 'ok', x: 0.5, y: 0.5, radius: 0.2, correct: true },
        { id: 'no', x: 0.6, y: 0.5, radius: 0.2, correct: false },
      ];
      expect(gradeAnswer(overlap, { x: 0.52, y: 0.5 })).to.equal(true);
      expect(gradeAnswer(overlap, { x: 0.58, y: 0.5 })).to.equal(false);
    });
    it('takes a spot id only when the spots are shown', () => {
      expect(gradeAnswer(b, 'ext')).to.equal(false);
      const shown = { ...b, showSpots: true };
      expect(gradeAnswer(shown, 'ext')).to.equal(true);
      expect(gradeAnswer(shown, 'bin')).to.equal(false);
    });
  });

  describe('scenario', () => {
    it('takes the id of a correct choice', () => {
      expect(gradeAnswer(VALID_BLOCKS.scenario, 'alarm')).to.equal(true);
      expect(gradeAnswer(VALID_BLOCKS.scenario, 'ignore')).to.equal(false);
      expect(gradeAnswer(VALID_BLOCKS.scenario, 'Raise the alarm')).to.equal(false);
    });
  });

  it('is deterministic and leaves the block untouched', () => {
    const b = clone(VALID_BLOCKS.match);
    const before = clone(b);
    const ids = learnerIds(b, 'pairs');
    for (let i = 0; i < 3; i++) expect(gradeAnswer(b, { p1: ids[0], p2: ids[1], p3: ids[2] })).to.equal(true);
    expect(b).to.deep.equal(before);
  });

  it('feedbackFor reveals the explanation and a scenario outcome', () => {
    expect(feedbackFor(VALID_BLOCKS.quiz_single_choice, 'b')).to.deep.equal({
      correct: false,
      explanation: 'Combustion needs an oxidiser.',
    });
    expect(feedbackFor(VALID_BLOCKS.scenario, 'alarm')).to.deep.equal({
      correct: true,
      outcome: 'Everyone gets out.',
    });
    expect(feedbackFor('garbage', 'x')).to.deep.equal({ correct: false });
  });

  describe('scoreAnswers', () => {
    const screens = [
      {
        id: 's1',
        title: 'S',
        blocks: [
          VALID_BLOCKS.text,
          VALID_BLOCKS.quiz_single_choice,
          VALID_BLOCKS.quiz_true_false,
          VALID_BLOCKS.poll,
        ],
      },
      { id: 's2', title: 'T', blocks: [VALID_BLOCKS.scenario, VALID_BLOCKS.reflection] },
    ];
    it('counts graded blocks only, unanswered as wrong', () => {
      expect(scoreAnswers(screens, { 'single-1': 'a', 'tf-1': true, 'poll-1': 'y' })).to.deep.equal({
        correct: 1,
        total: 3,
        percent: (1 / 3) * 100,
      });
      expect(
        scoreAnswers(screens, { 'single-1': 'a', 'tf-1': false, 'scenario-1': 'alarm' }).percent,
      ).to.equal(100);
    });
    it('gives a null percentage, not zero, when nothing is graded', () => {
      expect(scoreAnswers([{ id: 's', title: 'S', blocks: [VALID_BLOCKS.poll] }], {})).to.deep.equal({
        correct: 0,
        total: 0,
        percent: null,
      });
      expect(scoreAnswers('garbage', {}).percent).to.equal(null);
    });
  });
});
