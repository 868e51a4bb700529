import { expect } from 'chai';
import {
  BLOCK_TYPES,
  GENERATABLE_TYPES,
  strictCheckBlock,
  strictCheckScreens,
  validateScreens,
  type Block,
} from '@lectern/courses';
import { allTypesScreens, clone, VALID_BLOCKS } from './fixtures.js';

const codes = (issues: { code: string }[]) => issues.map((i) => i.code);
const paths = (issues: { path: (string | number)[] }[]) => issues.map((i) => i.path);

describe('courses: strictCheckBlock', () => {
  for (const type of BLOCK_TYPES) {
    it(`accepts a well-formed ${type}`, () => {
      expect(strictCheckBlock(VALID_BLOCKS[type])).to.deep.equal([]);
    });
  }

  it('accepts a video with https WebVTT caption and subtitle tracks', () => {
    const tracks = [
      { src: 'https://cdn.test/en.vtt', srclang: 'en', label: 'English', kind: 'captions', default: true },
      { src: 'https://cdn.test/ar.vtt', srclang: 'ar', label: 'العربية', kind: 'subtitles' },
    ];
    expect(strictCheckBlock({ ...VALID_BLOCKS.video, tracks })).to.deep.equal([]);
    // The kind is one of two: anything else is refused by the write check already.
    const lenient = validateScreens([
      { id: 's', title: 'S', blocks: [{ ...VALID_BLOCKS.video, tracks: [{ kind: 'chapters' }] }] },
    ]);
    expect(lenient.map((i) => i.path.slice(-3))).to.deep.equal([['tracks', 0, 'kind']]);
  });

  it('keeps unknown fields out of its judgement', () => {
    expect(strictCheckBlock({ ...VALID_BLOCKS.flashcard, flair: true })).to.deep.equal([]);
  });

  it('refuses non-objects, missing ids and unknown types', () => {
    expect(codes(strictCheckBlock('x'))).to.deep.equal(['invalid_type']);
    expect(paths(strictCheckBlock({ ...VALID_BLOCKS.text, id: '' }))).to.deep.equal([['id']]);
    expect(strictCheckBlock({ id: 'b', type: 'carousel' })).to.have.deep.nested.property('[0].path', [
      'type',
    ]);
    expect(codes(strictCheckBlock({ id: 'b', type: 'carousel' }))).to.deep.equal(['unknown_type']);
  });

  it('reports wrong types as the lenient check does, relative to the block', () => {
    const issues = strictCheckBlock({ ...VALID_BLOCKS.quiz_single_choice, options: 'A|B' });
    expect(paths(issues)).to.deep.equal([['options']]);
  });

  it('refuses types outside allowedTypes (generation has no media)', () => {
    const issues = strictCheckBlock(VALID_BLOCKS.image, { allowedTypes: GENERATABLE_TYPES });
    expect(codes(issues)).to.deep.equal(['type_not_allowed']);
    expect(strictCheckBlock(VALID_BLOCKS.heading, { allowedTypes: GENERATABLE_TYPES })).to.deep.equal([]);
  });

  const mutate = <T extends Block>(b: T, f: (c: T) => void): T => {
    const c = clone(b);
    f(c);
    return c;
  };
  const opts = (b: Block) => b.options as { id?: string; text?: string; correct?: boolean }[];

  // Each malformed kind from SPEC.md ("Generation job") and the required fields, with where it is reported.
  const malformed: [string, Block, string, (string | number)[]][] = [
    ['a heading without text', mutate(VALID_BLOCKS.heading, (b) => delete b.text), 'required', ['text']],
    ['a text block that is only blank space', { ...VALID_BLOCKS.text, text: '   ' }, 'required', ['text']],
    ['an image without url', mutate(VALID_BLOCKS.image, (b) => delete b.url), 'required', ['url']],
    [
      'an embed with a non-http url',
      { ...VALID_BLOCKS.embed, url: 'javascript:alert(1)' },
      'invalid_url',
      ['url'],
    ],
    ['a button without label', mutate(VALID_BLOCKS.button, (b) => delete b.label), 'required', ['label']],
    [
      'a url button without url',
      { id: 'b', type: 'button', label: 'Go', action: 'url' },
      'required',
      ['url'],
    ],
    [
      'a screen button without screenId',
      { id: 'b', type: 'button', label: 'Go', action: 'screen' },
      'required',
      ['screenId'],
    ],
    [
      'a single choice with two correct answers',
      mutate(VALID_BLOCKS.quiz_single_choice, (b) => (opts(b)[1].correct = true)),
      'wrong_correct_count',
      ['options'],
    ],
    [
      'a single choice with no correct answer',
      mutate(VALID_BLOCKS.quiz_single_choice, (b) => (opts(b)[0].correct = false)),
      'wrong_correct_count',
      ['options'],
    ],
    [
      'a single choice with one option',
      mutate(VALID_BLOCKS.quiz_single_choice, (b) => (b.options = [opts(b)[0]])),
      'too_few_items',
      ['options'],
    ],
    [
      'a single choice without a question',
      mutate(VALID_BLOCKS.quiz_single_choice, (b) => delete b.question),
      'required',
      ['question'],
    ],
    [
      'an option without text',
      mutate(VALID_BLOCKS.quiz_single_choice, (b) => delete opts(b)[2].text),
      'required',
      ['options', 2, 'text'],
    ],
    [
      'an option without id',
      mutate(VALID_BLOCKS.quiz_single_choice, (b) => delete opts(b)[1].id),
      'required',
      ['options', 1, 'id'],
    ],
    [
      'two options with the same id',
      mutate(VALID_BLOCKS.quiz_single_choice, (b) => (opts(b)[2].id = 'a')),
      'duplicate_id',
      ['options', 2, 'id'],
    ],
    [
      'a multiple choice with no correct answer',
      mutate(VALID_BLOCKS.quiz_multiple_choice, (b) => opts(b).forEach((o) => (o.correct = false))),
      'wrong_correct_count',
      ['options'],
    ],
    [
      'a multiple choice with one option',
      mutate(VALID_BLOCKS.quiz_multiple_choice, (b) => (b.options = [opts(b)[0]])),
      'too_few_items',
      ['options'],
    ],
    [
      'a true/false without correct',
      mutate(VALID_BLOCKS.quiz_true_false, (b) => delete b.correct),
      'required',
      ['correct'],
    ],
    [
      'a true/false without statement',
      mutate(VALID_BLOCKS.quiz_true_false, (b) => delete b.statement),
      'required',
      ['statement'],
    ],
    [
      'a fill-in-blank without blanks',
      mutate(VALID_BLOCKS.fill_in_blank, (b) => (b.blanks = [])),
      'too_few_items',
      ['blanks'],
    ],
    [
      'a fill-in-blank blank without answers',
      mutate(VALID_BLOCKS.fill_in_blank, (b) => ((b.blanks as { answers: string[] }[])[1].answers = [' '])),
      'required',
      ['blanks', 1, 'answers'],
    ],
    [
      'a fill-in-blank whose text lacks a marker',
      { ...VALID_BLOCKS.fill_in_blank, text: 'Fire needs {{b1}}, fuel and air.' },
      'blank_marker',
      ['text'],
    ],
    [
      'a fill-in-blank whose text names an unknown blank',
      { ...VALID_BLOCKS.fill_in_blank, text: 'Fire needs {{b1}}, {{b3}} and {{b2}}.' },
      'blank_marker',
      ['text'],
    ],
    [
      'a flashcard without a back',
      mutate(VALID_BLOCKS.flashcard, (b) => delete b.back),
      'required',
      ['back'],
    ],
    ['a flashcard without a front', { ...VALID_BLOCKS.flashcard, front: '' }, 'required', ['front']],
    [
      'a match with one pair',
      mutate(VALID_BLOCKS.match, (b) => (b.pairs = (b.pairs as unknown[]).slice(0, 1))),
      'too_few_items',
      ['pairs'],
    ],
    [
      'a match pair without its right side',
      mutate(VALID_BLOCKS.match, (b) => delete (b.pairs as { right?: string }[])[1].right),
      'required',
      ['pairs', 1, 'right'],
    ],
    [
      'a hotspot with no correct spot',
      mutate(VALID_BLOCKS.hotspot, (b) => ((b.spots as { correct: boolean }[])[0].correct = false)),
      'wrong_correct_count',
      ['spots'],
    ],
    ['a hotspot without image', mutate(VALID_BLOCKS.hotspot, (b) => delete b.image), 'required', ['image']],
    [
      'a hotspot spot without radius',
      mutate(VALID_BLOCKS.hotspot, (b) => delete (b.spots as { radius?: number }[])[0].radius),
      'required',
      ['spots', 0, 'radius'],
    ],
    ['a stack with no cards', { id: 'st', type: 'stack', cards: [] }, 'too_few_items', ['cards']],
    [
      'a stack card with neither title nor text',
      { id: 'st', type: 'stack', cards: [{ id: 'c1' }] },
      'required',
      ['cards', 0, 'title'],
    ],
    [
      'a timeline with one item',
      mutate(VALID_BLOCKS.timeline, (b) => (b.items = (b.items as unknown[]).slice(0, 1))),
      'too_few_items',
      ['items'],
    ],
    [
      'a timeline item without date',
      mutate(VALID_BLOCKS.timeline, (b) => delete (b.items as { date?: string }[])[1].date),
      'required',
      ['items', 1, 'date'],
    ],
    [
      'steps with one item',
      mutate(VALID_BLOCKS.steps, (b) => (b.items = (b.items as unknown[]).slice(1))),
      'too_few_items',
      ['items'],
    ],
    [
      'an accordion item without text',
      mutate(VALID_BLOCKS.accordion, (b) => delete (b.items as { text?: string }[])[0].text),
      'required',
      ['items', 0, 'text'],
    ],
    ['a slideshow without slides', { id: 'sl', type: 'slideshow', slides: [] }, 'too_few_items', ['slides']],
    ['a callout without text', mutate(VALID_BLOCKS.callout, (b) => delete b.text), 'required', ['text']],
    ['a code block without code', mutate(VALID_BLOCKS.code, (b) => delete b.code), 'required', ['code']],
    [
      'a checklist with one item',
      mutate(VALID_BLOCKS.checklist, (b) => (b.items = (b.items as unknown[]).slice(0, 1))),
      'too_few_items',
      ['items'],
    ],
    [
      'a compare without a right side',
      mutate(VALID_BLOCKS.compare, (b) => delete b.right),
      'required',
      ['right'],
    ],
    [
      'a compare side without points',
      mutate(VALID_BLOCKS.compare, (b) => ((b.left as { points: string[] }).points = [])),
      'too_few_items',
      ['left', 'points'],
    ],
    ['a quote without text', mutate(VALID_BLOCKS.quote, (b) => delete b.text), 'required', ['text']],
    [
      'a spec table row without value',
      mutate(VALID_BLOCKS.spec_table, (b) => delete (b.rows as { value?: string }[])[1].value),
      'required',
      ['rows', 1, 'value'],
    ],
    ['a resource without url', mutate(VALID_BLOCKS.resource, (b) => delete b.url), 'required', ['url']],
    [
      'a poll with one option',
      mutate(VALID_BLOCKS.poll, (b) => (b.options = [opts(b)[0]])),
      'too_few_items',
      ['options'],
    ],
    [
      'a reflection without prompt',
      mutate(VALID_BLOCKS.reflection, (b) => delete b.prompt),
      'required',
      ['prompt'],
    ],
    [
      'a ranking with one item',
      mutate(VALID_BLOCKS.ranking, (b) => (b.items = (b.items as unknown[]).slice(0, 1))),
      'too_few_items',
      ['items'],
    ],
    [
      'a scenario with one choice',
      mutate(VALID_BLOCKS.scenario, (b) => (b.choices = (b.choices as unknown[]).slice(0, 1))),
      'too_few_items',
      ['choices'],
    ],
    [
      'a timed question with two correct answers',
      mutate(VALID_BLOCKS.timed_question, (b) => opts(b).forEach((o) => (o.correct = true))),
      'wrong_correct_count',
      ['options'],
    ],
    [
      'a timed question without seconds',
      mutate(VALID_BLOCKS.timed_question, (b) => delete b.seconds),
      'required',
      ['seconds'],
    ],
    ['a glossary without terms', { id: 'g', type: 'glossary', terms: [] }, 'too_few_items', ['terms']],
    [
      'a glossary term without definition',
      mutate(VALID_BLOCKS.glossary, (b) => delete (b.terms as { definition?: string }[])[0].definition),
      'required',
      ['terms', 0, 'definition'],
    ],
    [
      'video chapters out of order',
      mutate(VALID_BLOCKS.video_chapters, (b) => ((b.chapters as { time: number }[])[1].time = 0)),
      'out_of_order',
      ['chapters', 1, 'time'],
    ],
    [
      'a video track over http',
      { ...VALID_BLOCKS.video, tracks: [{ src: 'http://cdn.test/en.vtt', srclang: 'en', label: 'English' }] },
      'invalid_url',
      ['tracks', 0, 'src'],
    ],
    [
      'a video track without a language',
      { ...VALID_BLOCKS.video, tracks: [{ src: 'https://cdn.test/en.vtt', label: 'English' }] },
      'required',
      ['tracks', 0, 'srclang'],
    ],
    [
      'a video track whose language is not a tag',
      { ...VALID_BLOCKS.video, tracks: [{ src: 'https://cdn.test/x.vtt', srclang: 'en_GB', label: 'x' }] },
      'invalid_locale',
      ['tracks', 0, 'srclang'],
    ],
    [
      'a video track without a label',
      { ...VALID_BLOCKS.video, tracks: [{ src: 'https://cdn.test/en.vtt', srclang: 'en' }] },
      'required',
      ['tracks', 0, 'label'],
    ],
    [
      'a video with two default tracks',
      {
        ...VALID_BLOCKS.video,
        tracks: ['en', 'fr'].map((l) => ({
          src: `https://cdn.test/${l}.vtt`,
          srclang: l,
          label: l,
          default: true,
        })),
      },
      'too_many_defaults',
      ['tracks'],
    ],
    [
      'a milestone without title',
      mutate(VALID_BLOCKS.milestone, (b) => delete b.title),
      'required',
      ['title'],
    ],
    [
      'a markdown block without markdown',
      mutate(VALID_BLOCKS.markdown, (b) => delete b.markdown),
      'required',
      ['markdown'],
    ],
  ];

  for (const [name, block, code, at] of malformed) {
    it(`refuses ${name} (${code} at ${JSON.stringify(at)})`, () => {
      // Each of these is fine for the lenient write check: the strict rules are extra.
      expect(validateScreens([{ id: 's', title: 'S', blocks: [block] }]), 'lenient').to.deep.equal([]);
      const issues = strictCheckBlock(block);
      expect(issues.map((i) => [i.code, i.path])).to.deep.include([code, at]);
    });
  }

  it('refuses an 11-card stack', () => {
    const cards = Array.from({ length: 11 }, (_, i) => ({ id: `c${i}`, title: 'x' }));
    expect(paths(strictCheckBlock({ id: 'st', type: 'stack', cards }))).to.deep.equal([['cards']]);
  });
});

