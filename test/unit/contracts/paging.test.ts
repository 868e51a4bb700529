import { expect } from 'chai';
import { PAGE_DEFAULT, PAGE_MAX, PagingQuery, paged, parsePaging } from '@lectern/contracts';

describe('contracts: parsePaging (SPEC paging rules)', () => {
  it('default 50, maximum 10,000', () => {
    expect(PAGE_DEFAULT).to.equal(50);
    expect(PAGE_MAX).to.equal(10_000);
    expect(parsePaging({})).to.deep.equal({ limit: 50, offset: 0 });
  });

  it('takes sensible values as given', () => {
    expect(parsePaging({ limit: '1', offset: '0' })).to.deep.equal({ limit: 1, offset: 0 });
    expect(parsePaging({ limit: '10000', offset: '20' })).to.deep.equal({ limit: 10_000, offset: 20 });
    expect(parsePaging({ limit: ' 25 ' }).limit).to.equal(25);
  });

  it('a limit above the maximum is served at the maximum', () => {
    for (const v of ['10001', '20000', '99999999999'])
      expect(parsePaging({ limit: v }).limit, v).to.equal(10_000);
  });

  it('a nonsensical limit falls back to the default', () => {
    for (const v of [
      'abc',
      '-5',
      '0',
      '-0',
      '1.5',
      '',
      ' ',
      '1e3',
      '0x10',
      '10abc',
      'Infinity',
      'NaN',
      '99999999999999999999999',
    ]) {
      expect(parsePaging({ limit: v }).limit, JSON.stringify(v)).to.equal(50);
    }
    for (const v of [undefined, null, 5, {}, ['abc']])
      expect(parsePaging({ limit: v }).limit, JSON.stringify(v)).to.equal(50);
  });

  it('a repeated parameter uses its first value', () => {
    expect(parsePaging({ limit: ['7', '9'] }).limit).to.equal(7);
  });

  it('a nonsensical offset falls back to 0', () => {
    for (const v of ['abc', '-5', '1.5', '']) expect(parsePaging({ offset: v }).offset, v).to.equal(0);
  });

  it('the query contract accepts anything a client may send for limit/offset (never a 400)', () => {
    for (const q of [{}, { limit: 'abc' }, { limit: ['1', '2'] }, { offset: '-1' }])
      expect(PagingQuery.safeParse(q).success, JSON.stringify(q)).to.equal(true);
  });
});

describe('contracts: paged', () => {
  it('reports the applied limit, offset, total and hasMore', () => {
    expect(paged([1, 2], 5, { limit: 2, offset: 0 })).to.deep.equal({
      data: [1, 2],
      pagination: { limit: 2, offset: 0, total: 5, hasMore: true },
    });
    expect(paged([5], 5, { limit: 2, offset: 4 }).pagination.hasMore).to.equal(false);
    expect(paged([3, 4], 4, { limit: 2, offset: 2 }).pagination.hasMore).to.equal(false);
    expect(paged([], 4, { limit: 2, offset: 10 }).pagination).to.deep.equal({
      limit: 2,
      offset: 10,
      total: 4,
      hasMore: false,
    });
  });
});
