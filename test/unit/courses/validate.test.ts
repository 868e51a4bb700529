import { expect } from 'chai';
import { validateScreens } from '@lectern/courses';
import { allTypesScreens, oneBlock, VALID_BLOCKS } from './fixtures.js';

const paths = (issues: { path: (string | number)[] }[]) => issues.map((i) => i.path);

describe('courses: validateScreens (lenient write rules)', () => {
  it('accepts a course using every block type', () => {
    expect(validateScreens(allTypesScreens())).to.deep.equal([]);
  });

  it('accepts an empty course and an empty screen', () => {
    expect(validateScreens([])).to.deep.equal([]);
    expect(validateScreens([{ id: 's1', title: '', blocks: [] }])).to.deep.equal([]);
  });

  it('accepts blocks with every field missing (they render blank)', () => {
    const screens = [
      {
        id: 's1',
        title: 'T',
        blocks: [
          { id: 'b1', type: 'quiz_single_choice' },
          { id: 'b2', type: 'stack' },
        ],
      },
    ];
    expect(validateScreens(screens)).to.deep.equal([]);
  });

  it('accepts unknown fields on blocks, items and screens', () => {
    const screens = [
      {
        id: 's1',
        title: 'T',
        colour: 'red',
        blocks: [{ id: 'b1', type: 'text', txet: 'misspelled', options: [{ id: 'x', wat: 1 }] }],
      },
    ];
    expect(validateScreens(screens)).to.deep.equal([]);
  });

  it('refuses screens that are not an array', () => {
    const issues = validateScreens({ id: 's1' });
    expect(paths(issues)).to.deep.equal([['screens']]);
  });

  it('refuses a screen that is not an object, and missing/wrong screen fields', () => {
    expect(paths(validateScreens(['nope']))).to.deep.equal([['screens', 0]]);
    const issues = validateScreens([{ id: 7, blocks: 'x' }]);
    expect(paths(issues)).to.have.deep.members([
      ['screens', 0, 'id'],
      ['screens', 0, 'title'],
      ['screens', 0, 'blocks'],
    ]);
  });

  it('refuses an empty screen id and an empty block id', () => {
    const issues = validateScreens([{ id: '', title: 'T', blocks: [{ id: '', type: 'divider' }] }]);
    expect(paths(issues)).to.deep.equal([
      ['screens', 0, 'id'],
      ['screens', 0, 'blocks', 0, 'id'],
    ]);
  });

  it('refuses a block that is not an object or has no id/type', () => {
    const issues = validateScreens([{ id: 's1', title: 'T', blocks: [42, { type: 'text' }, { id: 'b3' }] }]);
    expect(paths(issues)).to.deep.equal([
      ['screens', 0, 'blocks', 0],
      ['screens', 0, 'blocks', 1, 'id'],
      ['screens', 0, 'blocks', 2, 'type'],
    ]);
  });

  it('refuses an unknown block type at its type', () => {
    const issues = validateScreens(oneBlock({ id: 'b1', type: 'carousel' as never }));
    expect(issues).to.have.length(1);
    expect(issues[0].code).to.equal('unknown_type');
    expect(issues[0].path).to.deep.equal(['screens', 0, 'blocks', 0, 'type']);
    expect(issues[0].message).to.contain('carousel');
  });

  it('points a wrong-typed field at the field itself', () => {
    const screens = allTypesScreens();
    screens.push({
      id: 's-x',
      title: 'X',
      blocks: [{ ...VALID_BLOCKS.quiz_single_choice, id: 'bad', options: 'A|B' }],
    });
    const issues = validateScreens(screens);
    expect(issues).to.have.length(1);
    expect(issues[0].path).to.deep.equal(['screens', 3, 'blocks', 0, 'options']);
    expect(issues[0].code).to.equal('invalid_type');
  });

  it('points inside items: ["screens", 0, "blocks", 0, "options", 1, "correct"]', () => {
    const block = {
      id: 'q',
      type: 'quiz_single_choice' as const,
      options: [{ id: 'a' }, { id: 'b', correct: 'yes' }],
    };
    expect(paths(validateScreens(oneBlock(block)))).to.deep.equal([
      ['screens', 0, 'blocks', 0, 'options', 1, 'correct'],
    ]);
  });

  const wrongTypes: [string, Record<string, unknown>, (string | number)[]][] = [
    ['heading level as string', { type: 'heading', level: '2' }, ['level']],
    ['heading level 4', { type: 'heading', level: 4 }, ['level']],
    ['text as number', { type: 'text', text: 5 }, ['text']],
    ['image alt null', { type: 'image', alt: null }, ['alt']],
    ['embed height as string', { type: 'embed', height: '300px' }, ['height']],
    ['button action unknown', { type: 'button', action: 'teleport' }, ['action']],
    ['spacer size as number', { type: 'spacer', size: 3 }, ['size']],
    ['true/false correct as string', { type: 'quiz_true_false', correct: 'true' }, ['correct']],
    [
      'fill_in_blank answers not strings',
      { type: 'fill_in_blank', blanks: [{ id: 'b', answers: [1] }] },
      ['blanks', 0, 'answers', 0],
    ],
    ['fill_in_blank caseSensitive string', { type: 'fill_in_blank', caseSensitive: 'no' }, ['caseSensitive']],
    ['match pairs as object', { type: 'match', pairs: { a: 'b' } }, ['pairs']],
    ['hotspot spot x out of 0..1', { type: 'hotspot', spots: [{ id: 's', x: 2 }] }, ['spots', 0, 'x']],
    ['hotspot radius 0', { type: 'hotspot', spots: [{ id: 's', radius: 0 }] }, ['spots', 0, 'radius']],
    ['timeline item not an object', { type: 'timeline', items: ['1666'] }, ['items', 0]],
    ['callout tone unknown', { type: 'callout', tone: 'danger' }, ['tone']],
    ['compare points not an array', { type: 'compare', left: { points: 'a' } }, ['left', 'points']],
    ['timed_question seconds too short', { type: 'timed_question', seconds: 2 }, ['seconds']],
    ['timed_question seconds not integer', { type: 'timed_question', seconds: 10.5 }, ['seconds']],
    [
      'video_chapters negative time',
      { type: 'video_chapters', chapters: [{ id: 'c', time: -1 }] },
      ['chapters', 0, 'time'],
    ],
    ['resource kind unknown', { type: 'resource', kind: 'podcast' }, ['kind']],
    ['item id as number', { type: 'glossary', terms: [{ id: 1 }] }, ['terms', 0, 'id']],
  ];
  for (const [name, fields, at] of wrongTypes) {
    it(`refuses ${name} at ${JSON.stringify(at)}`, () => {
      const issues = validateScreens([{ id: 's1', title: 'T', blocks: [{ id: 'b1', ...fields }] }]);
      expect(paths(issues)).to.deep.equal([['screens', 0, 'blocks', 0, ...at]]);
    });
  }

  it('allows 10 stack cards and refuses 11 at cards', () => {
    const card = (i: number) => ({ id: `c${i}`, title: `Card ${i}` });
    const ten = { id: 'st', type: 'stack' as const, cards: Array.from({ length: 10 }, (_, i) => card(i)) };
    expect(validateScreens(oneBlock(ten))).to.deep.equal([]);
    const eleven = { ...ten, cards: Array.from({ length: 11 }, (_, i) => card(i)) };
    const issues = validateScreens(oneBlock(eleven));
    expect(issues).to.have.length(1);
    expect(issues[0].path).to.deep.equal(['screens', 0, 'blocks', 0, 'cards']);
    expect(issues[0].message).to.contain('10');
  });

  it('refuses a screen id used twice, at the duplicate', () => {
    const screens = [
      { id: 's1', title: 'A', blocks: [] },
      { id: 's2', title: 'B', blocks: [] },
      { id: 's1', title: 'C', blocks: [] },
    ];
    const issues = validateScreens(screens);
    expect(issues).to.have.length(1);
    expect(issues[0]).to.include({ code: 'duplicate_id' });
    expect(issues[0].path).to.deep.equal(['screens', 2, 'id']);
    expect(issues[0].message).to.contain('screens[0].id');
  });

  it('refuses a block id reused on another screen, at the duplicate', () => {
    const screens = [
      { id: 's1', title: 'A', blocks: [{ id: 'b1', type: 'text' }] },
      {
        id: 's2',
        title: 'B',
        blocks: [
          { id: 'b2', type: 'text' },
          { id: 'b1', type: 'heading' },
        ],
      },
    ];
    const issues = validateScreens(screens);
    expect(issues).to.have.length(1);
    expect(issues[0].code).to.equal('duplicate_id');
    expect(issues[0].path).to.deep.equal(['screens', 1, 'blocks', 1, 'id']);
  });

  it('refuses a block id repeated within one screen', () => {
    const screens = [
      {
        id: 's1',
        title: 'A',
        blocks: [
          { id: 'b1', type: 'text' },
          { id: 'b1', type: 'text' },
        ],
      },
    ];
    expect(paths(validateScreens(screens))).to.deep.equal([['screens', 0, 'blocks', 1, 'id']]);
  });

  it('lets a block share an id with a screen (separate namespaces)', () => {
    expect(validateScreens([{ id: 'x', title: 'A', blocks: [{ id: 'x', type: 'text' }] }])).to.deep.equal([]);
  });

  it('reports every problem at once, every path starting with "screens"', () => {
    const screens = [
      {
        id: 's1',
        title: 'A',
        blocks: [
          { id: 'b1', type: 'heading', level: 9 },
          { id: 'b2', type: 'nope' },
        ],
      },
      { id: 's1', title: 'B', blocks: [{ id: 'b1', type: 'text', text: [] }] },
    ];
    const issues = validateScreens(screens);
    expect(issues).to.have.length(5);
    for (const i of issues) expect(i.path[0]).to.equal('screens');
    for (const i of issues) expect(i).to.have.all.keys('code', 'path', 'message');
  });
});
