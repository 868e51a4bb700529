import { expect } from 'chai';
import type { TestRuntime, TestWorkspace } from '../support/context.js';
import { CLAIM_LIMITS, endpointFixture } from '../support/webhooks.js';
import { planNodes } from '../support/plans.js';
import { Receiver } from '../support/webhook-receiver.js';
import { parseEncryptionKey } from '@lectern/secrets';
import { boundQuery, newId } from '@lectern/db';
import type { EventEnvelope } from '@lectern/contracts';
import {
  claimDue,
  claimDueStatement,
  createSender,
  fanOutEvents,
  recordAttemptsStatement,
  releaseClaimsStatement,
  renewClaimsStatement,
  recordAttempts,
  type AttemptRecord,
  type ClaimedDelivery,
} from '@lectern/webhooks';

/** The record of a successful attempt of `cmd`. */
const delivered = (cmd: ClaimedDelivery): AttemptRecord => ({
  cmd,
  startedAt: new Date(),
  outcome: { status: 'delivered' },
  result: {
    statusCode: 200,
    error: null,
    durationMs: 1,
    responseBody: '',
    retryAfterSec: null,
    outcome: 'delivered',
  },
});

/** `count` new events to the workspace's endpoints, fanned out in batches of 500 as the relay writes them. */
async function fanOutBurstTo(rt: TestRuntime, workspaceId: string, count: number): Promise<void> {
  const envs = Array.from(
    { length: count },
    (_, i) =>
      ({
        id: newId('evt'),
        type: 'course.completed',
        createdAt: new Date(Date.now() + 1000).toISOString(),
        workspaceId,
        data: { i },
      }) as EventEnvelope,
  );
  for (let i = 0; i < envs.length; i += 500) await fanOutEvents(rt.orm.em.fork(), envs.slice(i, i + 500));
}

/**
 * The claim runs hundreds of times in a burst, while every lease and every outcome leaves a dead version of its
 * row behind until the next vacuum. Its count of each endpoint's leases must read the live leases, not every lease
 * since the last vacuum: an ordered scan of the per-endpoint lease index marks dead entries as it passes them
 * (a bitmap scan never does; a deduplicated entry holding a live lease beside dead ones is never marked).
 */
describe('webhooks: claims after a burst', function () {
  this.timeout(60_000);
  let fixture: Awaited<ReturnType<typeof endpointFixture>> | undefined;
  let rt: TestRuntime;
  let ws: TestWorkspace;
  const limits = { ...CLAIM_LIMITS, batch: 128 };

  before(async () => {
    fixture = await endpointFixture('webhook-claims', ['course.completed']);
    ({ rt, ws } = fixture);
  });
  after(async () => {
    await fixture?.close();
  });

  /** The claim's plan, executed and rolled back: the lease count's index scan and the blocks it touched. */
  async function leaseCountScan(): Promise<{ node: string; blocks: number }> {
    const nodes = await planNodes(rt.orm.em.fork(), claimDueStatement(limits), { analyze: true });
    const scans = nodes.filter((n) => n['Index Name'] === 'webhook_deliveries_leases_idx');
    expect(scans, 'the lease count reads the per-endpoint lease index').to.have.length(1);
    const [scan] = scans;
    return {
      node: scan['Node Type'],
      blocks: (scan['Shared Hit Blocks'] ?? 0) + (scan['Shared Read Blocks'] ?? 0),
    };
  }

  const fanOutBurst = (count: number) => fanOutBurstTo(rt, ws.id, count);

  it('counts only the live leases once a claim has passed the dead ones', async () => {
    await fanOutBurst(2600);
    // A burst: each claim leases up to 128 rows and all but one are delivered, so 20 leases stay live and ~2,500
    // dead lease entries pile up in the index (the table is far too young for autovacuum).
    for (let round = 0; round < 20; round++) {
      const claimed = await claimDue(rt.orm.em.fork(), limits);
      expect(claimed.length).to.be.greaterThan(100);
      const recorded = await recordAttempts(rt.orm.em.fork(), claimed.slice(1).map(delivered));
      expect(recorded.written.every(Boolean)).to.equal(true);
    }
    // Each claim marks the entries it found dead, so the next one reads only the ~20 live leases (a heap page
    // each at most) and a few index pages; with the dead ones it would read a heap page for each of ~2,500.
    for (const pass of [await leaseCountScan(), await leaseCountScan()]) {
      expect(pass.node).to.be.oneOf(['Index Scan', 'Index Only Scan']);
      expect(pass.blocks, `${pass.blocks} blocks`).to.be.lessThan(60);
    }
  });

  /**
   * Statistics taken in a quiet moment (an autoanalyze after a burst has drained) say almost no row is pending, so
   * the partial indexes on pending rows look nearly empty. A statement that finds its rows by id and also requires
   * them pending must still look the ids up by primary key, not scan such an index whole and filter the ids: in the
   * next burst that scan reads every pending row (measured: claims 3-4 times slower over a whole bench run).
   */
  it('finds rows by primary key when the statistics were taken with few rows pending', async () => {
    // The previous burst has drained (every row delivered), then autovacuum analyzed the table.
    await boundQuery(
      rt.orm.em.fork(),
      `update webhook_deliveries set status = 'delivered', locked_until = null, next_attempt_at = null
        where status = 'pending'`,
      [],
    );
    await boundQuery(rt.orm.em.fork(), 'vacuum (analyze) webhook_deliveries', []);
    await fanOutBurst(3000);
    const claimed = await claimDue(rt.orm.em.fork(), limits);
    const claims = claimed.map((c) => ({
      deliveryId: c.deliveryId,
      claim: c.claim,
      attempt: c.attempt,
    }));
    expect(claims.length).to.be.greaterThan(50);

    const partial = ['webhook_deliveries_due_idx', 'webhook_deliveries_leases_idx'];
    const statements = {
      claim: claimDueStatement(limits),
      renew: renewClaimsStatement(claims, 10),
      release: releaseClaimsStatement(claims),
      record: recordAttemptsStatement(claimed.map(delivered)),
    };
    for (const [name, statement] of Object.entries(statements)) {
      const nodes = await planNodes(rt.orm.em.fork(), statement);
      const wholeScans = nodes.filter(
        (n) =>
          partial.includes(n['Index Name'] ?? '') &&
          /\bid = |\.id = /.test(`${n.Filter ?? ''} ${n['Index Cond'] ?? ''}`),
      );
      expect(wholeScans, `${name}: ids filtered out of a partial index scan`).to.deep.equal([]);
      const seqScans = nodes.filter(
        (n) => n['Node Type'] === 'Seq Scan' && n['Relation Name'] === 'webhook_deliveries',
      );
      expect(seqScans, `${name}: the whole table read`).to.deep.equal([]);
      const byKey = nodes.filter(
        (n) => n['Index Name'] === 'webhook_deliveries_pkey' && /\bid = /.test(n['Index Cond'] ?? ''),
      );
      expect(byKey, `${name}: looked up by primary key`).to.not.be.empty;
    }
  });
});

