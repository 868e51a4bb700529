import { expect } from 'chai';
import { parseCourseCsv, type CsvIssue } from '@lectern/csv-import';
import { oneRow, type Cells } from './csv-helpers.js';

/** Parses one row (line 2 of the file) and returns its issue. */
function issueOf(row: Cells): CsvIssue {
  const { block, issue } = oneRow(row);
  expect(block, 'the row should have been skipped').to.equal(undefined);
  expect(issue).to.not.equal(undefined);
  expect(issue?.row).to.equal(2);
  return issue as CsvIssue;
}

function codes(text: string): [number, string][] {
  return parseCourseCsv(text).issues.map((i) => [i.row, i.code]);
}

describe('parseCourseCsv: row issues', () => {
  it('unknown_type: not one of the 39, with a suggestion for a near miss', () => {
    const i = issueOf({ type: 'headng', text: 'x' });
    expect(i.code).to.equal('unknown_type');
    expect(i.message).to.contain('"headng"').and.contain('did you mean "heading"');
    expect(issueOf({ type: 'video_game', text: 'x' }).code).to.equal('unknown_type');
  });

  it('unknown_type of a megabyte type cell: refused with the cell quoted short, no suggestion looked for', () => {
    const cell = 'heading'.repeat(150_000);
    const i = issueOf({ type: cell, text: 'x' });
    expect(i.code).to.equal('unknown_type');
    expect(i.message).to.contain(`"${'heading'.repeat(12).slice(0, 80)}…"`);
    expect(i.message).to.not.contain('did you mean');
    expect(i.message.length).to.be.below(1_000);
  });

  it('unsupported_type: a real type with no CSV form', () => {
    for (const type of ['hotspot', 'scenario', 'compare', 'slideshow', 'video_chapters']) {
      const i = issueOf({ type, text: 'x' });
      expect(i.code).to.equal('unsupported_type');
      expect(i.message).to.contain(type);
    }
  });

  it('missing_text: a row with only a screen title, and types that need text', () => {
    expect(codes('screen,type,text\nIntro,,\nIntro,text,ok\n')).to.deep.equal([[2, 'missing_text']]);
    for (const type of [
      'heading',
      'text',
      'markdown',
      'quote',
      'code',
      'callout',
      'reflection',
      'flashcard',
      'resource',
      'button',
    ]) {
      expect(issueOf({ type, url: 'https://e.com', back: 'b' }).code, type).to.equal('missing_text');
    }
    expect(issueOf({ type: 'quiz_single_choice', options: 'a|b', correct: '1' }).code).to.equal(
      'missing_text',
    );
    expect(issueOf({ type: 'quiz_true_false', correct: 'true' }).code).to.equal('missing_text');
    expect(issueOf({ type: 'code', text: '\n\n   \n' }).code).to.equal('missing_text');
  });

  it('missing_options: no options, or fewer than the type needs', () => {
    expect(issueOf({ type: 'quiz_single_choice', text: 'Q', correct: '1' }).code).to.equal('missing_options');
    const one = issueOf({ type: 'quiz_single_choice', text: 'Q', options: 'only', correct: '1' });
    expect(one.code).to.equal('missing_options');
    expect(one.message).to.contain('at least 2');
    expect(issueOf({ type: 'poll', text: 'Q', options: 'only' }).code).to.equal('missing_options');
    for (const type of ['timeline', 'accordion', 'steps', 'checklist', 'match', 'ranking']) {
      expect(issueOf({ type, text: 'Q', options: 'a=1' }).code, type).to.equal('missing_options');
    }
    for (const type of ['stack', 'glossary', 'spec_table']) {
      expect(issueOf({ type, text: 'Q' }).code, type).to.equal('missing_options');
    }
    expect(issueOf({ type: 'checklist', options: ' | ' }).code).to.equal('missing_options');
    expect(issueOf({ type: 'fill_in_blank', text: 'a ___ b' }).code).to.equal('missing_options');
  });

  it('bad_options: an empty item in the middle, or an item without the = a pair needs', () => {
    const empty = issueOf({ type: 'quiz_single_choice', text: 'Q', options: 'a||b', correct: '1' });
    expect(empty.code).to.equal('bad_options');
    expect(empty.message).to.contain('Item 2');
    const pair = issueOf({ type: 'match', options: 'France=Paris|Italy' });
    expect(pair.code).to.equal('bad_options');
    expect(pair.message).to.contain('left=right');
    expect(issueOf({ type: 'glossary', options: '=no term' }).code).to.equal('bad_options');
    expect(issueOf({ type: 'accordion', options: 'A=1|Title only' }).code).to.equal('bad_options');
    expect(issueOf({ type: 'timeline', options: '2001=a|2002' }).code).to.equal('bad_options');
  });

  it('too_many_items: a stack of 11 cards (SPEC: at most 10)', () => {
    const options = Array.from({ length: 11 }, (_, i) => `f${i}=b${i}`).join('|');
    const i = issueOf({ type: 'stack', options });
    expect(i.code).to.equal('too_many_items');
    expect(i.message).to.contain('10');
  });

  it('missing_correct: a quiz without `correct`', () => {
    for (const type of ['quiz_single_choice', 'quiz_multiple_choice', 'timed_question']) {
      expect(issueOf({ type, text: 'Q', options: 'a|b' }).code, type).to.equal('missing_correct');
    }
    expect(issueOf({ type: 'quiz_true_false', text: 'Q' }).code).to.equal('missing_correct');
  });

  it('bad_correct: out of range, not a number, repeated, several for a single choice, not true/false', () => {
    const cases: Cells[] = [
      { type: 'quiz_single_choice', text: 'Q', options: 'a|b', correct: '3' },
      { type: 'quiz_single_choice', text: 'Q', options: 'a|b', correct: '0' },
      { type: 'quiz_single_choice', text: 'Q', options: 'a|b', correct: 'b' },
      { type: 'quiz_single_choice', text: 'Q', options: 'a|b', correct: '1.5' },
      { type: 'quiz_single_choice', text: 'Q', options: 'a|b', correct: '1|2' },
      { type: 'timed_question', text: 'Q', options: 'a|b', correct: '1|2' },
      { type: 'quiz_multiple_choice', text: 'Q', options: 'a|b', correct: '1|1' },
      { type: 'quiz_multiple_choice', text: 'Q', options: 'a|b', correct: '1|5' },
      { type: 'quiz_true_false', text: 'Q', correct: 'maybe' },
      { type: 'quiz_true_false', text: 'Q', correct: '1' },
    ];
    for (const row of cases) expect(issueOf(row).code, JSON.stringify(row)).to.equal('bad_correct');
    expect(issueOf(cases[0]).message).to.contain('from 1 to 2');
  });

  it('missing_back: a flashcard with neither back nor explanation', () => {
    expect(issueOf({ type: 'flashcard', text: 'front' }).code).to.equal('missing_back');
  });

  it('bad_blank: fill_in_blank needs exactly one ___ blank', () => {
    expect(issueOf({ type: 'fill_in_blank', text: 'no blank here', options: 'x' }).code).to.equal(
      'bad_blank',
    );
    expect(issueOf({ type: 'fill_in_blank', text: 'only __ two underscores', options: 'x' }).code).to.equal(
      'bad_blank',
    );
    expect(issueOf({ type: 'fill_in_blank', text: '___ and ____', options: 'x' }).code).to.equal('bad_blank');
    expect(issueOf({ type: 'fill_in_blank', text: 'Use {{x}} in ___', options: 'x' }).code).to.equal(
      'bad_blank',
    );
  });

  it('missing_url and bad_url', () => {
    for (const type of ['image', 'video', 'audio', 'embed', 'resource']) {
      expect(issueOf({ type, text: 't' }).code, type).to.equal('missing_url');
    }
    expect(issueOf({ type: 'image', url: 'cat.png' }).code).to.equal('bad_url');
    expect(issueOf({ type: 'video', url: 'javascript:alert(1)' }).code).to.equal('bad_url');
    expect(issueOf({ type: 'button', text: 'Go', url: 'ftp://example.com/f' }).code).to.equal('bad_url');
  });

  it('bad_seconds: not a whole number in 5..600', () => {
    for (const seconds of ['0', '4', '601', '1.5', 'ten', '-10']) {
      const row: Cells = { type: 'timed_question', text: 'Q', options: 'a|b', correct: '1', seconds };
      expect(issueOf(row).code, seconds).to.equal('bad_seconds');
    }
  });

  it('too_many_columns: more filled cells than the header has columns', () => {
    const r = parseCourseCsv('screen,type,text\nA,text,Hello, world\nA,text,"Hello, world"\n');
    expect(r.issues.map((i) => [i.row, i.code])).to.deep.equal([[2, 'too_many_columns']]);
    expect(r.issues[0].message).to.contain('4 cells').and.contain('3 columns');
    expect(r.screens[0].blocks).to.have.length(1);
  });

  it('missing_screen: the first data row has no screen title', () => {
    expect(codes('screen,text\n,orphan\nA,ok\n')).to.deep.equal([[2, 'missing_screen']]);
  });

  it('unclosed_quote: reported where the quoted cell starts; earlier rows are kept', () => {
    const r = parseCourseCsv('screen,text\nA,ok\nA,"never closed\nB,lost\n');
    expect(r.issues.map((i) => [i.row, i.code])).to.deep.equal([[3, 'unclosed_quote']]);
    expect(r.screens.map((s) => s.blocks.length)).to.deep.equal([1]);
  });

  it('a stray quote inside an unquoted cell is kept as text, not an error', () => {
    const r = parseCourseCsv('screen,text\nA,She said "hi" twice\n');
    expect(r.issues).to.deep.equal([]);
    expect(r.screens[0].blocks[0]).to.deep.include({ text: 'She said "hi" twice' });
  });

  it('skips only the bad rows, imports the rest', () => {
    const r = parseCourseCsv('screen,type,text\nA,text,one\nA,nope,two\nA,text,three\n');
    expect(r.issues.map((i) => [i.row, i.code])).to.deep.equal([[3, 'unknown_type']]);
    expect(r.screens[0].blocks.map((b) => b.text)).to.deep.equal(['one', 'three']);
    expect(r.rowCount).to.equal(3);
  });

  it('returns screens: [] with every issue when nothing is readable', () => {
    const r = parseCourseCsv('screen,type,text\nA,nope,x\nA,,\nB,quiz_single_choice,Q\n');
    expect(r.screens).to.deep.equal([]);
    expect(r.issues.map((i) => [i.row, i.code])).to.deep.equal([
      [2, 'unknown_type'],
      [3, 'missing_text'],
      [4, 'missing_options'],
    ]);
  });
});

