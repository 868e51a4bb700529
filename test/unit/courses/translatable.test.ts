import { expect } from 'chai';
import {
  applyTranslation,
  BLOCK_TYPES,
  contentHash,
  isKnownPath,
  sourceFingerprints,
  stalePaths,
  TEXT_FIELDS,
  translatableFields,
  translationIssues,
  type Screen,
} from '@lectern/courses';
import { allTypesScreens, clone, VALID_BLOCKS } from './fixtures.js';

const course = () => ({ title: 'Fire safety', screens: allTypesScreens() });
const fieldMap = (c: { title: string; screens: unknown }) =>
  Object.fromEntries(translatableFields(c).map((f) => [f.path, f]));

describe('courses: translatable fields', () => {
  it('lists the course title and screen titles with their groups and label keys', () => {
    const fields = translatableFields(course());
    expect(fields[0]).to.deep.equal({
      path: 'title',
      group: 'course',
      labelKey: 'course.title',
      sourceText: 'Fire safety',
    });
    expect(fields[1]).to.deep.equal({
      path: 's:s-intro.title',
      group: 's:s-intro',
      labelKey: 'screen.title',
      sourceText: 'Intro',
    });
    const map = fieldMap(course());
    expect(map['s:s-quiz.title'].group).to.equal('s:s-quiz');
  });

  it('lists block fields as s:<screen>.b:<block>.<field> in the screen group', () => {
    const map = fieldMap(course());
    expect(map['s:s-intro.b:heading-1.text']).to.deep.equal({
      path: 's:s-intro.b:heading-1.text',
      group: 's:s-intro',
      labelKey: 'block.heading.text',
      sourceText: 'Welcome',
    });
    expect(map['s:s-quiz.b:single-1.question'].labelKey).to.equal('block.quiz_single_choice.question');
    expect(map['s:s-quiz.b:single-1.explanation'].sourceText).to.equal('Combustion needs an oxidiser.');
  });

  it('names array items by id, string lists and id-less items by index', () => {
    const map = fieldMap(course());
    expect(map['s:s-quiz.b:single-1.options.a.text']).to.include({
      sourceText: 'Oxygen',
      labelKey: 'block.quiz_single_choice.options.text',
    });
    expect(map['s:s-quiz.b:match-1.pairs.p2.right'].sourceText).to.equal('Liquids');
    expect(map['s:s-more.b:compare-1.left.points.1']).to.include({
      sourceText: 'No residue',
      labelKey: 'block.compare.left.points',
    });
    expect(map['s:s-more.b:spec-1.rows.0.label'].sourceText).to.equal('Weight');
    expect(map['s:s-quiz.b:fill-1.blanks.b2.answers.1'].sourceText).to.equal('O2');
    expect(map['s:s-more.b:scenario-1.choices.alarm.outcome'].sourceText).to.equal('Everyone gets out.');
  });

  it('falls back to indexes when item ids repeat', () => {
    const screens: Screen[] = [
      {
        id: 's',
        title: 'S',
        blocks: [
          {
            id: 'c',
            type: 'checklist',
            items: [
              { id: 'x', text: 'A' },
              { id: 'x', text: 'B' },
            ],
          },
        ],
      },
    ];
    expect(translatableFields({ title: 'T', screens }).map((f) => f.path)).to.deep.equal([
      'title',
      's:s.title',
      's:s.b:c.items.0.text',
      's:s.b:c.items.1.text',
    ]);
  });

  it('walks item by item, in reading order', () => {
    const paths = translatableFields({
      title: 'T',
      screens: [{ id: 's', title: 'S', blocks: [VALID_BLOCKS.match] }],
    }).map((f) => f.path);
    expect(paths.slice(2)).to.deep.equal([
      's:s.b:match-1.prompt',
      's:s.b:match-1.pairs.p1.left',
      's:s.b:match-1.pairs.p1.right',
      's:s.b:match-1.pairs.p2.left',
      's:s.b:match-1.pairs.p2.right',
      's:s.b:match-1.pairs.p3.left',
      's:s.b:match-1.pairs.p3.right',
    ]);
  });

  it('leaves out urls, ids, enums, numbers, code, empty strings and instructor notes', () => {
    const fields = translatableFields(course());
    const texts = fields.map((f) => f.sourceText);
    for (const notText of [
      'media://img/triangle.png',
      'https://example.com/widget',
      's-quiz',
      'warning',
      'bash',
      'echo "fire drill"',
      'document',
    ]) {
      expect(texts).not.to.include(notText);
    }
    expect(fields.some((f) => f.path.includes('note-1'))).to.equal(false);
    expect(fields.every((f) => f.sourceText.trim() !== '')).to.equal(true);
    const blank = {
      title: '',
      screens: [{ id: 's', title: ' ', blocks: [{ id: 'h', type: 'heading', text: '' }] }],
    };
    expect(translatableFields(blank)).to.deep.equal([]);
  });

  it('every block type has a text-field list, and every type but the wordless ones yields a field', () => {
    expect(Object.keys(TEXT_FIELDS).sort()).to.deep.equal([...BLOCK_TYPES].sort());
    const groups = new Set(translatableFields(course()).map((f) => f.labelKey.split('.')[1]));
    for (const type of BLOCK_TYPES) {
      const wordless = ['divider', 'spacer', 'instructor_note'].includes(type);
      expect(groups.has(type), type).to.equal(!wordless);
    }
  });

  it('all paths are unique', () => {
    const paths = translatableFields(course()).map((f) => f.path);
    expect(new Set(paths).size).to.equal(paths.length);
  });

  it('isKnownPath knows exactly the listed paths', () => {
    const c = course();
    expect(isKnownPath(c, 'title')).to.equal(true);
    expect(isKnownPath(c, 's:s-quiz.b:single-1.options.b.text')).to.equal(true);
    expect(isKnownPath(c, 's:s-quiz.b:single-1.options.z.text')).to.equal(false);
    expect(isKnownPath(c, 's:s-quiz.b:single-1.options.a.correct')).to.equal(false);
    expect(isKnownPath(c, 's:nope.title')).to.equal(false);
    expect(isKnownPath(c, 's:s-intro.b:image-1.url')).to.equal(false);
  });

  it('applyTranslation replaces the given paths in a copy', () => {
    const c = course();
    const before = clone(c);
    const t = applyTranslation(c, {
      title: 'Sécurité incendie',
      's:s-intro.title': 'Introduction',
      's:s-quiz.b:single-1.options.a.text': 'Oxygène',
      's:s-more.b:compare-1.right.points.0': 'Feux de liquides',
      's:s-quiz.b:match-1.pairs.p1.right': 'Solides',
    });
    expect(c).to.deep.equal(before);
    expect(t.title).to.equal('Sécurité incendie');
    expect(t.screens[0].title).to.equal('Introduction');
    expect((t.screens[1].blocks[0].options as { text: string }[])[0].text).to.equal('Oxygène');
    const compare = t.screens[2].blocks.find((b) => b.type === 'compare');
    expect((compare?.right as { points: string[] }).points).to.deep.equal(['Feux de liquides']);
    // Everything else keeps its source text, answer keys included.
    expect((t.screens[1].blocks[0].options as { text: string; correct?: boolean }[])[1]).to.deep.equal({
      id: 'b',
      text: 'Helium',
      correct: false,
    });
  });

  it('applyTranslation keeps the source for empty strings and unknown paths', () => {
    const c = course();
    const t = applyTranslation(c, {
      title: '',
      's:s-intro.title': '   ',
      's:nope.title': 'X',
      's:s-intro.b:image-1.url': 'evil',
    });
    expect(t).to.deep.equal(c);
  });

  it('a translated course hashes differently from its source', () => {
    const c = course();
    expect(contentHash(applyTranslation(c, { title: 'Autre' }))).not.to.equal(contentHash(c));
  });

  it('translationIssues flags unknown paths, non-strings and broken blank markers', () => {
    const c = course();
    const issues = translationIssues(c, {
      title: 'OK',
      's:s-intro.title': '',
      's:nowhere.title': 'x',
      's:s-intro.b:heading-1.text': 5,
      's:s-quiz.b:fill-1.text': 'Le feu a besoin de {{b1}}, de combustible et de {{b2}}.',
      's:s-quiz.b:fill-1.text.x': 'y',
    });
    expect(issues.map((i) => [i.code, i.path])).to.deep.equal([
      ['unknown_path', ['content', 's:nowhere.title']],
      ['invalid_type', ['content', 's:s-intro.b:heading-1.text']],
      ['unknown_path', ['content', 's:s-quiz.b:fill-1.text.x']],
    ]);
    const broken = translationIssues(c, {
      's:s-quiz.b:fill-1.text': 'Le feu a besoin de {{b1}} et de chaleur.',
    });
    expect(broken.map((i) => i.code)).to.deep.equal(['blank_marker']);
  });

  it('stalePaths names the paths whose source changed or went away', () => {
    const c = course();
    const recorded = sourceFingerprints(c);
    expect(stalePaths(c, recorded)).to.deep.equal([]);
    const edited = clone(c);
    edited.screens[0].blocks[0].text = 'Welcome aboard';
    edited.screens[1].blocks.shift();
    const stale = stalePaths(edited, recorded);
    expect(stale).to.include('s:s-intro.b:heading-1.text');
    expect(stale).to.include('s:s-quiz.b:single-1.question');
    expect(stale).not.to.include('title');
  });
});
