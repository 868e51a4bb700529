import { expect } from 'chai';
import { DEFAULT_RETRY_DELAYS, MAX_ATTEMPTS, nextDelaySeconds, parseRetryDelays } from '@lectern/webhooks';

describe('webhooks/retry', () => {
  it('has 5 attempts and a default spread over hours', () => {
    expect(MAX_ATTEMPTS).to.equal(5);
    expect(DEFAULT_RETRY_DELAYS).to.deep.equal([60, 600, 3600, 21600]);
  });

  describe('parseRetryDelays', () => {
    it('defaults when unset or blank', () => {
      expect(parseRetryDelays()).to.deep.equal([60, 600, 3600, 21600]);
      expect(parseRetryDelays('  ')).to.deep.equal([60, 600, 3600, 21600]);
      const copy = parseRetryDelays();
      copy[0] = 1;
      expect(DEFAULT_RETRY_DELAYS[0]).to.equal(60);
    });
    it('parses exactly four comma-separated seconds', () => {
      expect(parseRetryDelays('1, 2,3 ,4')).to.deep.equal([1, 2, 3, 4]);
      expect(parseRetryDelays('0,0,0,0')).to.deep.equal([0, 0, 0, 0]);
    });
    for (const bad of [
      '1,2,3',
      '1,2,3,4,5',
      '1,2,x,4',
      '1,2,-3,4',
      '1,2,3.5,4',
      '1,,3,4',
      '1,2,3,999999999',
    ]) {
      it(`throws naming WEBHOOK_RETRY_DELAYS for ${JSON.stringify(bad)}`, () => {
        expect(() => parseRetryDelays(bad)).to.throw(/WEBHOOK_RETRY_DELAYS/);
      });
    }
  });

  describe('nextDelaySeconds', () => {
    const delays = [60, 600, 3600, 21600];
    const mid = (): number => 0.5;

    it('follows the schedule for attempts 1..4 and stops after the 5th', () => {
      expect([1, 2, 3, 4].map((a) => nextDelaySeconds(a, delays, { random: mid }))).to.deep.equal(delays);
      expect(nextDelaySeconds(5, delays, { random: mid })).to.equal(null);
      expect(nextDelaySeconds(6, delays, { random: mid })).to.equal(null);
    });

    it('applies +/-20% jitter, deterministic with an injected random source', () => {
      expect(nextDelaySeconds(1, delays, { random: () => 0 })).to.equal(48);
      expect(nextDelaySeconds(1, delays, { random: () => 0.999999 })).to.equal(72);
      expect(nextDelaySeconds(4, delays, { random: () => 0.25 })).to.equal(19440);
      expect(nextDelaySeconds(4, delays, { random: () => 0.25 })).to.equal(
        nextDelaySeconds(4, delays, { random: () => 0.25 }),
      );
    });

    it('stays within the jitter bounds with Math.random', () => {
      for (let attempt = 1; attempt <= 4; attempt++) {
        const base = delays[attempt - 1];
        for (let i = 0; i < 500; i++) {
          const d = nextDelaySeconds(attempt, delays);
          expect(d).to.be.a('number');
          expect(d as number).to.be.within(Math.floor(base * 0.8), Math.ceil(base * 1.2));
        }
      }
    });

    it('honours Retry-After when longer than the scheduled wait', () => {
      expect(nextDelaySeconds(1, delays, { random: mid, retryAfterSec: 300 })).to.equal(300);
      expect(nextDelaySeconds(1, delays, { random: mid, retryAfterSec: 10 })).to.equal(60);
      expect(nextDelaySeconds(2, delays, { random: mid, retryAfterSec: null })).to.equal(600);
      expect(nextDelaySeconds(1, delays, { random: mid, retryAfterSec: 12.2 })).to.equal(60);
    });

    it('caps Retry-After at the longest scheduled delay', () => {
      expect(nextDelaySeconds(1, delays, { random: mid, retryAfterSec: 86_400 })).to.equal(21600);
      expect(nextDelaySeconds(4, delays, { random: () => 0.999999, retryAfterSec: 86_400 })).to.equal(25920);
    });

    it('never schedules past the last attempt even with Retry-After', () => {
      expect(nextDelaySeconds(5, delays, { retryAfterSec: 30 })).to.equal(null);
    });

    it('rejects bad input', () => {
      expect(() => nextDelaySeconds(0, delays)).to.throw(RangeError);
      expect(() => nextDelaySeconds(1.5, delays)).to.throw(RangeError);
      expect(() => nextDelaySeconds(1, [1, 2, 3])).to.throw(RangeError);
    });
  });
});
