import { expect } from 'chai';
import { parseInline, parseMarkdown, parseParagraphs, safeHref } from '@lectern/player';

describe('player text marks and Markdown', () => {
  it('parses bold, italic, code and links', () => {
    expect(parseInline('Fire needs **heat**, *fuel* and `O2`: [more](https://x.example/a)')).to.deep.equal([
      { t: 'text', v: 'Fire needs ' },
      { t: 'strong', c: [{ t: 'text', v: 'heat' }] },
      { t: 'text', v: ', ' },
      { t: 'em', c: [{ t: 'text', v: 'fuel' }] },
      { t: 'text', v: ' and ' },
      { t: 'code', v: 'O2' },
      { t: 'text', v: ': ' },
      { t: 'link', href: 'https://x.example/a', c: [{ t: 'text', v: 'more' }] },
    ]);
  });

  it('shows links to anything but http(s) and mailto as plain text, and raw HTML as text', () => {
    expect(parseInline('[click](javascript:alert(1))')).to.deep.equal([
      { t: 'text', v: 'click' },
      { t: 'text', v: ')' },
    ]);
    expect(safeHref('data:text/html,x')).to.equal(null);
    expect(safeHref('mailto:a@b.example')).to.equal('mailto:a@b.example');
    expect(parseInline('<img src=x onerror=alert(1)>')).to.deep.equal([
      { t: 'text', v: '<img src=x onerror=alert(1)>' },
    ]);
  });

  it('leaves unclosed marks as typed', () => {
    expect(parseInline('2 * 3 and **open')).to.deep.equal([{ t: 'text', v: '2 * 3 and **open' }]);
  });

  it('splits paragraphs on blank lines', () => {
    expect(parseParagraphs('one\ntwo\n\n three ')).to.deep.equal([
      [{ t: 'text', v: 'one two' }],
      [{ t: 'text', v: 'three' }],
    ]);
    expect(parseParagraphs('')).to.deep.equal([]);
  });

  it('parses the block constructs of Markdown', () => {
    const md =
      '# Notes\n\n- one\n- two\n\n1. first\n2. second\n\n> quoted\n\n```bash\necho hi\n```\n\n---\n\nplain *text*';
    expect(parseMarkdown(md)).to.deep.equal([
      { t: 'h', level: 1, c: [{ t: 'text', v: 'Notes' }] },
      { t: 'ul', items: [[{ t: 'text', v: 'one' }], [{ t: 'text', v: 'two' }]] },
      { t: 'ol', start: 1, items: [[{ t: 'text', v: 'first' }], [{ t: 'text', v: 'second' }]] },
      { t: 'quote', c: [{ t: 'p', c: [{ t: 'text', v: 'quoted' }] }] },
      { t: 'pre', lang: 'bash', v: 'echo hi' },
      { t: 'hr' },
      {
        t: 'p',
        c: [
          { t: 'text', v: 'plain ' },
          { t: 'em', c: [{ t: 'text', v: 'text' }] },
        ],
      },
    ]);
  });
});
