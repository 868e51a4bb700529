import { expect } from 'chai';
import {
  CSV_MAX_ROWS,
  CsvRowLimitError,
  detectDelimiter,
  isCsvRowLimitError,
  noReadableScreensError,
  parseCourseCsv,
} from '@lectern/csv-import';
import { AppError } from '@lectern/errors';

describe('parseCourseCsv: reading the file', () => {
  it('reads a plain comma-separated file', () => {
    const r = parseCourseCsv('screen,type,text\nIntro,heading,Welcome\nIntro,text,Hello there\n');
    expect(r.issues).to.deep.equal([]);
    expect(r.rowCount).to.equal(2);
    expect(r.screens).to.deep.equal([
      {
        id: 's1',
        title: 'Intro',
        blocks: [
          { id: 's1b1', type: 'heading', text: 'Welcome' },
          { id: 's1b2', type: 'text', text: 'Hello there' },
        ],
      },
    ]);
  });

  it('accepts a Buffer and strips a UTF-8 BOM (the header is still recognised)', () => {
    const bytes = Buffer.concat([
      Buffer.from([0xef, 0xbb, 0xbf]),
      Buffer.from('screen,text\nÉté,Ça marche\n', 'utf8'),
    ]);
    const r = parseCourseCsv(bytes);
    expect(r.issues).to.deep.equal([]);
    expect(r.screens[0]).to.deep.include({ title: 'Été' });
    expect(r.screens[0].blocks[0]).to.deep.include({ text: 'Ça marche' });
  });

  it('strips a BOM given in a string', () => {
    const r = parseCourseCsv('\uFEFFScreen;Text\nA;b\n');
    expect(r.issues).to.deep.equal([]);
    expect(r.screens[0].title).to.equal('A');
  });

  it('reads bytes that are not valid UTF-8 as Windows-1252 (Excel "CSV" export)', () => {
    const bytes = Buffer.from('screen,text\nCaf\xe9,na\xefve \x80 5\n', 'latin1');
    const r = parseCourseCsv(bytes);
    expect(r.screens[0].title).to.equal('Café');
    expect(r.screens[0].blocks[0]).to.deep.include({ text: 'naïve € 5' });
  });

  for (const [name, d] of [
    ['comma', ','],
    ['semicolon', ';'],
    ['tab', '\t'],
  ] as const) {
    it(`auto-detects the ${name} delimiter from the header line`, () => {
      const text = [
        ['screen', 'type', 'text', 'options', 'correct'].join(d),
        ['Quiz', 'quiz_single_choice', '"Pick, one; please\tnow"', 'a|b', '1'].join(d),
      ].join('\n');
      expect(detectDelimiter(text)).to.equal(d);
      const r = parseCourseCsv(text);
      expect(r.issues).to.deep.equal([]);
      expect(r.screens[0].blocks[0]).to.deep.include({
        type: 'quiz_single_choice',
        question: 'Pick, one; please\tnow',
      });
    });
  }

  it('takes the delimiter from the header only, not from commas in later rows', () => {
    const r = parseCourseCsv('screen;text\nA;one, two, three, four\n');
    expect(r.issues).to.deep.equal([]);
    expect(r.screens[0].blocks[0]).to.deep.include({ text: 'one, two, three, four' });
  });

  it('keeps quoted multi-line cells, with escaped quotes, as one cell', () => {
    const r = parseCourseCsv('screen,text\nA,"Line one\nLine ""two""\n\nLine four"\nA,after\n');
    expect(r.issues).to.deep.equal([]);
    expect(r.screens[0].blocks.map((b) => b.text)).to.deep.equal([
      'Line one\nLine "two"\n\nLine four',
      'after',
    ]);
  });

  it('handles CRLF line ends, and normalises CRLF inside cells to \\n', () => {
    const r = parseCourseCsv('screen,type,text\r\nA,heading,Hi\r\nA,text,"x\r\ny"\r\n');
    expect(r.issues).to.deep.equal([]);
    expect(r.screens[0].blocks).to.deep.equal([
      { id: 's1b1', type: 'heading', text: 'Hi' },
      { id: 's1b2', type: 'text', text: 'x\ny' },
    ]);
  });

  it('skips blank lines and rows of empty cells, and does not count them as data rows', () => {
    const r = parseCourseCsv('\n\nscreen,text\n\nA,one\n,,\n  \n\r\nA,two\n\n');
    expect(r.issues).to.deep.equal([]);
    expect(r.rowCount).to.equal(2);
    expect(r.screens[0].blocks).to.have.length(2);
  });

  it('matches column names case-insensitively and ignoring surrounding spaces', () => {
    const r = parseCourseCsv(' SCREEN , Type ,TEXT\nA,Heading,Hi\n');
    expect(r.issues).to.deep.equal([]);
    expect(r.screens[0].blocks[0]).to.deep.equal({ id: 's1b1', type: 'heading', text: 'Hi' });
  });

  it('accepts columns in any order, and missing optional columns', () => {
    const r = parseCourseCsv('text,screen\nHello,A\n');
    expect(r.screens).to.deep.equal([
      { id: 's1', title: 'A', blocks: [{ id: 's1b1', type: 'text', text: 'Hello' }] },
    ]);
  });

  it('normalises the type: case, spaces and hyphens, and a few aliases', () => {
    const r = parseCourseCsv(
      'screen,type,text,options,correct\nA,Quiz Single-Choice,Q,a|b,1\nA,paragraph,P\nA,TRUE_FALSE,T,,true\nA,,default\n',
    );
    expect(r.issues).to.deep.equal([]);
    expect(r.screens[0].blocks.map((b) => b.type)).to.deep.equal([
      'quiz_single_choice',
      'text',
      'quiz_true_false',
      'text',
    ]);
  });

  it('ignores trailing empty cells beyond the header (spreadsheet exports)', () => {
    const r = parseCourseCsv('screen,text\nA,one,,,\n');
    expect(r.issues).to.deep.equal([]);
    expect(r.screens[0].blocks[0]).to.deep.include({ text: 'one' });
  });

  it('trims cells, but keeps the inner whitespace of quoted cells', () => {
    const r = parseCourseCsv('screen,text\n  A  ,  "  spaced  "  \n');
    expect(r.screens[0].title).to.equal('A');
    expect(r.screens[0].blocks[0]).to.deep.include({ text: 'spaced' });
  });
});

