import { expect } from 'chai';
import { makeWorkspace, testConfig, type TestApp } from '../support/context.js';
import { call, waitFor } from '../support/http.js';
import type { TcpProxy } from '../support/tcp-proxy.js';
import { outboxOf, readStream, startAppBehindNatsProxy } from '../support/spine.js';

describe('spine: the outbox relay survives a NATS outage', () => {
  let proxy: TcpProxy;
  let app: TestApp;
  let close: () => Promise<void>;
  before(async () => {
    ({ app, proxy, close } = await startAppBehindNatsProxy());
  });
  after(async () => close?.());

  it('events written while NATS is unreachable are published, exactly once each, after it returns', async function () {
    this.timeout(30_000);
    const cfg = testConfig();
    const ws = await makeWorkspace(app.rt.orm.em.fork(), 'build', 'Outage');
    const em = () => app.rt.orm.em.fork();

    // Control: with NATS up, an event is published promptly.
    await call(app.base, 'POST', '/identities', { key: ws.key, body: { externalId: 'before-outage' } });
    await waitFor(async () => (await outboxOf(em(), ws.id)).every((r) => r.published_at), {
      what: 'the control event',
    });

    proxy.cut();
    const single = await call(app.base, 'POST', '/identities', {
      key: ws.key,
      body: { externalId: 'during-1' },
    });
    expect(single.status, 'the API keeps writing while NATS is down').to.equal(201);
    const bulk = await call(app.base, 'POST', '/identities/bulk', {
      key: ws.key,
      body: {
        identities: [{ externalId: 'during-2' }, { externalId: 'during-3' }, { externalId: 'during-4' }],
      },
    });
    expect(bulk.status).to.equal(201);

    const during = (await outboxOf(em(), ws.id)).filter((r) => !r.published_at);
    expect(during).to.have.length(4);
    // A whole relay pass while NATS is unreachable publishes nothing and loses nothing.
    expect(await app.api.relay.drainOnce()).to.equal(0);
    expect((await outboxOf(em(), ws.id)).filter((r) => !r.published_at).map((r) => r.id)).to.deep.equal(
      during.map((r) => r.id),
    );

    proxy.restore();
    const rows = await waitFor(
      async () => {
        const r = await outboxOf(em(), ws.id);
        return r.length === 5 && r.every((x) => x.published_at) ? r : null;
      },
      { timeoutMs: 20_000, what: 'the relay to publish the events written during the outage' },
    );

    const messages = (
      await readStream<{ id: string; workspaceId: string; type: string; createdAt: string; data: unknown }>(
        cfg.NATS_URL,
        `${cfg.BUS_PREFIX}_EVENTS`,
        `${cfg.BUS_PREFIX}.events.identity.created`,
      )
    ).filter((m) => m.body.workspaceId === ws.id);
    const ids = messages.map((m) => m.body.id);
    expect(ids, 'each event id exactly once in the stream').to.have.length(new Set(ids).size);
    expect([...ids].sort()).to.deep.equal(rows.map((r) => r.id).sort());
    for (const m of messages) expect(m.msgId).to.equal(m.body.id);
    // Each message is its row's envelope, field for field (PostgreSQL encodes it in the relay's select).
    for (const r of rows)
      expect(messages.find((m) => m.body.id === r.id)?.body).to.deep.equal({
        id: r.id,
        type: 'identity.created',
        createdAt: new Date(r.created_at).toISOString(),
        workspaceId: ws.id,
        data: r.data,
      });
  });
});
