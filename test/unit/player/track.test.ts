import { expect } from 'chai';
import { gradeAnswer, learnerBlock, unkeyedItemId } from '@lectern/grading';
import { learnerItemId, stripAnswerKeys, type Block } from '@lectern/courses';
import { serverAnswer, type PlayerBlock } from '@lectern/player';

/**
 * track=1: the package renders ranking items and match sides under its own ids; the tracking run's server
 * names them with its keyed ids. `serverAnswer` maps one to the other so the server grades what the package
 * graded.
 */
describe('player: track=1 answers in the server ids', () => {
  const secret = 'server-secret';
  const ranking: Block = {
    id: 'rk',
    type: 'ranking',
    items: [
      { id: 'r1', text: 'First' },
      { id: 'r2', text: 'Second' },
      { id: 'r3', text: 'Same' },
      { id: 'r4', text: 'Same' },
    ],
  };
  const match: Block = {
    id: 'mt',
    type: 'match',
    pairs: [
      { id: 'p1', left: 'A', right: 'one' },
      { id: 'p2', left: 'B', right: 'two' },
    ],
  };
  const local = (b: Block) => learnerBlock(b, unkeyedItemId) as PlayerBlock;
  const served = (b: Block) =>
    stripAnswerKeys([{ id: 's', title: '', blocks: [b] }], { secret })[0].blocks[0];

  it('a ranking answer keeps its verdict, right or wrong, items of equal text included', () => {
    const ids = (order: string[]) => order.map((id) => unkeyedItemId('rk', id));
    for (const order of [
      ['r1', 'r2', 'r3', 'r4'],
      ['r1', 'r2', 'r4', 'r3'],
      ['r2', 'r1', 'r3', 'r4'],
    ]) {
      const answer = ids(order);
      const mapped = serverAnswer(local(ranking), served(ranking), answer);
      expect(gradeAnswer(ranking, mapped, (b, i) => learnerItemId(b, i, { secret }))).to.equal(
        gradeAnswer(ranking, answer, unkeyedItemId),
      );
    }
  });

  it('a match answer keeps its verdict', () => {
    for (const [a, b] of [
      ['p1', 'p2'],
      ['p2', 'p1'],
    ]) {
      const answer = { p1: unkeyedItemId('mt', a), p2: unkeyedItemId('mt', b) };
      const mapped = serverAnswer(local(match), served(match), answer);
      expect(mapped).to.deep.equal({
        p1: learnerItemId('mt', a, { secret }),
        p2: learnerItemId('mt', b, { secret }),
      });
    }
  });

  it('other answers and unknown blocks pass unchanged', () => {
    expect(serverAnswer({ id: 'q', type: 'quiz_single_choice' }, undefined, 'a')).to.equal('a');
    expect(serverAnswer(local(ranking), undefined, ['x'])).to.deep.equal(['x']);
  });
});
