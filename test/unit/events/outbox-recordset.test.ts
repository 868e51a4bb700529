import { expect } from 'chai';
import { outboxRecordset, type PreparedEvent } from '@lectern/events';

const at = new Date('2026-11-24T10:00:00.123Z');
const ev = (id: string): PreparedEvent => ({
  id,
  workspaceId: 'wsp_1',
  type: 'course.progress',
  data: { n: id },
  createdAt: at,
});

describe('events: outboxRecordset (events written inside a caller’s statement)', () => {
  it('orders the events of one change by microseconds within their millisecond', () => {
    const rows = JSON.parse(outboxRecordset([ev('a'), ev('b'), ev('c')])) as Record<string, unknown>[];
    expect(rows.map((r) => r.created_at)).to.deep.equal([
      '2026-11-24T10:00:00.123000Z',
      '2026-11-24T10:00:00.123001Z',
      '2026-11-24T10:00:00.123002Z',
    ]);
    expect(rows[0]).to.not.have.property('key');
  });

  it('keyed: each change’s events count from 0 on their own, and carry their key', () => {
    const keys = ['run1', 'run1', 'run2', 'run1', 'run2'];
    const rows = JSON.parse(outboxRecordset(['a', 'b', 'c', 'd', 'e'].map(ev), (i) => keys[i])) as {
      id: string;
      key: string;
      created_at: string;
    }[];
    expect(rows.map((r) => [r.id, r.key, r.created_at.slice(-4)])).to.deep.equal([
      ['a', 'run1', '000Z'],
      ['b', 'run1', '001Z'],
      ['c', 'run2', '000Z'],
      ['d', 'run1', '002Z'],
      ['e', 'run2', '001Z'],
    ]);
  });
});
