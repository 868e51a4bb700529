import { expect } from 'chai';
import { BLOCK_TYPES, strictCheckScreens } from '@lectern/courses';
import { CSV_DEFAULT_SECONDS, CSV_UNSUPPORTED_TYPES, parseCourseCsv } from '@lectern/csv-import';
import { csvOf, oneRow, type Cells } from './csv-helpers.js';

function block(row: Cells): Record<string, unknown> {
  const { block, issue } = oneRow(row);
  expect(issue, issue?.message).to.equal(undefined);
  expect(block).to.not.equal(undefined);
  return block ?? {};
}

describe('parseCourseCsv: block mapping per type', () => {
  it('heading, text, callout, instructor_note → {text}', () => {
    for (const type of ['heading', 'text', 'callout', 'instructor_note']) {
      expect(block({ type, text: 'Hello' })).to.deep.equal({ id: 's1b1', type, text: 'Hello' });
    }
  });

  it('milestone → {title}', () => {
    expect(block({ type: 'milestone', text: 'Halfway!' })).to.deep.equal({
      id: 's1b1',
      type: 'milestone',
      title: 'Halfway!',
    });
  });

  it('markdown → {markdown}', () => {
    expect(block({ type: 'markdown', text: '# Title\n\n*emphasis*' })).to.deep.equal({
      id: 's1b1',
      type: 'markdown',
      markdown: '# Title\n\n*emphasis*',
    });
  });

  it('quote → {text, author from caption}', () => {
    expect(block({ type: 'quote', text: 'Less is more', caption: 'Mies' })).to.deep.equal({
      id: 's1b1',
      type: 'quote',
      text: 'Less is more',
      author: 'Mies',
    });
    expect(block({ type: 'quote', text: 'Anon' })).to.not.have.property('author');
  });

  it('code → {code with its indentation, language lower-cased, caption}', () => {
    expect(
      block({
        type: 'code',
        text: '\n  if (x) {\n    y();\n  }\n\n',
        language: 'TypeScript',
        caption: 'A guard',
      }),
    ).to.deep.equal({
      id: 's1b1',
      type: 'code',
      code: '  if (x) {\n    y();\n  }',
      language: 'typescript',
      caption: 'A guard',
    });
  });

  it('quiz_single_choice → {question, options[{id,text,correct}], explanation}', () => {
    expect(
      block({
        type: 'quiz_single_choice',
        text: 'Capital of France?',
        options: 'Lyon|Paris|Nice',
        correct: '2',
        explanation: 'Paris.',
      }),
    ).to.deep.equal({
      id: 's1b1',
      type: 'quiz_single_choice',
      question: 'Capital of France?',
      options: [
        { id: 'o1', text: 'Lyon', correct: false },
        { id: 'o2', text: 'Paris', correct: true },
        { id: 'o3', text: 'Nice', correct: false },
      ],
      explanation: 'Paris.',
    });
  });

  it('quiz_multiple_choice takes several correct indexes separated by |', () => {
    const b = block({ type: 'quiz_multiple_choice', text: 'Primes?', options: '2|4|5|9', correct: '1|3' });
    expect(b.options).to.deep.equal([
      { id: 'o1', text: '2', correct: true },
      { id: 'o2', text: '4', correct: false },
      { id: 'o3', text: '5', correct: true },
      { id: 'o4', text: '9', correct: false },
    ]);
    expect(b).to.not.have.property('explanation');
  });

  it('quiz_multiple_choice also accepts a single correct index, and spaces/commas between indexes', () => {
    expect(
      block({ type: 'quiz_multiple_choice', text: 'Q', options: 'a|b', correct: '2' }).options,
    ).to.deep.equal([
      { id: 'o1', text: 'a', correct: false },
      { id: 'o2', text: 'b', correct: true },
    ]);
    const b = block({ type: 'quiz_multiple_choice', text: 'Q', options: 'a|b|c', correct: ' 1 | 3 ' });
    expect((b.options as { correct: boolean }[]).map((o) => o.correct)).to.deep.equal([true, false, true]);
    const c = block({ type: 'quiz_multiple_choice', text: 'Q', options: 'a|b|c', correct: '1, 2' });
    expect((c.options as { correct: boolean }[]).map((o) => o.correct)).to.deep.equal([true, true, false]);
  });

  it('timed_question → single choice plus seconds', () => {
    expect(
      block({ type: 'timed_question', text: '2+2?', options: '3|4', correct: '2', seconds: '20' }),
    ).to.deep.equal({
      id: 's1b1',
      type: 'timed_question',
      question: '2+2?',
      options: [
        { id: 'o1', text: '3', correct: false },
        { id: 'o2', text: '4', correct: true },
      ],
      seconds: 20,
    });
    expect(block({ type: 'timed_question', text: 'Q', options: 'a|b', correct: '1' }).seconds).to.equal(
      CSV_DEFAULT_SECONDS,
    );
    expect(CSV_DEFAULT_SECONDS).to.equal(30);
  });

  it('quiz_true_false → {statement, correct: boolean, explanation}', () => {
    expect(
      block({ type: 'quiz_true_false', text: 'The sky is green', correct: 'FALSE', explanation: 'Blue.' }),
    ).to.deep.equal({
      id: 's1b1',
      type: 'quiz_true_false',
      statement: 'The sky is green',
      correct: false,
      explanation: 'Blue.',
    });
    expect(block({ type: 'quiz_true_false', text: 'x', correct: 'true' }).correct).to.equal(true);
    expect(block({ type: 'quiz_true_false', text: 'x', correct: 'Yes' }).correct).to.equal(true);
    expect(block({ type: 'quiz_true_false', text: 'x', correct: 'no' }).correct).to.equal(false);
  });

  it('fill_in_blank → {text with a {{b1}} marker, blanks[{id, answers}], explanation}', () => {
    expect(
      block({
        type: 'fill_in_blank',
        text: 'Water boils at _____ °C',
        options: '100|one hundred',
        explanation: 'At sea level.',
      }),
    ).to.deep.equal({
      id: 's1b1',
      type: 'fill_in_blank',
      text: 'Water boils at {{b1}} °C',
      blanks: [{ id: 'b1', answers: ['100', 'one hundred'] }],
      explanation: 'At sea level.',
    });
  });

  it('flashcard → {front, back} from back, falling back to explanation', () => {
    expect(block({ type: 'flashcard', text: 'Bonjour', back: 'Hello' })).to.deep.equal({
      id: 's1b1',
      type: 'flashcard',
      front: 'Bonjour',
      back: 'Hello',
    });
    expect(block({ type: 'flashcard', text: 'Merci', explanation: 'Thank you' }).back).to.equal('Thank you');
    expect(block({ type: 'flashcard', text: 'Oui', back: 'Yes', explanation: 'ignored' }).back).to.equal(
      'Yes',
    );
  });

  it('stack → {cards[{id, title, text}]} from title=text options (a plain item is the text)', () => {
    expect(block({ type: 'stack', options: 'être=to be|avoir=to have|Just text' })).to.deep.equal({
      id: 's1b1',
      type: 'stack',
      cards: [
        { id: 'c1', title: 'être', text: 'to be' },
        { id: 'c2', title: 'avoir', text: 'to have' },
        { id: 'c3', text: 'Just text' },
      ],
    });
  });

  it('stack takes exactly 10 cards', () => {
    const options = Array.from({ length: 10 }, (_, i) => `f${i}=b${i}`).join('|');
    expect(block({ type: 'stack', options }).cards).to.have.length(10);
  });

  it('poll → {question, options[{id, text}]} (no correct answer)', () => {
    expect(block({ type: 'poll', text: 'Favourite?', options: 'Tea|Coffee', correct: '1' })).to.deep.equal({
      id: 's1b1',
      type: 'poll',
      question: 'Favourite?',
      options: [
        { id: 'o1', text: 'Tea' },
        { id: 'o2', text: 'Coffee' },
      ],
    });
  });

  it('reflection → {prompt}', () => {
    expect(block({ type: 'reflection', text: 'What did you learn?' })).to.deep.equal({
      id: 's1b1',
      type: 'reflection',
      prompt: 'What did you learn?',
    });
  });

  it('ranking → {question, items, explanation} in the correct order', () => {
    expect(
      block({ type: 'ranking', text: 'Smallest first', options: 'ant|dog|whale', explanation: 'By size.' }),
    ).to.deep.equal({
      id: 's1b1',
      type: 'ranking',
      question: 'Smallest first',
      items: [
        { id: 'i1', text: 'ant' },
        { id: 'i2', text: 'dog' },
        { id: 'i3', text: 'whale' },
      ],
      explanation: 'By size.',
    });
  });

  it('checklist → {items[{id, text}]}', () => {
    expect(block({ type: 'checklist', options: 'Coffee|Laptop' })).to.deep.equal({
      id: 's1b1',
      type: 'checklist',
      items: [
        { id: 'i1', text: 'Coffee' },
        { id: 'i2', text: 'Laptop' },
      ],
    });
  });

  it('steps → {items[{id, title?, text}]} from title=text or plain text', () => {
    expect(block({ type: 'steps', options: 'Boil=Heat the water|Pour slowly' })).to.deep.equal({
      id: 's1b1',
      type: 'steps',
      items: [
        { id: 'i1', title: 'Boil', text: 'Heat the water' },
        { id: 'i2', text: 'Pour slowly' },
      ],
    });
  });

  it('timeline → {items[{id, date, title}]} from date=title', () => {
    expect(block({ type: 'timeline', options: '1957=Sputnik|1969=Moon landing' })).to.deep.equal({
      id: 's1b1',
      type: 'timeline',
      items: [
        { id: 'i1', date: '1957', title: 'Sputnik' },
        { id: 'i2', date: '1969', title: 'Moon landing' },
      ],
    });
  });

  it('accordion → {items[{id, title, text}]} from title=text (split at the first =)', () => {
    expect(block({ type: 'accordion', options: 'What?=A thing|Maths=1+1=2' })).to.deep.equal({
      id: 's1b1',
      type: 'accordion',
      items: [
        { id: 'i1', title: 'What?', text: 'A thing' },
        { id: 'i2', title: 'Maths', text: '1+1=2' },
      ],
    });
  });

  it('match → {prompt?, pairs[{id, left, right}], explanation?}', () => {
    expect(
      block({ type: 'match', text: 'Match capitals', options: 'France=Paris|Italy=Rome' }),
    ).to.deep.equal({
      id: 's1b1',
      type: 'match',
      pairs: [
        { id: 'p1', left: 'France', right: 'Paris' },
        { id: 'p2', left: 'Italy', right: 'Rome' },
      ],
      prompt: 'Match capitals',
    });
  });

  it('glossary → {terms[{id, term, definition}]}', () => {
    expect(block({ type: 'glossary', options: 'API=Application programming interface' })).to.deep.equal({
      id: 's1b1',
      type: 'glossary',
      terms: [{ id: 't1', term: 'API', definition: 'Application programming interface' }],
    });
  });

  it('spec_table → {rows[{id, label, value}]}', () => {
    expect(block({ type: 'spec_table', text: 'Specs', options: 'Weight=2 kg|Colour=Red' })).to.deep.equal({
      id: 's1b1',
      type: 'spec_table',
      rows: [
        { id: 'r1', label: 'Weight', value: '2 kg' },
        { id: 'r2', label: 'Colour', value: 'Red' },
      ],
    });
  });

  it('image → {url, alt, caption?}; video/audio → {url, caption? (caption or text)}; embed → {url, title?}', () => {
    expect(
      block({ type: 'image', url: 'https://cdn.example.com/a.png', text: 'A cat', caption: 'Our cat' }),
    ).to.deep.equal({
      id: 's1b1',
      type: 'image',
      url: 'https://cdn.example.com/a.png',
      alt: 'A cat',
      caption: 'Our cat',
    });
    expect(block({ type: 'image', url: 'https://cdn.example.com/a.png' })).to.deep.equal({
      id: 's1b1',
      type: 'image',
      url: 'https://cdn.example.com/a.png',
      alt: '',
    });
    for (const type of ['video', 'audio']) {
      expect(block({ type, url: 'http://m.example.com/x', text: 'Intro' })).to.deep.equal({
        id: 's1b1',
        type,
        url: 'http://m.example.com/x',
        caption: 'Intro',
      });
      expect(block({ type, url: 'http://m.example.com/x', text: 'Intro', caption: 'Cap' }).caption).to.equal(
        'Cap',
      );
      expect(block({ type, url: 'http://m.example.com/x' })).to.not.have.property('caption');
    }
    expect(block({ type: 'embed', url: 'https://example.com/widget' })).to.deep.equal({
      id: 's1b1',
      type: 'embed',
      url: 'https://example.com/widget',
    });
  });

  it('resource → {title, url, description?}; button → {label, action: next} or {label, action: url, url}', () => {
    expect(
      block({
        type: 'resource',
        text: 'Handbook',
        url: 'https://example.com/h.pdf',
        explanation: 'PDF, 2 MB',
      }),
    ).to.deep.equal({
      id: 's1b1',
      type: 'resource',
      title: 'Handbook',
      url: 'https://example.com/h.pdf',
      description: 'PDF, 2 MB',
    });
    expect(block({ type: 'button', text: 'Next' })).to.deep.equal({
      id: 's1b1',
      type: 'button',
      label: 'Next',
      action: 'next',
    });
    expect(block({ type: 'button', text: 'Docs', url: 'https://example.com' })).to.deep.equal({
      id: 's1b1',
      type: 'button',
      label: 'Docs',
      action: 'url',
      url: 'https://example.com',
    });
  });

  it('divider, spacer and results need no cells', () => {
    for (const type of ['divider', 'spacer', 'results']) {
      expect(block({ type })).to.deep.equal({ id: 's1b1', type });
    }
    expect(block({ type: 'results', text: 'Your score' })).to.deep.equal({
      id: 's1b1',
      type: 'results',
      title: 'Your score',
    });
  });

  it('a literal | in an option is written \\|', () => {
    expect(block({ type: 'poll', text: 'Pipe?', options: 'a \\| b|c' }).options).to.deep.equal([
      { id: 'o1', text: 'a | b' },
      { id: 'o2', text: 'c' },
    ]);
  });

  it('a trailing | in options is ignored', () => {
    expect(block({ type: 'checklist', options: 'a|b|' }).items).to.have.length(2);
    expect(block({ type: 'checklist', options: 'a|b|c||' }).items).to.have.length(3);
  });

  it('ignores cells a type does not use', () => {
    expect(
      block({ type: 'heading', text: 'H', options: 'x|y', correct: '1', url: 'nonsense' }),
    ).to.deep.equal({
      id: 's1b1',
      type: 'heading',
      text: 'H',
    });
  });

  it('covers every one of the 39 block types: mapped or reported as unsupported_type', () => {
    expect(BLOCK_TYPES).to.have.length(39);
    const unsupported: readonly string[] = CSV_UNSUPPORTED_TYPES;
    for (const type of BLOCK_TYPES) {
      const { issue } = oneRow(FULL_ROW[type] ?? { type, text: 'x' });
      if (unsupported.includes(type)) expect(issue?.code, type).to.equal('unsupported_type');
      else expect(issue, `${type}: ${issue?.message}`).to.equal(undefined);
    }
  });

  it('every block it builds passes the strict check of libs/courses for machine-made content', () => {
    const rows = Object.values(FULL_ROW).map((row, i) => ({ screen: `S${i}`, ...row }));
    const r = parseCourseCsv(csvOf(rows));
    expect(r.issues).to.deep.equal([]);
    expect(r.screens).to.have.length(rows.length);
    expect(strictCheckScreens(r.screens).dropped).to.deep.equal([]);
  });
});

