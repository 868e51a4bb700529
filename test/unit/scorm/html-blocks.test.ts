import { expect } from 'chai';
import { htmlToBlocks } from '@lectern/scorm';
import { validateScreens } from '@lectern/courses';

const blocksOf = (html: string) => htmlToBlocks(html, 'p.html').blocks;

describe('scorm: HTML → the nearest blocks', () => {
  it('headings (h4–h6 become level 3), paragraphs with bold, italic and web links, loose text', () => {
    expect(
      blocksOf(
        '<h1>A</h1><h2>B</h2><h5>C</h5><p>x <strong>y</strong> <em>z</em> <a href="https://e.com">l</a> <a href="p2.html">local</a></p><div>loose <span>text</span></div>',
      ),
    ).to.deep.equal([
      { type: 'heading', text: 'A', level: 1 },
      { type: 'heading', text: 'B', level: 2 },
      { type: 'heading', text: 'C', level: 3 },
      { type: 'text', text: 'x **y** *z* [l](https://e.com) local' },
      { type: 'text', text: 'loose text' },
    ]);
  });

  it('lists → markdown lists (nested, ordered); tables → spec_table (two columns) or a markdown table', () => {
    expect(blocksOf('<ol><li>a<ul><li>b</li></ul></li><li>c</li></ol>')).to.deep.equal([
      { type: 'markdown', markdown: '1. a\n  - b\n2. c' },
    ]);
    expect(
      blocksOf('<table><tr><td>Weight</td><td>6 kg</td></tr><tr><td>Range</td><td>4 m</td></tr></table>'),
    ).to.deep.equal([
      {
        type: 'spec_table',
        rows: [
          { id: 'r1', label: 'Weight', value: '6 kg' },
          { id: 'r2', label: 'Range', value: '4 m' },
        ],
      },
    ]);
    expect(blocksOf('<table><tr><td>a|b</td><td>c</td><td>d</td></tr></table>')).to.deep.equal([
      { type: 'markdown', markdown: '| a\\|b | c | d |\n| --- | --- | --- |' },
    ]);
  });

  it('blockquote → quote, pre → code; scripts, styles and media are dropped with one warning each', () => {
    const out = htmlToBlocks(
      '<head><script>1</script><style>p{}</style></head><body><blockquote>Q</blockquote><pre>\nlet x;\n</pre><img src=a><video></video><script>2</script></body>',
      'p.html',
    );
    expect(out.blocks).to.deep.equal([
      { type: 'quote', text: 'Q' },
      { type: 'code', code: 'let x;' },
    ]);
    expect(out.warnings.map((w) => [w.code, w.path])).to.deep.equal([
      ['media_ignored', 'p.html'],
      ['script_ignored', 'p.html'],
    ]);
  });

  it('radio and checkbox groups in a fieldset → single/multiple choice; data-correct marks the key', () => {
    const out = htmlToBlocks(
      `<form>
        <fieldset><legend>Pick one</legend><input type=radio name=a id=a1><label for=a1>One</label><input type=radio name=a id=a2 data-correct><label for=a2>Two</label></fieldset>
        <fieldset><legend>Pick many</legend><label><input type=checkbox name=b>X</label><label><input type=checkbox name=b>Y</label></fieldset>
      </form>`,
      'q.html',
    );
    expect(out.blocks).to.deep.equal([
      {
        type: 'quiz_single_choice',
        question: 'Pick one',
        options: [
          { id: 'o1', text: 'One' },
          { id: 'o2', text: 'Two', correct: true },
        ],
      },
      {
        type: 'quiz_multiple_choice',
        question: 'Pick many',
        options: [
          { id: 'o1', text: 'X' },
          { id: 'o2', text: 'Y' },
        ],
      },
    ]);
    expect(out.warnings.map((w) => w.code)).to.deep.equal(['quiz_answer_unknown']);
  });

  it('whatever it maps passes the course write rules', () => {
    const { blocks } = htmlToBlocks(
      '<h1>T</h1><p>p</p><ul><li>a</li></ul><table><tr><td>1</td><td>2</td></tr></table><blockquote>q</blockquote><pre>c</pre><fieldset><legend>Q</legend><input type=radio name=x></fieldset>',
      'p.html',
    );
    const screens = [{ id: 's1', title: 'S', blocks: blocks.map((b, i) => ({ ...b, id: `b${i}` })) }];
    expect(validateScreens(screens)).to.deep.equal([]);
  });

  it('the page title is read from <title>', () => {
    expect(htmlToBlocks('<title> Page  one </title><p>x</p>', 'p.html').title).to.equal('Page one');
  });
});
