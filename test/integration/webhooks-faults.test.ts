import { expect } from 'chai';
import { once } from 'node:events';
import {
  makeWorkspace,
  startTestApp,
  testConfig,
  testRuntime,
  type TestApp,
  type TestRuntime,
  type TestWorkspace,
} from '../support/context.js';
import { waitFor } from '../support/http.js';
import { TcpProxy } from '../support/tcp-proxy.js';
import { Receiver } from '../support/webhook-receiver.js';
import { createHook, dropHooks, spawnWorkerProcess } from '../support/webhooks.js';
import { boundQuery } from '@lectern/db';
import { recordEvent } from '@lectern/events';
import { closeRuntime } from '@lectern/runtime';
import { startWebhookWorker } from '@lectern/webhooks';

/**
 * Faults in the middle of a burst (issue 24): the worker's connections to NATS or to PostgreSQL are cut while
 * deliveries are under way (through loopback TCP proxies, so the machine's real servers keep running for everyone
 * else). The worker also runs the outbox relay (the API here runs none), so the cut reaches the whole path: the
 * relay's publishes and the transaction that marks a batch sent and writes its deliveries, the claims, the
 * attempts and their records; half the events are written while the connection is down. Every event must arrive
 * at least once, and no delivery may be recorded as delivered unless the receiver answered it with a 2xx. The
 * receiver refuses every fifth request with a 503, so retries are part of the burst.
 */
const BURST = 120;

function proxyFor(url: string, scheme: string) {
  const u = new URL(url.replace(new RegExp(`^${scheme}:`), 'http:'));
  return new TcpProxy({ host: u.hostname, port: Number(u.port) }).start();
}