/** A complete, valid row for every type the CSV format supports. */
const FULL_ROW: Record<string, Cells> = {
  heading: { type: 'heading', text: 'H' },
  text: { type: 'text', text: 'T' },
  image: { type: 'image', text: 'alt', url: 'https://e.com/i.png', caption: 'c' },
  video: { type: 'video', url: 'https://e.com/v.mp4', caption: 'c' },
  audio: { type: 'audio', url: 'https://e.com/a.mp3' },
  embed: { type: 'embed', url: 'https://e.com/w', text: 'Widget' },
  button: { type: 'button', text: 'Go', url: 'https://e.com' },
  divider: { type: 'divider' },
  spacer: { type: 'spacer' },
  quiz_single_choice: {
    type: 'quiz_single_choice',
    text: 'Q',
    options: 'a|b',
    correct: '1',
    explanation: 'e',
  },
  quiz_multiple_choice: { type: 'quiz_multiple_choice', text: 'Q', options: 'a|b|c', correct: '1|2' },
  quiz_true_false: { type: 'quiz_true_false', text: 'S', correct: 'true' },
  fill_in_blank: { type: 'fill_in_blank', text: 'A ___ b', options: 'x|y' },
  flashcard: { type: 'flashcard', text: 'F', back: 'B' },
  match: { type: 'match', text: 'P', options: 'a=1|b=2' },
  results: { type: 'results', text: 'Score' },
  stack: { type: 'stack', options: 'a=1|b' },
  steps: { type: 'steps', options: 'a=1|b' },
  timeline: { type: 'timeline', options: '2001=a|2002=b' },
  accordion: { type: 'accordion', options: 'a=1|b=2' },
  callout: { type: 'callout', text: 'C' },
  code: { type: 'code', text: 'x()', language: 'js' },
  checklist: { type: 'checklist', options: 'a|b' },
  quote: { type: 'quote', text: 'Q', caption: 'A' },
  spec_table: { type: 'spec_table', options: 'k=v' },
  resource: { type: 'resource', text: 'R', url: 'https://e.com/r.pdf' },
  instructor_note: { type: 'instructor_note', text: 'N' },
  poll: { type: 'poll', text: 'P', options: 'a|b' },
  reflection: { type: 'reflection', text: 'R' },
  ranking: { type: 'ranking', text: 'R', options: 'a|b' },
  timed_question: { type: 'timed_question', text: 'Q', options: 'a|b', correct: '2' },
  glossary: { type: 'glossary', options: 'a=1' },
  milestone: { type: 'milestone', text: 'M' },
  markdown: { type: 'markdown', text: '*m*' },
};
