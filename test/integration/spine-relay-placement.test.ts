import { expect } from 'chai';
import { closeRuntime } from '@lectern/runtime';
import { startWebhookWorker } from '@lectern/webhooks';
import { makeWorkspace, startTestApp, testConfig, testRuntime, type TestApp } from '../support/context.js';
import { call, waitFor } from '../support/http.js';
import { outboxOf, readStream } from '../support/spine.js';

/**
 * Where the outbox relay runs: in every API replica by default; with API_OUTBOX_RELAY=false the API publishes
 * nothing itself and a webhook worker started with WEBHOOK_WORKER_OUTBOX_RELAY=true does it (docs/operations.md).
 */
describe('spine: the outbox relay can run in the webhook worker instead of the API', () => {
  let app: TestApp;
  before(async () => {
    app = await startTestApp({ API_OUTBOX_RELAY: 'false' });
  });
  after(async () => app?.close());

  it('an API without its relay leaves events unpublished until a webhook worker with the relay publishes them', async function () {
    this.timeout(30_000);
    const cfg = testConfig();
    const em = () => app.rt.orm.em.fork();
    const ws = await makeWorkspace(em(), 'build', 'Relay placement');
    const res = await call(app.base, 'POST', '/identities', { key: ws.key, body: { externalId: 'relayed' } });
    expect(res.status).to.equal(201);
    // Longer than a relay pass after a kick and than its 250 ms interval: nothing in this process publishes.
    await new Promise((r) => setTimeout(r, 800));
    const [row] = await outboxOf(em(), ws.id);
    expect(row.type).to.equal('identity.created');
    expect(row.published_at, 'the API published with its relay off').to.equal(null);

    // A webhook worker without the setting does not publish either...
    const plainRt = await testRuntime('webhook-worker-plain');
    const plain = await startWebhookWorker(plainRt, { pollMs: 100 });
    await new Promise((r) => setTimeout(r, 600));
    expect((await outboxOf(em(), ws.id))[0].published_at).to.equal(null);
    await plain.stop();
    await closeRuntime(plainRt, { keepStorage: true });

    // ...one with WEBHOOK_WORKER_OUTBOX_RELAY=true does, once, with the event id as the message id.
    const rt = await testRuntime('webhook-worker-relay', { WEBHOOK_WORKER_OUTBOX_RELAY: 'true' });
    const worker = await startWebhookWorker(rt, { pollMs: 100 });
    try {
      await waitFor(async () => (await outboxOf(em(), ws.id))[0].published_at !== null, {
        what: 'the worker relay to publish the event',
      });
      const messages = (
        await readStream<{ id: string; workspaceId: string }>(
          cfg.NATS_URL,
          `${cfg.BUS_PREFIX}_EVENTS`,
          `${cfg.BUS_PREFIX}.events.identity.created`,
        )
      ).filter((m) => m.body.workspaceId === ws.id);
      expect(messages.map((m) => [m.msgId, m.body.id])).to.deep.equal([[row.id, row.id]]);
    } finally {
      await worker.stop();
      await closeRuntime(rt, { keepStorage: true });
    }
  });
});
