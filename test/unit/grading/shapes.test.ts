import { expect } from 'chai';
import { blockFieldsOf } from '@lectern/contracts';
import { GRADED_TYPES, fitsShape, unkeyedItemId } from '@lectern/grading';
import { VALID_BLOCKS, clone } from '../courses/fixtures.js';

/**
 * @lectern/grading checks the graded blocks' fields by hand (the browser bundle carries no zod); these tests
 * hold that check against the contract's zod schema, value by value, so the two cannot drift apart.
 */
const ODD_VALUES: unknown[] = [
  undefined,
  null,
  0,
  -1,
  0.5,
  1,
  1.5,
  7,
  5.5,
  600,
  601,
  Infinity,
  '',
  'x',
  true,
  [],
  ['a'],
  [1],
  {},
  [{}],
  [{ id: 1 }],
  [{ id: 'a', correct: 'yes' }],
  [{ id: 'a', answers: ['x', 2] }],
  [{ id: 'a', x: 2, y: 0, radius: 0.1 }],
  [{ id: 'a', x: 0.5, y: 0.5, radius: 0 }],
  [{ id: 'a', x: 0.5, y: 0.5, radius: 0.2, correct: true, label: 'l' }],
  [{ id: 'a', left: 'l', right: 5 }],
  [{ id: 'a', text: 't', outcome: 1 }],
  [null],
];

describe('grading: hand-written field rule = contract schema', () => {
  for (const type of GRADED_TYPES) {
    it(`${type}: every field set to odd values is judged as zod judges it`, () => {
      const base = clone(VALID_BLOCKS[type]);
      const fields = Object.keys(blockFieldsOf(type).shape);
      expect(fitsShape(type, base)).to.equal(true);
      let cases = 0;
      for (const field of fields) {
        for (const value of ODD_VALUES) {
          const block = { ...base, [field]: value };
          const zod = blockFieldsOf(type).safeParse(block).success;
          expect(fitsShape(type, block), `${type}.${field} = ${JSON.stringify(value)}`).to.equal(zod);
          cases += 1;
        }
      }
      expect(cases).to.be.greaterThan(50);
    });
  }

  it('unkeyedItemId is stable, opaque and differs per block and item', () => {
    expect(unkeyedItemId('b1', 'r1')).to.equal(unkeyedItemId('b1', 'r1'));
    expect(unkeyedItemId('b1', 'r1')).to.match(/^k_[0-9a-f]{16}$/);
    expect(unkeyedItemId('b1', 'r1')).not.to.equal(unkeyedItemId('b1', 'r2'));
    expect(unkeyedItemId('b1', 'r1')).not.to.equal(unkeyedItemId('b2', 'r1'));
  });
});
