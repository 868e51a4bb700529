/**
 * Lease renewal for the rows a worker holds: while a row waits for a request slot of its (slow) endpoint, its lease
 * is renewed every few seconds, so a live worker's rows are never claimed by another. A worker that dies stops
 * renewing, and its rows are claimed again once their leases run out.
 */
import type { MikroORM } from '@mikro-orm/postgresql';
import type { Logger } from '@lectern/log';
import { renewClaims, type ClaimedDelivery } from './dispatcher.js';

/** Held claims whose lease was given longer ago than this are renewed; checked every RENEW_EVERY_MS. */
const RENEW_AFTER_MS = 4000;
const RENEW_EVERY_MS = 2000;
/** Claims renewed per statement. */
const CHUNK = 500;

/** A claimed row this worker holds; the renewal updates `leasedAt` and sets `lost`. */
export interface HeldClaim {
  row: ClaimedDelivery;
  /** performance.now() just before the statement that last leased it. */
  leasedAt: number;
  /** A renewal found the claim no longer good (cancelled, claimed again, endpoint off): send nothing. */
  lost: boolean;
}

export interface LeaseRenewal {
  stop(): void;
}

export function startLeaseRenewal(deps: {
  orm: MikroORM;
  log: Logger;
  /** The claims held right now. */
  held: () => Iterable<HeldClaim>;
  /** The claim lease (seconds), given again by each renewal. */
  leaseSec: number;
}): LeaseRenewal {
  let renewing = false;
  let stopped = false;

  const renew = async (): Promise<void> => {
    if (renewing || stopped) return;
    renewing = true;
    try {
      const now = performance.now();
      const due = [...deps.held()].filter((h) => !h.lost && now - h.leasedAt > RENEW_AFTER_MS);
      for (let i = 0; i < due.length; i += CHUNK) {
        const chunk = due.slice(i, i + CHUNK);
        const at = performance.now();
        const urls = await renewClaims(
          deps.orm.em.fork(),
          chunk.map((h) => h.row),
          deps.leaseSec,
        );
        chunk.forEach((h, k) => {
          if (urls[k] === null) h.lost = true;
          else h.leasedAt = at;
        });
      }
    } catch (err) {
      deps.log.warn({ err }, 'webhook lease renewal failed; will retry');
    } finally {
      renewing = false;
    }
  };
  const timer = setInterval(() => void renew(), RENEW_EVERY_MS);
  timer.unref();
  return {
    stop() {
      stopped = true;
      clearInterval(timer);
    },
  };
}
