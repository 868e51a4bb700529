import { expect } from 'chai';
import { CsvImportIssue } from '@lectern/contracts';
import { importTitle } from '@lectern/authoring';
import { parseCourseCsv, toImportIssues } from '@lectern/csv-import';

describe('csv-import: the API shape of issues and the course title', () => {
  it('every parser issue becomes {row, code, path: ["row", row], message}, valid against the contract', () => {
    const { issues } = parseCourseCsv('screen,type,text,optoins\nA,quizz,x,\nA,text,,\n');
    const out = toImportIssues(issues);
    expect(out.map((i) => [i.row, i.code])).to.deep.equal([
      [1, 'unknown_column'],
      [2, 'unknown_type'],
      [3, 'missing_text'],
    ]);
    for (const [i, issue] of out.entries()) {
      expect(issue).to.deep.equal({
        row: issues[i].row,
        code: issues[i].code,
        path: ['row', issues[i].row],
        message: issues[i].message,
      });
      expect(CsvImportIssue.safeParse(issue).success).to.equal(true);
    }
  });

  it('the title is the ?title when given, else the first screen title, cut to 500 characters', () => {
    expect(importTitle('  My course ', 'Intro')).to.equal('My course');
    expect(importTitle(null, 'Intro')).to.equal('Intro');
    expect(importTitle('   ', 'Intro')).to.equal('Intro');
    expect(importTitle(null, 'é'.repeat(600))).to.have.length(500);
  });
});
