import { expect } from 'chai';
import type { TestRuntime, TestWorkspace } from '../support/context.js';
import { endpointFixture } from '../support/webhooks.js';
import { planNodes } from '../support/plans.js';
import { boundQuery } from '@lectern/db';
import { recordEvent, startRelay, unsentEventsStatement, type RelayFanOut } from '@lectern/events';
import { envelopeBody, relayFanOut } from '@lectern/webhooks';

/**
 * The relay writes the deliveries of a batch in the transaction that marks it sent: they exist exactly when
 * their events count as published, and a batch whose deliveries could not be written stays unsent, to be
 * published (and fanned out) again.
 */
describe('webhooks: the relay fans out what it publishes', function () {
  this.timeout(30_000);
  let fixture: Awaited<ReturnType<typeof endpointFixture>> | undefined;
  let rt: TestRuntime;
  let ws: TestWorkspace;
  let endpointId: string;

  before(async () => {
    fixture = await endpointFixture('webhook-relay', ['identity.created']);
    ({ rt, ws, endpointId } = fixture);
  });
  after(async () => {
    await fixture?.close();
  });

  const state = async (ids: string[]) => {
    const em = rt.orm.em.fork();
    const outbox = await boundQuery<{ id: string; published: boolean; envelope: string }>(
      em,
      `select id, published_at is not null as published,
              json_build_object('id', id, 'type', type,
                'createdAt', to_char(created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
                'workspaceId', workspace_id, 'data', data)::text as envelope
         from outbox_events where id = any (?::text[])`,
      [ids],
    );
    const deliveries = await boundQuery<{ event_id: string; endpoint_id: string; payload: string }>(
      em,
      'select event_id, endpoint_id, payload from webhook_deliveries where event_id = any (?::text[])',
      [ids],
    );
    return { outbox, deliveries };
  };

  it('marks a batch sent only with its deliveries, and writes them once', async () => {
    const em = rt.orm.em.fork();
    const subscribed = [0, 1, 2].map((i) =>
      recordEvent(em, ws.id, 'identity.created', {
        identity: { id: `idn_relay_${i}`, externalId: `relay-${i}`, name: 'Ré "quoted"', email: null },
      }),
    );
    const other = recordEvent(em, ws.id, 'course.unpublished', {
      course: { id: 'crs_relay', title: 'Not subscribed' },
      embedUrl: 'http://127.0.0.1/embed/crs_relay',
    });
    await em.flush();
    const ids = [...subscribed, other];

    // Deliveries that cannot be written: nothing is marked sent, nothing is written, nobody is woken.
    let woken = 0;
    const failing = startRelay({
      orm: rt.orm,
      bus: rt.bus,
      log: rt.log,
      intervalMs: 60_000,
      fanOut: {
        inTransaction: async () => {
          throw new Error('the database went away');
        },
        afterCommit: () => woken++,
      },
    });
    try {
      const err = await failing.drainOnce().then(
        () => null,
        (e: Error) => e,
      );
      expect(err?.message).to.equal('the database went away');
    } finally {
      await failing.stop();
    }
    let now = await state(ids);
    expect(now.outbox.filter((r) => r.published)).to.deep.equal([]);
    expect(now.deliveries).to.deep.equal([]);
    expect(woken).to.equal(0);

    // Published again: marked, one delivery per subscribed event, each body the event's envelope as sent.
    const real = relayFanOut(rt.bus);
    const fanOut: RelayFanOut = { inTransaction: real.inTransaction, afterCommit: () => woken++ };
    const relay = startRelay({ orm: rt.orm, bus: rt.bus, log: rt.log, intervalMs: 60_000, fanOut });
    try {
      while ((await state(ids)).outbox.some((r) => !r.published)) await relay.drainOnce();
      now = await state(ids);
      expect(now.deliveries.map((d) => d.event_id).sort()).to.deep.equal([...subscribed].sort());
      expect(now.deliveries.every((d) => d.endpoint_id === endpointId)).to.equal(true);
      for (const d of now.deliveries) {
        const sent = now.outbox.find((r) => r.id === d.event_id)!;
        expect(d.payload).to.equal(envelopeBody(JSON.parse(sent.envelope)));
      }
      expect(woken).to.be.greaterThan(0);

      // A batch published again (its mark lost) writes nothing new.
      await boundQuery(
        rt.orm.em.fork(),
        'update outbox_events set published_at = null where id = any (?::text[])',
        [ids],
      );
      while ((await state(ids)).outbox.some((r) => !r.published)) await relay.drainOnce();
      expect((await state(ids)).deliveries).to.have.length(3);
    } finally {
      await relay.stop();
    }
  });
  /**
   * Statistics taken while nothing was waiting (an autoanalyze in a quiet moment) say the unsent rows' index is
   * empty. A batch must still read its rows in index order and stop at the batch size, not read every unsent row
   * and sort them (in a burst, every batch would read the whole backlog).
   */
  it('takes a batch in index order, without reading the backlog, after statistics saw none waiting', async () => {
    const em = rt.orm.em.fork();
    await boundQuery(em, 'update outbox_events set published_at = now() where published_at is null', []);
    await boundQuery(em, 'vacuum (analyze) outbox_events', []);
    await boundQuery(
      em,
      `insert into outbox_events (id, workspace_id, type, data, created_at)
       select 'evt_backlog_' || i, ?, 'identity.created', '{}'::jsonb, now() from generate_series(1, 3000) i`,
      [ws.id],
    );
    const nodes = await planNodes(em, unsentEventsStatement(500));
    expect(nodes.map((n) => n['Node Type'])).to.not.include('Sort');
    expect(nodes.map((n) => n['Node Type'])).to.not.include('Incremental Sort');
    expect(nodes.some((n) => n['Index Name'] === 'outbox_unsent_order_idx')).to.equal(true);
    await boundQuery(em, "delete from outbox_events where id like 'evt_backlog_%'", []);
  });
});