describe('webhooks: faults mid-burst', function () {
  this.timeout(120_000);
  let app: TestApp;
  const workspaces: TestWorkspace[] = [];

  before(async () => {
    app = await startTestApp({ RATE_LIMIT_PER_MINUTE: '1000000', API_OUTBOX_RELAY: 'false' });
  });
  after(async () => {
    if (app)
      await dropHooks(
        app.rt.orm.em.fork(),
        workspaces.map((w) => w.id),
      );
    await app?.close();
  });

  /**
   * A worker (and relay) whose bus and database connections run through proxies; a burst of BURST events, the
   * second half written while the `cut` proxy is down (cut once the first deliveries have arrived, restored 1.5 s
   * later). Returns when every event has a delivered row.
   */
  async function burstWith(cut: 'nats' | 'pg') {
    const cfg = testConfig();
    const nats = await proxyFor(cfg.NATS_URL, 'nats');
    const pg = await proxyFor(cfg.DATABASE_URL, 'postgres');
    const dbUrl = new URL(cfg.DATABASE_URL);
    dbUrl.host = `127.0.0.1:${pg.port}`;
    // Every HTTP answer, per event id, so a delivered row can be matched to a 2xx the receiver really sent.
    const answered = new Map<string, number[]>();
    const receiver = await new Receiver((got, n) => {
      const status = n % 5 === 4 ? 503 : 200;
      const id = String(got.headers['x-service-delivery']);
      answered.set(id, [...(answered.get(id) ?? []), status]);
      return { status, body: status === 200 ? 'ok' : 'busy' };
    }).start();
    const ws = await makeWorkspace(app.rt.orm.em.fork(), 'scale', 'Faults');
    workspaces.push(ws);
    const { endpoint } = await createHook(app.base, ws.key, {
      url: receiver.url(),
      eventTypes: ['identity.created'],
    });

    let workerRt: TestRuntime | undefined;
    let worker: { stop(): Promise<void> } | undefined;
    try {
      workerRt = await testRuntime('webhook-faults-worker', {
        NATS_URL: `nats://127.0.0.1:${nats.port}`,
        DATABASE_URL: dbUrl.toString(),
        WEBHOOK_RETRY_DELAYS: '1,1,1,1',
        WEBHOOK_WORKER_OUTBOX_RELAY: 'true',
      });
      worker = await startWebhookWorker(workerRt, { pollMs: 100, timeoutMs: 2_000 });

      const write = async (from: number, to: number) => {
        const em = app.rt.orm.em.fork();
        const written = [];
        for (let i = from; i < to; i++)
          written.push(
            recordEvent(em, ws.id, 'identity.created', {
              identity: { id: `idn_fault_${i}`, externalId: `fault-${i}`, name: null, email: null },
            }),
          );
        await em.flush();
        return written;
      };
      const ids = await write(0, BURST / 2);
      await waitFor(() => receiver.receipts.length >= 10, {
        what: 'the first deliveries',
        timeoutMs: 60_000,
      });
      const okBefore = [...answered.values()].filter((codes) => codes.includes(200)).length;
      expect(okBefore, 'the fault lands mid-burst').to.be.lessThan(BURST / 2);
      const proxy = cut === 'nats' ? nats : pg;
      proxy.cut();
      ids.push(...(await write(BURST / 2, BURST)));
      await new Promise((r) => setTimeout(r, 1_500));
      proxy.restore();

      const rows = await waitFor(
        async () => {
          const r = await boundQuery<{ event_id: string; status: string; last_status_code: number | null }>(
            app.rt.orm.em.fork(),
            `select event_id, status, last_status_code from webhook_deliveries where endpoint_id = ?`,
            [endpoint.id],
          );
          return r.length === BURST && r.every((x) => x.status === 'delivered') ? r : null;
        },
        { what: 'every delivery recorded as delivered', timeoutMs: 90_000, intervalMs: 250 },
      );
      // At least once: every event reached the receiver.
      for (const id of ids) expect(receiver.forEvent(id), id).to.not.have.length(0);
      // None delivered without a 2xx: each delivered row's event got a 2xx answer, and the row says so.
      for (const r of rows) {
        expect(answered.get(r.event_id), r.event_id).to.include(200);
        expect(r.last_status_code, r.event_id).to.equal(200);
      }
    } finally {
      nats.restore();
      pg.restore();
      await worker?.stop();
      if (workerRt) await closeRuntime(workerRt, { keepStorage: true });
      await receiver.close();
      await nats.close();
      await pg.close();
    }
  }

  it('NATS cut and back mid-burst (a restart, to the worker and its relay): every event arrives, none delivered without a 2xx', async () => {
    await burstWith('nats');
  });

  it('PostgreSQL cut and back mid-burst (a restart, to the worker and its relay): every event arrives, none delivered without a 2xx', async () => {
    await burstWith('pg');
  });
  it('a worker process killed between claims and outcomes: every event arrives, none delivered without a 2xx', async () => {
    // Requests 10–19 are held open, so the worker is surely killed with claimed rows whose outcome is not recorded.
    const answered = new Map<string, number[]>();
    const receiver = await new Receiver((got, n) => {
      if (n >= 10 && n < 20) return 'hang';
      const id = String(got.headers['x-service-delivery']);
      answered.set(id, [...(answered.get(id) ?? []), 200]);
      return { status: 200, body: 'ok' };
    }).start();
    const ws = await makeWorkspace(app.rt.orm.em.fork(), 'scale', 'Faults (kill)');
    workspaces.push(ws);
    const { endpoint } = await createHook(app.base, ws.key, {
      url: receiver.url(),
      eventTypes: ['identity.created'],
    });
    const child = spawnWorkerProcess({
      WEBHOOK_RETRY_DELAYS: '1,1,1,1',
      WEBHOOK_WORKER_OUTBOX_RELAY: 'true',
    });
    let stderr = '';
    child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
    let workerRt: TestRuntime | undefined;
    let worker: { stop(): Promise<void> } | undefined;
    try {
      const em = app.rt.orm.em.fork();
      const ids = Array.from({ length: BURST }, (_, i) =>
        recordEvent(em, ws.id, 'identity.created', {
          identity: { id: `idn_kill_${i}`, externalId: `kill-${i}`, name: null, email: null },
        }),
      );
      await em.flush();
      await waitFor(() => receiver.receipts.length >= 20 || child.exitCode !== null, {
        what: 'the child worker to be mid-burst',
        timeoutMs: 60_000,
      });
      expect(child.exitCode, stderr).to.equal(null);
      child.kill('SIGKILL');
      if (child.exitCode === null && child.signalCode === null) await once(child, 'exit');
      const [{ leased }] = await boundQuery<{ leased: string }>(
        app.rt.orm.em.fork(),
        `select count(*) as leased from webhook_deliveries
          where endpoint_id = ? and status = 'pending' and locked_until > now()`,
        [endpoint.id],
      );
      expect(Number(leased), 'claimed rows left without an outcome').to.be.greaterThan(0);

      workerRt = await testRuntime('webhook-faults-worker-2', {
        WEBHOOK_RETRY_DELAYS: '1,1,1,1',
        WEBHOOK_WORKER_OUTBOX_RELAY: 'true',
      });
      worker = await startWebhookWorker(workerRt, { pollMs: 100 });
      const rows = await waitFor(
        async () => {
          const r = await boundQuery<{ event_id: string; status: string; last_status_code: number | null }>(
            app.rt.orm.em.fork(),
            `select event_id, status, last_status_code from webhook_deliveries where endpoint_id = ?`,
            [endpoint.id],
          );
          return r.length === BURST && r.every((x) => x.status === 'delivered') ? r : null;
        },
        { what: 'every delivery recorded after the leases expired', timeoutMs: 90_000, intervalMs: 250 },
      );
      for (const id of ids) expect(receiver.forEvent(id), id).to.not.have.length(0);
      for (const r of rows) {
        expect(answered.get(r.event_id), r.event_id).to.include(200);
        expect(r.last_status_code, r.event_id).to.equal(200);
      }
    } finally {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGKILL');
        await once(child, 'exit');
      }
      await worker?.stop();
      if (workerRt) await closeRuntime(workerRt, { keepStorage: true });
      await receiver.close();
    }
  });
});