describe('courses: strictCheckScreens', () => {
  it('keeps a well-formed course as it is', () => {
    const screens = allTypesScreens();
    const result = strictCheckScreens(screens);
    expect(result.dropped).to.deep.equal([]);
    expect(result.screens).to.deep.equal(screens);
  });

  it('drops malformed blocks with full paths and keeps the rest untouched', () => {
    const twoCorrect = clone(VALID_BLOCKS.quiz_single_choice);
    (twoCorrect.options as { correct: boolean }[])[1].correct = true;
    const noBack = { id: 'fc', type: 'flashcard' as const, front: 'F', foo: 1 };
    const screens = [
      { id: 's1', title: 'One', blocks: [VALID_BLOCKS.heading, twoCorrect] },
      { id: 's2', title: 'Two', blocks: [{ ...VALID_BLOCKS.text, extra: 'kept' }, noBack] },
    ];
    const result = strictCheckScreens(screens);
    expect(result.screens).to.deep.equal([
      { id: 's1', title: 'One', blocks: [VALID_BLOCKS.heading] },
      { id: 's2', title: 'Two', blocks: [{ ...VALID_BLOCKS.text, extra: 'kept' }] },
    ]);
    expect(result.dropped).to.have.length(2);
    expect(result.dropped[0]).to.deep.include({ screenId: 's1', blockId: 'single-1' });
    expect(result.dropped[0].issues[0].path).to.deep.equal(['screens', 0, 'blocks', 1, 'options']);
    expect(result.dropped[1]).to.deep.include({ screenId: 's2', blockId: 'fc' });
    expect(result.dropped[1].issues[0].path).to.deep.equal(['screens', 1, 'blocks', 1, 'back']);
  });

  it('never repairs: a kept block is the very object given', () => {
    const block = { ...VALID_BLOCKS.text };
    const result = strictCheckScreens([{ id: 's1', title: 'One', blocks: [block] }]);
    expect(result.screens[0].blocks[0]).to.equal(block);
  });

  it('drops a screen left with no block, reporting it with blockId null', () => {
    const screens = [
      { id: 's1', title: 'One', blocks: [VALID_BLOCKS.heading] },
      { id: 's2', title: 'Two', blocks: [{ id: 'fc', type: 'flashcard', front: 'F' }] },
      { id: 's3', title: 'Three', blocks: [] },
    ];
    const result = strictCheckScreens(screens);
    expect(result.screens.map((s) => s.id)).to.deep.equal(['s1']);
    const screenDrops = result.dropped.filter((d) => d.blockId === null);
    expect(screenDrops.map((d) => d.screenId)).to.deep.equal(['s2', 's3']);
    expect(screenDrops[0].issues[0]).to.deep.include({
      code: 'empty_screen',
      path: ['screens', 1, 'blocks'],
    });
  });

  it('drops a malformed screen', () => {
    const result = strictCheckScreens([
      { id: 's1', title: '', blocks: [VALID_BLOCKS.heading] },
      { title: 'x', blocks: [] },
      'nope',
    ]);
    expect(result.screens).to.deep.equal([]);
    expect(result.dropped.map((d) => d.issues[0].path)).to.deep.equal([
      ['screens', 0, 'title'],
      ['screens', 1, 'id'],
      ['screens', 2],
    ]);
  });

  it('drops repeated screen and block ids (the later one)', () => {
    const result = strictCheckScreens([
      { id: 's1', title: 'One', blocks: [VALID_BLOCKS.heading] },
      { id: 's2', title: 'Two', blocks: [VALID_BLOCKS.heading, VALID_BLOCKS.text] },
      { id: 's1', title: 'Again', blocks: [VALID_BLOCKS.flashcard] },
    ]);
    expect(result.screens).to.deep.equal([
      { id: 's1', title: 'One', blocks: [VALID_BLOCKS.heading] },
      { id: 's2', title: 'Two', blocks: [VALID_BLOCKS.text] },
    ]);
    expect(
      result.dropped.map((d) => [d.screenId, d.blockId, d.issues[0].code, d.issues[0].path]),
    ).to.deep.equal([
      ['s2', 'heading-1', 'duplicate_id', ['screens', 1, 'blocks', 0, 'id']],
      ['s1', null, 'duplicate_id', ['screens', 2, 'id']],
    ]);
  });

  it('drops a button leading to a screen that is not there, and screens that empties', () => {
    const result = strictCheckScreens([
      { id: 's1', title: 'One', blocks: [VALID_BLOCKS.heading] },
      {
        id: 's2',
        title: 'Two',
        blocks: [{ id: 'go', type: 'button', label: 'Go', action: 'screen', screenId: 's3' }],
      },
      { id: 's3', title: 'Three', blocks: [{ id: 'fc', type: 'flashcard', front: 'only' }] },
      {
        id: 's4',
        title: 'Four',
        blocks: [{ id: 'back', type: 'button', label: 'Back', action: 'screen', screenId: 's1' }],
      },
    ]);
    expect(result.screens.map((s) => s.id)).to.deep.equal(['s1', 's4']);
    expect(result.dropped.map((d) => [d.screenId, d.blockId, d.issues[0].code])).to.deep.equal([
      ['s3', 'fc', 'required'],
      ['s3', null, 'empty_screen'],
      ['s2', 'go', 'unknown_screen'],
      ['s2', null, 'empty_screen'],
    ]);
  });

  it('with allowedTypes drops media from generated content', () => {
    const result = strictCheckScreens(
      [{ id: 's1', title: 'One', blocks: [VALID_BLOCKS.heading, VALID_BLOCKS.image, VALID_BLOCKS.hotspot] }],
      { allowedTypes: GENERATABLE_TYPES },
    );
    expect(result.screens[0].blocks.map((b) => b.type)).to.deep.equal(['heading']);
    expect(result.dropped.map((d) => d.issues[0].code)).to.deep.equal([
      'type_not_allowed',
      'type_not_allowed',
    ]);
  });

  it('refuses a non-array', () => {
    const result = strictCheckScreens('screens');
    expect(result.screens).to.deep.equal([]);
    expect(result.dropped[0].issues[0].path).to.deep.equal(['screens']);
  });
});
