import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { strictCheckScreens } from '@lectern/courses';
import { parseCourseCsv } from '@lectern/csv-import';

/** The example in docs/ is part of the documentation; it must import cleanly. */
describe('docs/examples/course.csv', () => {
  const file = readFileSync(new URL('../../../docs/examples/course.csv', import.meta.url));

  it('imports with no issues', () => {
    const r = parseCourseCsv(file);
    expect(r.issues).to.deep.equal([]);
    expect(r.screens.map((s) => s.title)).to.deep.equal([
      'Welcome',
      'From bean to cup',
      'Check yourself',
      'Words to know',
      'Brew it',
      'Wrap-up',
    ]);
    expect(r.rowCount).to.equal(r.screens.reduce((n, s) => n + s.blocks.length, 0));
  });

  it('passes the strict check of libs/courses', () => {
    expect(strictCheckScreens(parseCourseCsv(file).screens).dropped).to.deep.equal([]);
  });

  it('shows the multi-line code cell as one block', () => {
    const code = parseCourseCsv(file)
      .screens.flatMap((s) => s.blocks)
      .find((b) => b.type === 'code');
    expect(code).to.deep.include({
      language: 'python',
      code: 'ratio = water_ml / 16\nfor step in steps:\n    pour(step)',
    });
  });
});
