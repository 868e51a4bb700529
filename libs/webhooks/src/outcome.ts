/** What one attempt's result means for its delivery: delivered, pending again after a wait, or failed. */
import type { DeliveryResult } from './deliver.js';
import { MAX_ATTEMPTS, nextDelaySeconds } from './retry.js';

export type AttemptOutcome =
  { status: 'delivered' } | { status: 'pending'; delaySec: number } | { status: 'failed' };

/** `attemptNo` is 1-based; `maxAttempts` counts manual resends too. */
export function decideOutcome(
  result: Pick<DeliveryResult, 'outcome' | 'retryAfterSec'>,
  attemptNo: number,
  maxAttempts: number,
  delays: readonly number[],
): AttemptOutcome {
  if (result.outcome === 'delivered') return { status: 'delivered' };
  if (attemptNo >= maxAttempts) return { status: 'failed' };
  // Manual resends of a pending delivery raised maxAttempts one each; they do not move it along the schedule.
  const automaticNo = attemptNo - Math.max(0, maxAttempts - MAX_ATTEMPTS);
  const delaySec = nextDelaySeconds(Math.max(1, automaticNo), delays, {
    retryAfterSec: result.retryAfterSec,
  });
  return delaySec === null ? { status: 'failed' } : { status: 'pending', delaySec };
}