describe('parseCourseCsv: screens and ids', () => {
  it('groups consecutive rows with the same screen title into one screen', () => {
    const r = parseCourseCsv('screen,text\nA,1\nA,2\nB,3\nB,4\nB,5\nC,6\n');
    expect(r.screens.map((s) => [s.id, s.title, s.blocks.map((b) => b.id)])).to.deep.equal([
      ['s1', 'A', ['s1b1', 's1b2']],
      ['s2', 'B', ['s2b1', 's2b2', 's2b3']],
      ['s3', 'C', ['s3b1']],
    ]);
  });

  it('starts a new screen when a title comes back after another one', () => {
    const r = parseCourseCsv('screen,text\nA,1\nB,2\nA,3\n');
    expect(r.screens.map((s) => `${s.id}:${s.title}`)).to.deep.equal(['s1:A', 's2:B', 's3:A']);
  });

  it('compares titles exactly (after trimming): case differences make a new screen', () => {
    const r = parseCourseCsv('screen,text\nIntro,1\n Intro ,2\nintro,3\n');
    expect(r.screens.map((s) => s.blocks.length)).to.deep.equal([2, 1]);
  });

  it('continues the screen above when the screen cell is empty', () => {
    const r = parseCourseCsv('screen,text\nA,1\n,2\n,3\nB,4\n,5\n');
    expect(r.screens.map((s) => s.blocks.length)).to.deep.equal([3, 2]);
  });

  it('numbers screens and blocks without gaps when rows or whole screens are unreadable', () => {
    const r = parseCourseCsv('screen,type,text\nA,text,1\nA,nope,2\nA,text,3\nB,nope,x\nC,text,4\n');
    expect(
      r.screens.map((s) => [s.id, s.title, s.blocks.map((b) => `${b.id}=${String(b.text)}`)]),
    ).to.deep.equal([
      ['s1', 'A', ['s1b1=1', 's1b2=3']],
      ['s2', 'C', ['s2b1=4']],
    ]);
  });

  it('is deterministic: the same input gives the same output', () => {
    const text = 'screen,type,text,options,correct\nA,quiz_multiple_choice,Q,a|b|c,1|3\nB,heading,H\n';
    expect(parseCourseCsv(text)).to.deep.equal(parseCourseCsv(text));
  });
});

