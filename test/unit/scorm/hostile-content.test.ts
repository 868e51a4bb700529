import { expect } from 'chai';
import { isAppError } from '@lectern/errors';
import { HTML_CAPS, XML_CAPS, htmlToBlocks, parseXml } from '@lectern/scorm';

/** The `issues[0].code` a call is refused with, or null when it returns. */
function refusal(fn: () => unknown): string | null {
  try {
    fn();
  } catch (err) {
    if (!isAppError(err)) throw err;
    return err.issues?.[0]?.code ?? err.code;
  }
  return null;
}

describe('scorm: hostile content is bounded (depth caps, node budgets, no argument spreads)', () => {
  it('HTML nested one level past the cap is refused (too_deep, naming the page); at the cap it maps', () => {
    const nested = (levels: number) => '<div>'.repeat(levels) + 'x' + '</div>'.repeat(levels);
    // <html> and <body> are not written: htmlparser2 adds no implied elements, so the divs are the tree.
    expect(refusal(() => htmlToBlocks(nested(HTML_CAPS.maxDepth), 'p.html'))).to.equal(null);
    expect(htmlToBlocks(nested(HTML_CAPS.maxDepth), 'p.html').blocks).to.deep.equal([
      { type: 'text', text: 'x' },
    ]);
    expect(refusal(() => htmlToBlocks(nested(HTML_CAPS.maxDepth + 1), 'p.html'))).to.equal('too_deep');
    expect(refusal(() => htmlToBlocks('<ul><li>'.repeat(20_000), 'p.html'))).to.equal('too_deep');
    expect(refusal(() => htmlToBlocks('<p>' + '<b>'.repeat(30_000), 'p.html'))).to.equal('too_deep');
  });

  it('a flat page maps at most maxBlocks + 1 blocks and says it was truncated; a small one is not', () => {
    const mapped = htmlToBlocks('<p>x</p>'.repeat(130_000), 'p.html', { maxBlocks: 500 });
    expect(mapped.truncated).to.equal(true);
    expect(mapped.blocks.length).to.be.within(501, 502);
    expect(htmlToBlocks('<p>x</p>'.repeat(3), 'p.html', { maxBlocks: 500 }).truncated).to.equal(false);
  });

  it('a page past the element budget is cut, keeping what came before', () => {
    const mapped = htmlToBlocks('<h1>First</h1>' + '<br>'.repeat(HTML_CAPS.maxElements + 10), 'p.html');
    expect(mapped.truncated).to.equal(true);
    expect(mapped.blocks[0]).to.deep.equal({ type: 'heading', text: 'First', level: 1 });
  });

  it('a table of 200,000 rows and a quiz of 20,000 labelled options map without spreads or rescans', () => {
    const rows = '<tr><td>a</td><td>b</td><td>c</td></tr>'.repeat(200_000);
    const [table] = htmlToBlocks(`<table>${rows}</table>`, 'p.html').blocks;
    expect(table.type).to.equal('markdown');
    const options = Array.from(
      { length: 20_000 },
      (_, i) => `<input type="radio" name="q" id="o${i}"><label for="o${i}">Option ${i}</label>`,
    ).join('');
    const [quiz] = htmlToBlocks(`<fieldset><legend>Q</legend>${options}</fieldset>`, 'p.html').blocks;
    expect(quiz.type).to.equal('quiz_single_choice');
    const opts = quiz.options as { text: string }[];
    expect(opts).to.have.length(20_000);
    expect(opts[19_999].text).to.equal('Option 19999');
  });

  it('a manifest: nesting past the cap → too_deep, elements past the budget → too_many_nodes', () => {
    const nested = (levels: number) => '<m>' + '<x>'.repeat(levels - 1) + '</x>'.repeat(levels - 1) + '</m>';
    expect(refusal(() => parseXml(Buffer.from(nested(XML_CAPS.maxDepth)), 'm.xml'))).to.equal(null);
    expect(refusal(() => parseXml(Buffer.from(nested(XML_CAPS.maxDepth + 1)), 'm.xml'))).to.equal('too_deep');
    expect(refusal(() => parseXml(Buffer.from(nested(300_000)), 'm.xml'))).to.equal('too_deep');
    const flat = (n: number) => `<m>${'<x a="/>"/>'.repeat(n - 1)}<!-- <y> --><![CDATA[<z>]]></m>`;
    expect(refusal(() => parseXml(Buffer.from(flat(XML_CAPS.maxElements)), 'm.xml'))).to.equal(null);
    expect(refusal(() => parseXml(Buffer.from(flat(XML_CAPS.maxElements + 1)), 'm.xml'))).to.equal(
      'too_many_nodes',
    );
  });
});
