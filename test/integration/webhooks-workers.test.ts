import { expect } from 'chai';
import { once } from 'node:events';
import {
  makeWorkspace,
  startTestApp,
  testRuntime,
  type TestApp,
  type TestWorkspace,
} from '../support/context.js';
import { call, waitFor } from '../support/http.js';
import { Receiver } from '../support/webhook-receiver.js';
import { createHook, deliveries, delivery, dropHooks, spawnWorkerProcess } from '../support/webhooks.js';
import { closeRuntime } from '@lectern/runtime';
import { recordEvent } from '@lectern/events';
import { startWebhookWorker } from '@lectern/webhooks';

async function startWorker(name: string) {
  const rt = await testRuntime(name);
  const w = await startWebhookWorker(rt, { pollMs: 100 });
  return {
    async stop() {
      await w.stop();
      await closeRuntime(rt, { keepStorage: true });
    },
  };
}

describe('webhooks: worker processes', function () {
  this.timeout(60_000);
  let app: TestApp;
  let ws: TestWorkspace;
  const receivers: Receiver[] = [];

  before(async () => {
    app = await startTestApp({ RATE_LIMIT_PER_MINUTE: '1000000' });
    ws = await makeWorkspace(app.rt.orm.em.fork(), 'scale', 'Workers');
  });
  after(async () => {
    if (app) await dropHooks(app.rt.orm.em.fork(), [ws.id]);
    await Promise.all(receivers.map((r) => r.close()));
    await app?.close();
  });

  it('a worker killed mid-delivery loses nothing: the delivery completes after a new worker starts', async () => {
    // The first request is held open (the worker is killed while waiting for it); later ones succeed.
    const r = await new Receiver((_got, i) => (i === 0 ? 'hang' : { status: 200, body: 'finally' })).start();
    receivers.push(r);
    const { endpoint } = await createHook(app.base, ws.key, {
      url: r.url(),
      eventTypes: ['identity.created'],
    });

    const child = spawnWorkerProcess();
    let stderr = '';
    child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
    try {
      const res = await call(app.base, 'POST', '/identities', {
        key: ws.key,
        body: { externalId: 'killed-mid-delivery' },
      });
      expect(res.status).to.equal(201);
      await waitFor(() => r.receipts.length === 1 || child.exitCode !== null, {
        what: 'the child worker to POST',
        timeoutMs: 30_000,
      });
      expect(child.exitCode, stderr).to.equal(null);
    } finally {
      child.kill('SIGKILL');
      if (child.exitCode === null && child.signalCode === null) await once(child, 'exit');
    }
    const [before] = await deliveries(app.base, ws.key, endpoint.id);
    // The attempt under way died with the process: nothing recorded, still pending.
    expect(before).to.include({ status: 'pending', attempts: 0 });

    const worker = await startWorker('webhook-worker-2');
    try {
      const done = await waitFor(
        async () => (await deliveries(app.base, ws.key, endpoint.id)).find((d) => d.status === 'delivered'),
        {
          what: 'the delivery after the lease expired',
          timeoutMs: 30_000,
          intervalMs: 200,
        },
      );
      expect(done).to.include({ id: before.id, attempts: 1, lastStatusCode: 200 });
      expect(r.receipts).to.have.length(2);
      expect(r.receipts[1].body).to.equal(r.receipts[0].body);
      expect(r.receipts[1].headers['x-service-delivery']).to.equal(
        r.receipts[0].headers['x-service-delivery'],
      );
      const detail = await delivery(app.base, ws.key, endpoint.id, done.id);
      expect(detail.attempts.map((a) => [a.attempt, a.statusCode, a.responseBody])).to.deep.equal([
        [1, 200, 'finally'],
      ]);
    } finally {
      await worker.stop();
    }
  });

  it('two workers at once deliver each event exactly once per endpoint', async () => {
    const a = await new Receiver().start();
    const b = await new Receiver(() => ({ status: 200, body: 'b' })).start();
    receivers.push(a, b);
    const { endpoint: epA } = await createHook(app.base, ws.key, {
      url: a.url(),
      eventTypes: ['course.viewed'],
    });
    const { endpoint: epB } = await createHook(app.base, ws.key, {
      url: b.url(),
      eventTypes: ['course.viewed', 'course.published'],
    });
    const workers = await Promise.all([startWorker('webhook-worker-a'), startWorker('webhook-worker-b')]);
    const ids: string[] = [];
    try {
      for (let batch = 0; batch < 5; batch++) {
        await app.rt.orm.em.fork().transactional(async (tx) => {
          for (let i = 0; i < 10; i++) {
            ids.push(
              recordEvent(tx, ws.id, 'course.viewed', {
                course: { id: `crs_${batch}_${i}`, title: 'Twice?' },
                identity: null,
              }),
            );
          }
        });
        app.api.relay.kick();
      }
      const settled = async (endpointId: string) => {
        const list = await deliveries(app.base, ws.key, endpointId, '?limit=100');
        return list.length === 50 && list.every((d) => d.status === 'delivered');
      };
      await waitFor(async () => (await settled(epA.id)) && (await settled(epB.id)), {
        what: '100 deliveries',
        timeoutMs: 30_000,
        intervalMs: 200,
      });
    } finally {
      await Promise.all(workers.map((w) => w.stop()));
    }
    for (const r of [a, b]) {
      expect(r.receipts).to.have.length(50);
      const seen = r.receipts.map((x) => String(x.headers['x-service-delivery']));
      expect(new Set(seen).size).to.equal(50);
      expect([...seen].sort()).to.deep.equal([...ids].sort());
    }
    for (const epId of [epA.id, epB.id]) {
      const list = await deliveries(app.base, ws.key, epId, '?limit=100');
      expect(list.every((d) => d.attempts === 1)).to.equal(true);
    }
  });
});
