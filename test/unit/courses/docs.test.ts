import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import {
  BLOCK_TYPES,
  GENERATABLE_TYPES,
  GRADED_TYPES,
  strictCheckBlock,
  TEXT_FIELDS,
  validateScreens,
} from '@lectern/courses';

const doc = readFileSync(new URL('../../../docs/blocks.md', import.meta.url), 'utf8');

/** The text of the `### \`type\`` section. */
function section(type: string): string {
  const start = doc.indexOf(`### \`${type}\``);
  if (start < 0) return '';
  const next = doc.indexOf('\n#', start + 4);
  return doc.slice(start, next < 0 ? undefined : next);
}

describe('courses: docs/blocks.md', () => {
  for (const type of BLOCK_TYPES) {
    it(`documents ${type} with an example that passes both checks`, () => {
      const text = section(type);
      expect(text, 'section').not.to.equal('');
      const json = /```json\n([\s\S]*?)\n```/.exec(text);
      expect(json, 'json example').not.to.equal(null);
      const example = JSON.parse(json?.[1] ?? 'null') as { id: string; type: string };
      expect(example.type).to.equal(type);
      expect(validateScreens([{ id: 's', title: 'S', blocks: [example] }])).to.deep.equal([]);
      expect(strictCheckBlock(example)).to.deep.equal([]);
    });

    it(`states whether ${type} is generatable and graded, and its translatable fields`, () => {
      const text = section(type);
      const generatable = (GENERATABLE_TYPES as readonly string[]).includes(type);
      const graded = (GRADED_TYPES as readonly string[]).includes(type);
      expect(text).to.contain(generatable ? '(generatable' : '(never generated');
      expect(text).to.contain(graded ? '**graded**' : 'not graded');
      const fields = TEXT_FIELDS[type];
      const line = fields.length ? fields.map((f) => `\`${f}\``).join(', ') : 'nothing';
      expect(text).to.contain(`Translatable: ${line}.`);
    });
  }

  it('covers the rules, grading, content hash and translation paths', () => {
    for (const heading of [
      '## Write rules',
      '## Strict check',
      '## Grading',
      '## Learner view',
      '## Content hash',
      '## Translation paths',
    ]) {
      expect(doc).to.contain(heading);
    }
  });
});
