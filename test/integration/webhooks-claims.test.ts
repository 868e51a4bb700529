import { expect } from 'chai';
import type { TestRuntime, TestWorkspace } from '../support/context.js';
import { CLAIM_LIMITS, SLOW_AFTER_SEC, endpointFixture } from '../support/webhooks.js';
import { planNodes } from '../support/plans.js';
import { Receiver } from '../support/webhook-receiver.js';
import { parseEncryptionKey } from '@lectern/secrets';
import { boundQuery, newId } from '@lectern/db';
import type { EventEnvelope } from '@lectern/contracts';
import {
  claimDue,
  claimDueStatement,
  createEndpoint,
  createSender,
  fanOutEvents,
  recordAttemptsStatement,
  releaseClaimsStatement,
  renewClaimsStatement,
  type AttemptRecord,
  startWebhookWorker,
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
 * The claim runs hundreds of times in a burst. It changes only columns no index holds (`locked_until`,
 * `claim_seq`), and the table leaves room on each page, so PostgreSQL writes each lease as a heap-only update: no
 * entry in any of the table's indexes and no full copy of the row in the WAL. Each worker bounds the rows it holds
 * per endpoint itself and says how many more it may take (`EndpointRoom`); nothing counts leases in the table.
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

  const fanOutBurst = (count: number) => fanOutBurstTo(rt, ws.id, count);

  it('leases rows as heap-only updates: no index entry written for a claim', async () => {
    await fanOutBurst(600);
    const { claimed, updated, heapOnly } = await rt.orm.em.fork().transactional(async (tx) => {
      const claimed = await claimDue(tx, limits);
      // This transaction's own counts: no waiting for the statistics collector.
      const [n] = await boundQuery<{ updated: string; hot: string }>(
        tx,
        `select pg_stat_get_xact_tuples_updated('webhook_deliveries'::regclass) as updated,
                pg_stat_get_xact_tuples_hot_updated('webhook_deliveries'::regclass) as hot`,
        [],
      );
      return { claimed, updated: Number(n.updated), heapOnly: Number(n.hot) };
    });
    expect(claimed).to.have.length(128);
    expect(updated).to.equal(128);
    expect(heapOnly, 'leases written heap-only').to.equal(128);
    const indexes = await boundQuery<{ indexdef: string }>(
      rt.orm.em.fork(),
      `select indexdef from pg_indexes where tablename = 'webhook_deliveries'`,
      [],
    );
    expect(indexes.filter((i) => /locked_until|claim_seq/.test(i.indexdef))).to.deep.equal([]);
  });

  it('claims of an endpoint no more than the room the worker gives it, and never a row leased already', async () => {
    const policy = { key: () => parseEncryptionKey(rt.cfg.WEBHOOK_SECRET_KEY!), allowPrivate: true };
    const [b, c] = await Promise.all(
      ['b', 'c'].map(async (name) => {
        const { endpoint } = await createEndpoint(rt.orm.em.fork(), policy, ws.id, {
          name,
          url: `http://127.0.0.1:9/${name}`,
          eventTypes: ['course.completed'],
        });
        return endpoint.id;
      }),
    );
    const a = fixture!.endpointId;
    await fanOutBurst(40);
    const claim = async (room: [string, number][], perEndpoint: number) => {
      const rows = await claimDue(rt.orm.em.fork(), { ...limits, perEndpoint }, new Map(room));
      const of = (id: string) => rows.filter((r) => r.endpointId === id).map((r) => r.deliveryId);
      return { a: of(a), b: of(b), c: of(c) };
    };

    const first = await claim(
      [
        [a, 0],
        [b, 0],
        [c, 5],
      ],
      128,
    );
    expect([first.a.length, first.b.length, first.c.length]).to.deep.equal([0, 0, 5]);
    // An endpoint the worker holds nothing of takes the default bound.
    const second = await claim(
      [
        [a, 0],
        [c, 0],
      ],
      10,
    );
    expect([second.a.length, second.b.length, second.c.length]).to.deep.equal([0, 10, 0]);
    // C's 5 leased rows are not taken again; its other 35 are.
    const third = await claim(
      [
        [a, 0],
        [b, 0],
      ],
      100,
    );
    expect([third.a.length, third.b.length, third.c.length]).to.deep.equal([0, 0, 35]);
    expect(third.c.filter((id) => first.c.includes(id))).to.deep.equal([]);
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

    const partial = ['webhook_deliveries_due_idx'];
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
 * For a describe block: a fixture whose endpoint posts to a receiver answering with `reply`, made before its tests
 * and closed after them.
 */
function receiverFixture(
  name: string,
  reply?: ConstructorParameters<typeof Receiver>[0],
): { fixture?: Awaited<ReturnType<typeof endpointFixture>>; receiver?: Receiver } {
  const state: { fixture?: Awaited<ReturnType<typeof endpointFixture>>; receiver?: Receiver } = {};
  before(async () => {
    const fixture = (state.fixture = await endpointFixture(name, ['course.completed']));
    const receiver = (state.receiver = await new Receiver(reply).start());
    await boundQuery(fixture.rt.orm.em.fork(), 'update webhook_endpoints set url = ? where id = ?', [
      receiver.url(),
      fixture.endpointId,
    ]);
  });
  after(async () => {
    await state.fixture?.close();
    await state.receiver?.close();
  });
  return state;
}

/**
 * A settled attempt asks the dispatcher for more rows only once its endpoint's queue in this worker runs short:
 * while rows are waiting for a request slot, the endpoint's requests stay busy, and a claim then would take only the
 * few leases freed since the last one (each claim paying its fixed work again).
 */
describe('webhooks: the sender asks for more rows only when an endpoint runs short', function () {
  this.timeout(60_000);
  const state = receiverFixture('webhook-refill');

  it('kicks once fewer than refillBelow rows of the endpoint wait, not after every attempt', async () => {
    const { rt, ws, endpointId } = state.fixture!;
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
      slowAfterSec: SLOW_AFTER_SEC,
      holdPerEndpoint: rows,
      holdPerSlowEndpoint: 16,
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

    expect(state.receiver!.receipts).to.have.length(rows);
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

/**
 * The worker bounds the rows it holds per endpoint: its claim gives each endpoint it holds rows of its bound less
 * what it holds, and a slow endpoint (a row held longer than `slowAfterSec`: a dead receiver holds every request for
 * the full timeout) the lower bound, so it ties up few of the worker's slots.
 */
describe('webhooks: the sender says how many more rows of each endpoint the worker may claim', function () {
  this.timeout(60_000);
  // The first and third requests are never answered (cut at the sender's deadline); the second is, at once.
  const state = receiverFixture('webhook-room', (_, n) =>
    n === 0 || n === 2 ? 'hang' : { status: 200, body: 'ok' },
  );

  it('its bound less the rows held; the slow bound past slowAfterSec, kept after a slow request until a quick one or a while', async () => {
    const { rt, ws, endpointId } = state.fixture!;
    await fanOutBurstTo(rt, ws.id, 3);
    const claimed = await claimDue(rt.orm.em.fork(), { ...CLAIM_LIMITS, perEndpoint: 3 });
    expect(claimed).to.have.length(3);
    const sender = createSender({
      orm: rt.orm,
      log: rt.log,
      key: parseEncryptionKey(rt.cfg.WEBHOOK_SECRET_KEY!),
      delays: [60, 60, 60, 60],
      allowPrivate: true,
      timeoutMs: 600,
      perEndpoint: 1,
      leaseSec: CLAIM_LIMITS.leaseSec,
      slowAfterSec: 0.3,
      holdPerEndpoint: 10,
      holdPerSlowEndpoint: 2,
      slowRememberedMs: 2000,
    });
    const room = () => sender.endpointRoom();
    const leasedAt = performance.now();
    try {
      expect(room(), 'nothing held').to.deep.equal(new Map());
      const first = sender.take(claimed[0], leasedAt);
      expect(room(), 'one row held').to.deep.equal(new Map([[endpointId, 9]]));
      await new Promise((r) => setTimeout(r, 400));
      expect(room(), 'held past 0.3 s: the slow bound').to.deep.equal(new Map([[endpointId, 1]]));
      await first;
      // Its request was cut at 0.6 s: nothing is held, and the endpoint stays slow.
      expect(room(), 'after a slow request').to.deep.equal(new Map([[endpointId, 2]]));
      await sender.take(claimed[1], leasedAt);
      expect(room(), 'after a quick answer').to.deep.equal(new Map());
      await sender.take(claimed[2], leasedAt);
      expect(room(), 'after another slow request').to.deep.equal(new Map([[endpointId, 2]]));
      await new Promise((r) => setTimeout(r, 2100));
      expect(room(), 'two seconds later, with no request since').to.deep.equal(new Map());
    } finally {
      await sender.stop();
    }
    const rows = await boundQuery<{ status: string; attempts: number; leased: boolean }>(
      rt.orm.em.fork(),
      `select status, attempts, coalesce(locked_until > now(), false) as leased from webhook_deliveries
        where endpoint_id = ? order by status`,
      [endpointId],
    );
    expect(rows).to.deep.equal([
      { status: 'delivered', attempts: 1, leased: false },
      { status: 'pending', attempts: 1, leased: false },
      { status: 'pending', attempts: 1, leased: false },
    ]);
  });
});

/** The worker's dispatcher claims with the sender's room: however often it claims, an endpoint gets its bound. */
describe('webhooks: a worker holds no more rows of an endpoint than its bound', function () {
  this.timeout(60_000);
  const state = receiverFixture('webhook-bound', () => 'hang');

  it('claims 8 of 50 rows of an endpoint that never answers, over ~30 polls', async () => {
    const { rt, ws, endpointId } = state.fixture!;
    await fanOutBurstTo(rt, ws.id, 50);
    const worker = await startWebhookWorker(rt, {
      perEndpointInFlight: 8,
      perEndpointRequests: 2,
      pollMs: 20,
      timeoutMs: 1500,
    });
    try {
      await new Promise((r) => setTimeout(r, 700));
      const [{ leased }] = await boundQuery<{ leased: string }>(
        rt.orm.em.fork(),
        `select count(*) as leased from webhook_deliveries where endpoint_id = ? and locked_until > now()`,
        [endpointId],
      );
      expect(Number(leased)).to.equal(8);
      expect(state.receiver!.receipts).to.have.length(2);
    } finally {
      await worker.stop();
    }
  });
});