describe('parseCourseCsv: empty input and header problems', () => {
  for (const [name, input] of [
    ['an empty string', ''],
    ['an empty Buffer', Buffer.alloc(0)],
    ['only whitespace and line breaks', ' \r\n\n\t\n'],
    ['only a BOM', '\uFEFF'],
  ] as const) {
    it(`returns no screens and an empty_file issue for ${name}`, () => {
      const r = parseCourseCsv(input);
      expect(r.screens).to.deep.equal([]);
      expect(r.rowCount).to.equal(0);
      expect(r.issues).to.have.length(1);
      expect(r.issues[0]).to.include({ row: 1, code: 'empty_file' });
    });
  }

  it('returns no screens and a no_rows issue on the header line for a header-only file', () => {
    for (const input of ['screen,type,text', 'screen,type,text\r\n', '\nscreen,type,text\n\n,,\n']) {
      const r = parseCourseCsv(input);
      expect(r.screens).to.deep.equal([]);
      expect(r.rowCount).to.equal(0);
      expect(r.issues.map((i) => i.code)).to.deep.equal(['no_rows']);
    }
    expect(parseCourseCsv('\nscreen,type,text\n').issues[0].row).to.equal(2);
  });

  it('reports missing_column on line 1 when the header has no screen column', () => {
    const r = parseCourseCsv('Intro,heading,Welcome\nIntro,text,Hello\n');
    expect(r.screens).to.deep.equal([]);
    expect(r.rowCount).to.equal(1);
    expect(r.issues.find((i) => i.code === 'missing_column')).to.deep.include({ row: 1 });
    expect(r.issues.find((i) => i.code === 'missing_column')?.message).to.contain('"screen"');
  });

  it('reports unknown_column on the header line and still imports the rows', () => {
    const r = parseCourseCsv('screen,text,notes\nA,hello,remember this\n');
    expect(r.issues).to.deep.equal([{ row: 1, code: 'unknown_column', message: r.issues[0].message }]);
    expect(r.issues[0].message).to.contain('"notes"');
    expect(r.screens[0].blocks[0]).to.deep.equal({ id: 's1b1', type: 'text', text: 'hello' });
  });

  it('reports duplicate_column and reads the first of the two', () => {
    const r = parseCourseCsv('screen,text,Text\nA,first,second\n');
    expect(r.issues.map((i) => [i.row, i.code])).to.deep.equal([[1, 'duplicate_column']]);
    expect(r.screens[0].blocks[0]).to.deep.include({ text: 'first' });
  });

  it('noReadableScreensError is a 400 invalid_request carrying the row issues', () => {
    const r = parseCourseCsv('screen,type,text\nA,nope,x\n');
    expect(r.screens).to.deep.equal([]);
    const err = noReadableScreensError(r.issues);
    expect(err).to.be.instanceOf(AppError);
    expect(err.code).to.equal('invalid_request');
    expect(err.details).to.deep.equal({ issues: r.issues });
  });
});

describe('parseCourseCsv: the row limit', () => {
  function rows(n: number): string {
    const lines = ['screen,text'];
    for (let i = 1; i <= n; i++) lines.push(`Screen ${Math.ceil(i / 10)},Paragraph ${i}`);
    return lines.join('\n') + '\n';
  }

  it('is 2,000 data rows by default (SPEC.md Limits)', () => {
    expect(CSV_MAX_ROWS).to.equal(2000);
  });

  it('imports exactly 2,000 data rows', () => {
    const r = parseCourseCsv(rows(2000));
    expect(r.issues).to.deep.equal([]);
    expect(r.rowCount).to.equal(2000);
    expect(r.screens).to.have.length(200);
    expect(r.screens.reduce((n, s) => n + s.blocks.length, 0)).to.equal(2000);
  });

  it('refuses 2,001 data rows with a 400 naming the limit', () => {
    let caught: unknown;
    try {
      parseCourseCsv(rows(2001));
    } catch (err) {
      caught = err;
    }
    expect(isCsvRowLimitError(caught)).to.equal(true);
    const err = caught as CsvRowLimitError;
    expect(err).to.be.instanceOf(AppError);
    expect(err.code).to.equal('invalid_request');
    expect(err.limit).to.equal(2000);
    expect(err.message).to.contain('2,000');
    expect(err.row).to.equal(2002);
    expect(err.details).to.deep.equal({
      limit: 2000,
      issues: [{ row: 2002, code: 'too_many_rows', message: err.message }],
    });
  });

  it('does not count blank lines or the header toward the limit', () => {
    const text = rows(2000).replace(/\n/g, '\n\n');
    expect(parseCourseCsv(text).rowCount).to.equal(2000);
  });

  it('counts unreadable rows toward the limit (they are data rows)', () => {
    const text = 'screen,type,text\n' + 'A,nope,x\n'.repeat(3);
    expect(() => parseCourseCsv(text, { maxRows: 2 })).to.throw(CsvRowLimitError);
    expect(parseCourseCsv(text, { maxRows: 3 }).rowCount).to.equal(3);
  });

  it('takes a custom maxRows and refuses a nonsensical one', () => {
    expect(() => parseCourseCsv(rows(11), { maxRows: 10 })).to.throw(CsvRowLimitError, '10 data rows');
    expect(parseCourseCsv(rows(10), { maxRows: 10 }).rowCount).to.equal(10);
    expect(() => parseCourseCsv(rows(1), { maxRows: 0 })).to.throw(RangeError);
    expect(() => parseCourseCsv(rows(1), { maxRows: 1.5 })).to.throw(RangeError);
  });
});
