import { expect } from 'chai';
import type { TestRuntime, TestWorkspace } from '../support/context.js';
import { CLAIM_LIMITS, endpointFixture } from '../support/webhooks.js';
import { boundQuery, newId } from '@lectern/db';
import type { EventEnvelope } from '@lectern/contracts';
import {
  claimDue,
  envelopeBody,
  fanOutEvents,
  recordAttempts,
  type AttemptRecord,
  type ClaimedDelivery,
} from '@lectern/webhooks';

/**
 * The worker's batch statements bind whole batches as one value (the fan-out's bodies as one text split by
 * PostgreSQL, the attempt records as one json document): the bytes stored must still be exactly the bytes signed
 * and sent, whatever a body holds, and strings PostgreSQL text cannot hold must still be written.
 */
describe('webhooks: batch statements', function () {
  this.timeout(30_000);
  let fixture: Awaited<ReturnType<typeof endpointFixture>> | undefined;
  let rt: TestRuntime;
  let ws: TestWorkspace;
  let endpointId: string;
  const limits = CLAIM_LIMITS;

  before(async () => {
    fixture = await endpointFixture('webhook-batches', ['course.completed']);
    ({ rt, ws, endpointId } = fixture);
  });
  after(async () => {
    await fixture?.close();
  });

  const envelope = (data: Record<string, unknown>): EventEnvelope =>
    ({
      id: newId('evt'),
      type: 'course.completed',
      createdAt: new Date(Date.now() + 1000).toISOString(),
      workspaceId: ws.id,
      data,
    }) as EventEnvelope;

  it('stores each body byte for byte, escapes and all, and a repeated batch creates nothing', async () => {
    const envs = [
      envelope({
        text: 'quotes " and \\ backslashes, é, 日本, 😀, \u2028, \u0000, \u001e, \ud800 alone',
        n: 1.5e-7,
      }),
      envelope({ '\u001e key': '\u001e\u001e', tab: '\t' }),
      envelope({ nested: { a: [1, { b: '}' }], empty: {} }, s: '' }),
    ];
    expect(await fanOutEvents(rt.orm.em.fork(), envs)).to.deep.equal([1, 1, 1]);
    expect(await fanOutEvents(rt.orm.em.fork(), envs)).to.deep.equal([0, 0, 0]);
    const rows = await boundQuery<{ event_id: string; payload: string }>(
      rt.orm.em.fork(),
      'select event_id, payload from webhook_deliveries where event_id = any (?::text[])',
      [envs.map((e) => e.id)],
    );
    const stored = new Map(rows.map((r) => [r.event_id, r.payload]));
    for (const env of envs) expect(stored.get(env.id)).to.equal(envelopeBody(env));
  });

  it('records attempts whose response holds NUL or a lone surrogate, once per claim', async () => {
    await fanOutEvents(rt.orm.em.fork(), [envelope({ n: 2 })]);
    const claimed = await claimDue(rt.orm.em.fork(), limits);
    expect(claimed).to.have.length.greaterThan(0);
    const record = (cmd: ClaimedDelivery): AttemptRecord => ({
      cmd,
      startedAt: new Date(),
      outcome: { status: 'pending', delaySec: 60 },
      result: {
        statusCode: 500,
        error: 'HTTP 500 \udc00',
        durationMs: 3,
        responseBody: 'a\u0000b\ud800c',
        retryAfterSec: null,
        outcome: 'retry',
      },
    });
    const first = await recordAttempts(rt.orm.em.fork(), claimed.map(record));
    expect(first.written).to.deep.equal(claimed.map(() => true));
    expect(first.failingSince.has(endpointId)).to.equal(true);
    const again = await recordAttempts(rt.orm.em.fork(), claimed.map(record));
    expect(again.written).to.deep.equal(claimed.map(() => false));

    const [attempt] = await boundQuery<{ response_body: string; error: string; status_code: number }>(
      rt.orm.em.fork(),
      'select response_body, error, status_code from webhook_attempts where delivery_id = ?',
      [claimed[0].deliveryId],
    );
    expect(attempt).to.deep.include({
      response_body: 'a\uFFFDb\uFFFDc',
      error: 'HTTP 500 \uFFFD',
      status_code: 500,
    });
    const [row] = await boundQuery<{
      status: string;
      attempts: number;
      locked_until: Date | null;
      due: boolean;
    }>(
      rt.orm.em.fork(),
      `select status, attempts, locked_until, next_attempt_at > now() + interval '50 seconds' as due
         from webhook_deliveries where id = ?`,
      [claimed[0].deliveryId],
    );
    expect(row).to.deep.equal({ status: 'pending', attempts: 1, locked_until: null, due: true });
  });

  it('rows check one foreign key, the endpoint, and a delivery and its attempts still go with their workspace', async () => {
    // The endpoint's key deletes its deliveries with its workspace, and a trigger their attempts. A key from the
    // delivery to the workspace, or from the attempt to the delivery, cost every row written a lookup and a share
    // lock (see their migrations).
    const keys = await boundQuery<{ rel: string; def: string }>(
      rt.orm.em.fork(),
      `select conrelid::regclass::text as rel, pg_get_constraintdef(oid) as def from pg_constraint
        where conrelid in ('webhook_deliveries'::regclass, 'webhook_attempts'::regclass) and contype = 'f'`,
    );
    expect(keys).to.deep.equal([
      {
        rel: 'webhook_deliveries',
        def: 'FOREIGN KEY (endpoint_id) REFERENCES webhook_endpoints(id) ON DELETE CASCADE',
      },
    ]);

    const other = await endpointFixture('webhook-batches-gone', ['course.completed']);
    try {
      const env = { ...envelope({ n: 3 }), workspaceId: other.ws.id } as EventEnvelope;
      expect(await fanOutEvents(other.rt.orm.em.fork(), [env])).to.deep.equal([1]);
      const em = other.rt.orm.em.fork();
      const [{ id }] = await boundQuery<{ id: string }>(
        em,
        `insert into webhook_attempts (delivery_id, attempt, status_code, duration_ms, started_at)
         select id, 1, 500, 3, now() from webhook_deliveries where event_id = ? returning delivery_id as id`,
        [env.id],
      );
      await boundQuery(em, 'delete from workspaces where id = ?', [other.ws.id]);
      const [left] = await boundQuery<{ deliveries: number; attempts: number }>(
        em,
        `select (select count(*)::int from webhook_deliveries where id = ?) as deliveries,
                (select count(*)::int from webhook_attempts where delivery_id = ?) as attempts`,
        [id, id],
      );
      expect(left).to.deep.equal({ deliveries: 0, attempts: 0 });
    } finally {
      await other.close();
    }
  });
});