describe('parseCourseCsv: row numbers are physical line numbers', () => {
  it('counts the header as line 1 and blank lines as lines', () => {
    expect(codes('screen,type,text\n\n\nA,nope,x\n')).to.deep.equal([[4, 'unknown_type']]);
  });

  it('counts blank lines before the header', () => {
    expect(codes('\n\nscreen,type,text\nA,nope,x\n')).to.deep.equal([[4, 'unknown_type']]);
  });

  it('gives the line where a row starts, after multi-line cells (LF and CRLF)', () => {
    for (const eol of ['\n', '\r\n']) {
      const text = [
        'screen,type,text',
        'A,text,"one',
        'two',
        'three"',
        'A,nope,"x',
        'y"',
        'A,bad,z',
        '',
      ].join(eol);
      expect(codes(text), JSON.stringify(eol)).to.deep.equal([
        [5, 'unknown_type'],
        [7, 'unknown_type'],
      ]);
    }
  });

  it('works with a BOM and old Mac CR line ends', () => {
    expect(codes('\uFEFFscreen,type,text\rA,text,ok\rA,nope,x\r')).to.deep.equal([[3, 'unknown_type']]);
  });

  it('lists issues in file order', () => {
    const r = parseCourseCsv('screen,type,text,extra\nA,nope,x\n,,,\nA,heading,\nA,"unclosed\n');
    expect(r.issues.map((i) => [i.row, i.code])).to.deep.equal([
      [1, 'unknown_column'],
      [2, 'unknown_type'],
      [4, 'missing_text'],
      [5, 'unclosed_quote'],
    ]);
  });
});