/**
 * A settled attempt asks the dispatcher for more rows only once its endpoint's queue in this worker runs short:
 * while rows are waiting for a request slot, the endpoint's requests stay busy, and a claim then would take only the
 * few leases freed since the last one (each claim paying its fixed work again).
 */
describe('webhooks: the sender asks for more rows only when an endpoint runs short', function () {
  this.timeout(60_000);
  let fixture: Awaited<ReturnType<typeof endpointFixture>> | undefined;
  let receiver: Receiver | undefined;

  before(async () => {
    fixture = await endpointFixture('webhook-refill', ['course.completed']);
    receiver = await new Receiver().start();
    await boundQuery(fixture.rt.orm.em.fork(), 'update webhook_endpoints set url = ? where id = ?', [
      receiver.url(),
      fixture.endpointId,
    ]);
  });
  after(async () => {
    await fixture?.close();
    await receiver?.close();
  });

  it('kicks once fewer than refillBelow rows of the endpoint wait, not after every attempt', async () => {
    const { rt, ws, endpointId } = fixture!;
    const rows = 200;
    await fanOutBurstTo(rt, ws.id, rows);
    const claimed = await claimDue(rt.orm.em.fork(), { ...CLAIM_LIMITS, perEndpoint: rows });
    expect(claimed.map((c) => c.endpointId)).to.deep.equal(claimed.map(() => endpointId));
    expect(claimed).to.have.length(rows);

    // One request at a time, so most attempts end while many rows still wait (a record settles an attempt some
    // milliseconds after its response; the rows sent meanwhile are not waiting any more).
    const waitingAtRefill: number[] = [];
    const waitingAtResponse: number[] = [];
    const sender = createSender({
      orm: rt.orm,
      log: rt.log,
      key: parseEncryptionKey(rt.cfg.WEBHOOK_SECRET_KEY!),
      delays: [60],
      allowPrivate: true,
      timeoutMs: 5000,
      perEndpoint: 1,
      leaseSec: CLAIM_LIMITS.leaseSec,
      slowAfterSec: CLAIM_LIMITS.slowAfterSec,
      refillBelow: 8,
      onRefill: (id) => waitingAtRefill.push(id === endpointId ? sender.waiting(id) : -1),
      onAttempt: () => waitingAtResponse.push(sender.waiting(endpointId)),
    });
    try {
      const leasedAt = performance.now();
      await Promise.all(claimed.map((row) => sender.take(row, leasedAt)));
    } finally {
      await sender.stop();
    }

    expect(receiver!.receipts).to.have.length(rows);
    const [{ delivered }] = await boundQuery<{ delivered: string }>(
      rt.orm.em.fork(),
      `select count(*) filter (where status = 'delivered') as delivered from webhook_deliveries where endpoint_id = ?`,
      [endpointId],
    );
    expect(Number(delivered)).to.equal(rows);
    // Attempts ended while many rows waited, yet none asked for more then: only once fewer than 8 waited (the
    // last rows), and at least then.
    expect(waitingAtResponse.filter((n) => n >= 8).length).to.be.greaterThan(rows / 2);
    expect(
      waitingAtRefill.every((n) => n >= 0 && n < 8),
      String(waitingAtRefill),
    ).to.equal(true);
    expect(waitingAtRefill.length).to.be.within(1, rows - 1);
    expect(sender.waiting(endpointId)).to.equal(0);
  });
});
