import { expect } from 'chai';
import { KeyedLimiter, decideOutcome, nextFailingSince } from '@lectern/webhooks';
import { envelopeBody } from '@lectern/webhooks';
import { samplePayload } from '@lectern/webhooks';
import { EVENT_TYPES, EventPayloads } from '@lectern/contracts';

const DELAYS = [60, 600, 3600, 21600];

describe('webhooks: pipeline pieces', () => {
  describe('decideOutcome', () => {
    it('2xx is delivered, every failure retries until the last allowed attempt', () => {
      expect(decideOutcome({ outcome: 'delivered', retryAfterSec: null }, 1, 5, DELAYS)).to.deep.equal({
        status: 'delivered',
      });
      for (let attempt = 1; attempt <= 4; attempt++) {
        const o = decideOutcome({ outcome: 'retry', retryAfterSec: null }, attempt, 5, DELAYS);
        expect(o.status).to.equal('pending');
        const base = DELAYS[attempt - 1];
        expect((o as { delaySec: number }).delaySec).to.be.within(base * 0.8 - 1, base * 1.2 + 1);
      }
      expect(decideOutcome({ outcome: 'retry', retryAfterSec: null }, 5, 5, DELAYS)).to.deep.equal({
        status: 'failed',
      });
      // A resend of a failed delivery is allowed exactly one more attempt.
      expect(decideOutcome({ outcome: 'retry', retryAfterSec: null }, 6, 6, DELAYS)).to.deep.equal({
        status: 'failed',
      });
      // A test send has one attempt.
      expect(decideOutcome({ outcome: 'retry', retryAfterSec: null }, 1, 1, DELAYS).status).to.equal(
        'failed',
      );
    });

    it('a resend of a pending delivery is an extra attempt: the automatic schedule and its 5 attempts stay', () => {
      // Two automatic attempts failed, then one manual resend (maxAttempts 5 → 6), which also failed:
      // the next wait is still the one before automatic attempt 3.
      const o = decideOutcome({ outcome: 'retry', retryAfterSec: null }, 3, 6, DELAYS) as {
        delaySec: number;
      };
      expect(o.delaySec).to.be.within(DELAYS[1] * 0.8 - 1, DELAYS[1] * 1.2 + 1);
      // ...and automatic attempts 3, 4 and 5 (total 4, 5, 6) still follow.
      expect(decideOutcome({ outcome: 'retry', retryAfterSec: null }, 5, 6, DELAYS).status).to.equal(
        'pending',
      );
      expect(decideOutcome({ outcome: 'retry', retryAfterSec: null }, 6, 6, DELAYS).status).to.equal(
        'failed',
      );
    });

    it('honours Retry-After within the schedule', () => {
      const o = decideOutcome({ outcome: 'retry', retryAfterSec: 3000 }, 1, 5, DELAYS) as {
        delaySec: number;
      };
      expect(o.delaySec).to.equal(3000);
      const capped = decideOutcome({ outcome: 'retry', retryAfterSec: 10 ** 6 }, 1, 5, DELAYS) as {
        delaySec: number;
      };
      expect(capped.delaySec).to.equal(21600);
    });
  });

  describe('nextFailingSince (the run of failures behind the sustained-failure switch-off)', () => {
    const t = (min: number) => new Date(Date.UTC(2026, 10, 20, 12, min));
    it('a first failure starts the run; later failures keep its start', () => {
      expect(nextFailingSince(null, null, t(5))).to.deep.equal(t(5));
      expect(nextFailingSince(t(1), null, t(5))).to.deep.equal(t(1));
    });
    it('a 2xx ends a run that began before it, and a failure after it starts the next run', () => {
      expect(nextFailingSince(t(1), t(3), null)).to.equal(null);
      expect(nextFailingSince(t(1), t(3), t(4))).to.deep.equal(t(4));
      expect(nextFailingSince(null, t(3), null)).to.equal(null);
    });
    it('a 2xx that started before the run began (recorded late) does not end it', () => {
      expect(nextFailingSince(t(5), t(3), null)).to.deep.equal(t(5));
    });
  });

  describe('KeyedLimiter', () => {
    it('bounds holders per key, serves waiters in order, and keys are independent', async () => {
      const l = new KeyedLimiter(2);
      expect(await l.acquire('a')).to.equal(0);
      expect(await l.acquire('a')).to.equal(0);
      expect(await l.acquire('b')).to.equal(0);
      const order: string[] = [];
      const w1 = l.acquire('a').then(() => order.push('w1'));
      const w2 = l.acquire('a').then(() => order.push('w2'));
      await new Promise((r) => setImmediate(r));
      expect(order).to.deep.equal([]);
      l.release('a');
      await w1;
      expect(order).to.deep.equal(['w1']);
      l.release('a');
      await w2;
      expect(order).to.deep.equal(['w1', 'w2']);
    });
  });

  it('the envelope body has the SPEC fields in order and nothing else', () => {
    const body = envelopeBody({
      id: 'evt_1',
      type: 'identity.created',
      createdAt: '2026-11-21T09:00:00.000Z',
      workspaceId: 'ws_1',
      data: { identity: null },
    });
    expect(body).to.equal(
      '{"id":"evt_1","type":"identity.created","createdAt":"2026-11-21T09:00:00.000Z","workspaceId":"ws_1","data":{"identity":null}}',
    );
  });

  it('every sample payload of a test send satisfies its event contract', () => {
    for (const type of EVENT_TYPES) {
      expect(
        EventPayloads[type].safeParse(samplePayload(type, 'https://lectern.example.com/')).success,
        type,
      ).to.equal(true);
    }
    expect(samplePayload('course.published', 'https://lectern.example.com/').embedUrl).to.equal(
      'https://lectern.example.com/embed/crs_sample',
    );
  });
});
