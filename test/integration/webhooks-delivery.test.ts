import { expect } from 'chai';
import {
  makeWorkspace,
  startTestApp,
  testRuntime,
  type TestApp,
  type TestWorkspace,
  type TestRuntime,
} from '../support/context.js';
import { call, waitFor } from '../support/http.js';
import { Receiver, type Receipt } from '../support/webhook-receiver.js';
import {
  createHook,
  deliveries,
  delivery,
  dropHooks,
  subscriberVerifies,
  type DeliveryDto,
  type EndpointDto,
} from '../support/webhooks.js';
import { closeRuntime } from '@lectern/runtime';
import { boundQuery } from '@lectern/db';
import { recordEvent } from '@lectern/events';
import { EVENT_TYPES, EventPayloads, type EventPayload, type EventType } from '@lectern/contracts';
import type { ResolvedAddress } from '@lectern/outbound';
import { startWebhookWorker, type WebhookWorkerOptions } from '@lectern/webhooks';

type Worker = { rt: TestRuntime; stop(): Promise<void> };

async function startWorker(
  overrides: Record<string, string> = {},
  opts: WebhookWorkerOptions = {},
): Promise<Worker> {
  const rt = await testRuntime('webhook-worker', overrides);
  const w = await startWebhookWorker(rt, { pollMs: 100, ...opts });
  return {
    rt,
    async stop() {
      await w.stop();
      await closeRuntime(rt, { keepStorage: true });
    },
  };
}

const COURSE = { id: 'crs_123', title: 'Fire safety' };

describe('webhooks: delivery against real receivers', function () {
  this.timeout(40_000);
  let app: TestApp;
  let ws: TestWorkspace;
  let other: TestWorkspace;
  const receivers: Receiver[] = [];
  let n = 0;

  const receiver = async (reply?: ConstructorParameters<typeof Receiver>[0]) => {
    const r = await new Receiver(reply).start();
    receivers.push(r);
    return r;
  };
  const hook = (r: Receiver, eventTypes: string[], workspace = ws) =>
    createHook(app.base, workspace.key, { url: r.url(), eventTypes });
  /** A new learner through the API: emits identity.created through the outbox. */
  const newLearner = async (workspace = ws) => {
    const res = await call<{ data: { id: string; externalId: string } }>(app.base, 'POST', '/identities', {
      key: workspace.key,
      body: { externalId: `learner-${++n}-${Date.now()}`, name: 'Ada Lovelace', email: 'ada@example.com' },
    });
    expect(res.status).to.equal(201);
    return res.body.data;
  };
  /** Events of any type straight into the outbox, as the authoring and player code does. */
  const emit = async <T extends EventType>(
    type: T,
    data: EventPayload<T>,
    workspace = ws,
  ): Promise<string> => {
    let id = '';
    await app.rt.orm.em.fork().transactional(async (tx) => {
      id = recordEvent(tx, workspace.id, type, data);
    });
    app.api.relay.kick();
    return id;
  };
  const endpointOf = (id: string) =>
    call<{ data: EndpointDto }>(app.base, 'GET', `/webhooks/${id}`, { key: ws.key });
  const waitDelivery = (
    endpointId: string,
    pred: (d: DeliveryDto) => boolean,
    what: string,
    timeoutMs = 15_000,
  ) =>
    waitFor(async () => (await deliveries(app.base, ws.key, endpointId)).find(pred), {
      timeoutMs,
      intervalMs: 100,
      what,
    });

  before(async () => {
    // These tests poll the delivery log; the per-key rate limit is tested elsewhere.
    app = await startTestApp({ RATE_LIMIT_PER_MINUTE: '1000000' });
    ws = await makeWorkspace(app.rt.orm.em.fork(), 'sandbox', 'Hooks A');
    other = await makeWorkspace(app.rt.orm.em.fork(), 'scale', 'Hooks B');
  });
  after(async () => {
    if (app) await dropHooks(app.rt.orm.em.fork(), [ws.id, other.id]);
    await Promise.all(receivers.map((r) => r.close()));
    await app?.close();
  });

  describe('with a webhook worker', () => {
    let worker: Worker;
    before(async () => {
      worker = await startWorker();
    });
    after(async () => worker?.stop());

    it('delivers identity.created end to end: signed POST of the SPEC envelope, logged with the exact body', async () => {
      const r = await receiver();
      const { endpoint, secret } = await hook(r, ['identity.created']);
      const learner = await newLearner();
      await waitFor(() => r.receipts.length >= 1, { what: 'the delivery', timeoutMs: 10_000 });
      const got = r.receipts[0];
      expect(got.method).to.equal('POST');
      expect(got.path).to.equal('/hook');

      // The signature, checked as a subscriber would, over the raw bytes; both schemes.
      expect(subscriberVerifies(secret, got)).to.deep.equal({ service: true, standard: true });
      expect(subscriberVerifies(secret, { ...got, body: got.body.replace('Ada', 'Eve') })).to.deep.equal({
        service: false,
        standard: false,
      });
      expect(subscriberVerifies('whsec_' + Buffer.alloc(32, 1).toString('base64'), got).service).to.equal(
        false,
      );

      const env = JSON.parse(got.body) as Record<string, unknown>;
      expect(Object.keys(env)).to.deep.equal(['id', 'type', 'createdAt', 'workspaceId', 'data']);
      expect(env).to.include({ type: 'identity.created', workspaceId: ws.id });
      expect(env.id).to.match(/^evt_/);
      expect(new Date(env.createdAt as string).toISOString()).to.equal(env.createdAt);
      expect(env.data).to.deep.equal({
        identity: {
          id: learner.id,
          externalId: learner.externalId,
          name: 'Ada Lovelace',
          email: 'ada@example.com',
        },
      });

      expect(got.headers['content-type']).to.equal('application/json');
      expect(got.headers['user-agent']).to.match(/^Lectern-Webhooks\//);
      expect(got.headers['x-service-event']).to.equal('identity.created');
      expect(got.headers['x-service-delivery']).to.equal(env.id);
      expect(got.headers['webhook-id']).to.equal(env.id);
      expect(Math.abs(Number(got.headers['webhook-timestamp']) - Date.now() / 1000)).to.be.lessThan(60);

      const [d] = await waitFor(
        async () => {
          const list = await deliveries(app.base, ws.key, endpoint.id);
          return list.length === 1 && list[0].status === 'delivered' ? list : null;
        },
        { what: 'the delivered row' },
      );
      expect(Object.keys(d).sort()).to.deep.equal(
        [
          'attempts',
          'createdAt',
          'eventId',
          'eventType',
          'id',
          'lastStatusCode',
          'nextAttemptAt',
          'status',
          'updatedAt',
        ].sort(),
      );
      expect(d).to.include({
        eventId: env.id,
        eventType: 'identity.created',
        status: 'delivered',
        attempts: 1,
        lastStatusCode: 200,
        nextAttemptAt: null,
      });
      const detail = await delivery(app.base, ws.key, endpoint.id, d.id);
      expect(detail.payload).to.equal(got.body);
      expect(detail.attempts).to.have.length(1);
      expect(detail.attempts[0]).to.include({ attempt: 1, statusCode: 200, error: null, responseBody: 'ok' });
      expect(detail.attempts[0].durationMs).to.be.a('number').within(0, 5000);
      expect(Date.parse(detail.attempts[0].startedAt)).to.be.closeTo(got.at, 2000);
    });

    it('delivers any event type with no pipeline change, only to endpoints subscribed to it', async () => {
      const r = await receiver();
      const all = await receiver();
      const { endpoint, secret } = await hook(r, ['course.published', 'course.completed']);
      const { endpoint: allEp } = await hook(all, [...EVENT_TYPES]);
      const embedUrl = `http://lectern.test/embed/${COURSE.id}`;
      const unpublished = await emit('course.unpublished', { course: COURSE, embedUrl });
      const published = await emit('course.published', { course: COURSE, embedUrl });
      const completed = await emit('course.completed', {
        course: { ...COURSE, contentHash: 'sha256:abc' },
        identity: null,
        completionId: 'cmp_1',
        attempt: 2,
        source: 'scorm',
        score: { correct: 3, total: 4, percent: 75 },
        passed: true,
        passingScore: 70,
        answers: [{ blockId: 'blk_1', correct: true }],
        startedAt: '2026-11-21T09:00:00.000Z',
        completedAt: '2026-11-21T09:10:00.000Z',
        timeSpentSeconds: 600,
      });
      // The catch-all endpoint is fanned out in the same statement, so once it has all three, so has `r`.
      await waitFor(() => [unpublished, published, completed].every((id) => all.forEvent(id).length === 1), {
        what: 'all three at the catch-all',
      });
      await waitFor(() => r.receipts.length >= 2, { what: 'two deliveries' });
      expect(r.forEvent(unpublished)).to.have.length(0);
      expect((await deliveries(app.base, ws.key, endpoint.id)).map((d) => d.eventId).sort()).to.deep.equal(
        [published, completed].sort(),
      );
      expect((await deliveries(app.base, ws.key, allEp.id)).map((d) => d.eventType).sort()).to.deep.equal([
        'course.completed',
        'course.published',
        'course.unpublished',
      ]);

      const pub = JSON.parse(r.forEvent(published)[0].body) as { type: string; data: unknown };
      expect(pub.type).to.equal('course.published');
      expect(pub.data).to.deep.equal({ course: COURSE, embedUrl });
      const done = r.forEvent(completed)[0];
      expect(done.headers['x-service-event']).to.equal('course.completed');
      expect(
        EventPayloads['course.completed'].safeParse((JSON.parse(done.body) as { data: unknown }).data)
          .success,
      ).to.equal(true);
      expect(subscriberVerifies(secret, done).service).to.equal(true);
    });

    it('isolates workspaces: an event reaches only its own workspace endpoints', async () => {
      const mine = await receiver();
      const theirs = await receiver();
      const { endpoint: theirsEp } = await hook(theirs, ['identity.created'], other);
      await hook(mine, ['identity.created']);
      await newLearner();
      await waitFor(() => mine.receipts.length === 1, { what: 'own workspace delivery' });
      const control = await newLearner(other);
      await waitFor(() => theirs.receipts.length === 1, { what: 'the other workspace to get its own event' });
      expect(JSON.parse(theirs.receipts[0].body).data.identity.id).to.equal(control.id);
      expect(await deliveries(app.base, other.key, theirsEp.id)).to.have.length(1);
    });

    it('retries a 500 with backoff up to 5 attempts, then failed, every attempt on record; resend then succeeds', async () => {
      let healthy = false;
      const r = await receiver(() =>
        healthy ? { status: 204 } : { status: 500, body: 'boom: database on fire' },
      );
      const moved = await receiver(() => ({ status: 200, body: 'new home' }));
      const { endpoint, secret } = await hook(r, ['identity.created']);
      await newLearner();
      const failed = await waitDelivery(
        endpoint.id,
        (d) => d.status === 'failed',
        'the delivery to fail',
        20_000,
      );
      expect(failed).to.include({ attempts: 5, lastStatusCode: 500, nextAttemptAt: null });
      expect(r.receipts).to.have.length(5);
      const eventId = failed.eventId;
      for (const got of r.receipts) {
        expect(got.headers['x-service-delivery']).to.equal(eventId);
        expect(got.body).to.equal(r.receipts[0].body);
        expect(subscriberVerifies(secret, got)).to.deep.equal({ service: true, standard: true });
      }
      // WEBHOOK_RETRY_DELAYS=1,1,1,1 in tests: about a second (±20% jitter) between attempts.
      const gaps = r.receipts.slice(1).map((got, i) => got.at - r.receipts[i].at);
      for (const gap of gaps) expect(gap).to.be.within(700, 3000);
      const detail = await delivery(app.base, ws.key, endpoint.id, failed.id);
      expect(detail.attempts.map((a) => a.attempt)).to.deep.equal([1, 2, 3, 4, 5]);
      for (const a of detail.attempts) {
        expect(a).to.include({ statusCode: 500, error: 'HTTP 500', responseBody: 'boom: database on fire' });
      }
      expect(detail.lastError).to.equal('HTTP 500');
      expect(await deliveries(app.base, ws.key, endpoint.id, '?status=failed')).to.have.length(1);

      // Resend goes to the endpoint's *current* URL, with the same body and X-Service-Delivery, as attempt 6.
      healthy = true;
      await call(app.base, 'PATCH', `/webhooks/${endpoint.id}`, {
        key: ws.key,
        body: { url: moved.url('/moved') },
      });
      const res = await call<{ data: DeliveryDto }>(
        app.base,
        'POST',
        `/webhooks/${endpoint.id}/deliveries/${failed.id}/resend`,
        { key: ws.key },
      );
      expect(res.status).to.equal(202);
      expect(res.body.data).to.include({ id: failed.id, status: 'pending' });
      const resent = await waitDelivery(
        endpoint.id,
        (d) => d.id === failed.id && d.status === 'delivered',
        'the resend',
      );
      expect(resent).to.include({ attempts: 6, lastStatusCode: 200 });
      expect(moved.receipts).to.have.length(1);
      expect(moved.receipts[0].path).to.equal('/moved');
      expect(moved.receipts[0].body).to.equal(r.receipts[0].body);
      expect(moved.receipts[0].headers['x-service-delivery']).to.equal(eventId);
      expect(subscriberVerifies(secret, moved.receipts[0])).to.deep.equal({ service: true, standard: true });
      expect(r.receipts).to.have.length(5);

      // A delivered delivery can be resent too: one more attempt, same event.
      await call(app.base, 'POST', `/webhooks/${endpoint.id}/deliveries/${failed.id}/resend`, {
        key: ws.key,
      });
      await waitFor(() => moved.receipts.length === 2, { what: 'the second resend' });
      expect(moved.receipts[1].body).to.equal(moved.receipts[0].body);
      const final = await waitDelivery(
        endpoint.id,
        (d) => d.id === failed.id && d.attempts === 7,
        'attempt 7 on record',
      );
      expect(final.status).to.equal('delivered');
      expect(
        (await call(app.base, 'POST', `/webhooks/${endpoint.id}/deliveries/whd_nope/resend`, { key: ws.key }))
          .status,
      ).to.equal(404);
    });

    it('a resend of a pending delivery is one extra attempt: every automatic retry it had left still follows', async () => {
      const r = await receiver(() => ({ status: 500, body: 'still down' }));
      const { endpoint } = await hook(r, ['identity.created']);
      await newLearner();
      const pending = await waitDelivery(
        endpoint.id,
        (d) => d.attempts === 1 && d.status === 'pending',
        'attempt 1',
      );
      const res = await call(app.base, 'POST', `/webhooks/${endpoint.id}/deliveries/${pending.id}/resend`, {
        key: ws.key,
      });
      expect(res.status).to.equal(202);
      const failed = await waitDelivery(
        endpoint.id,
        (d) => d.status === 'failed',
        'the delivery to fail',
        20_000,
      );
      // 5 automatic attempts plus the manual one.
      expect(failed.attempts).to.equal(6);
      expect(r.receipts).to.have.length(6);
    });

    it('cuts a receiver that never answers at 5 s and retries it', async function () {
      this.timeout(30_000);
      const r = await receiver(() => 'hang');
      const { endpoint } = await hook(r, ['identity.created']);
      await newLearner();
      const d = await waitDelivery(
        endpoint.id,
        (x) => x.attempts >= 1,
        'the first attempt to time out',
        15_000,
      );
      const detail = await delivery(app.base, ws.key, endpoint.id, d.id);
      expect(detail.attempts[0]).to.include({ attempt: 1, statusCode: null, error: 'timeout after 5000 ms' });
      expect(detail.attempts[0].durationMs).to.be.within(4900, 6500);
      expect(detail.status).to.equal('pending');
      expect(Date.parse(detail.nextAttemptAt!) - Date.parse(detail.attempts[0].startedAt)).to.be.within(
        5000,
        8000,
      );
      // The retry reaches the receiver again with the same event.
      await waitFor(() => r.receipts.length >= 2, { what: 'the retry', timeoutMs: 10_000 });
      expect(r.receipts[1].headers['x-service-delivery']).to.equal(
        r.receipts[0].headers['x-service-delivery'],
      );
      expect(r.receipts[1].at - r.receipts[0].at).to.be.within(5500, 9000);
      await call(app.base, 'DELETE', `/webhooks/${endpoint.id}`, { key: ws.key });
    });

    it('a 410 is a failure like any other: 5 attempts, then failed; the endpoint stays active and keeps receiving', async () => {
      const r = await receiver(() => ({ status: 410, body: 'unsubscribed' }));
      const { endpoint } = await hook(r, ['identity.created']);
      await newLearner();
      const d = await waitDelivery(endpoint.id, (x) => x.status === 'failed', 'five attempts', 20_000);
      expect(d).to.include({ attempts: 5, lastStatusCode: 410, nextAttemptAt: null });
      expect(r.receipts).to.have.length(5);
      expect(new Set(r.receipts.map((x) => x.headers['x-service-delivery']))).to.have.property('size', 1);
      const detail = await delivery(app.base, ws.key, endpoint.id, d.id);
      expect(detail.lastError).to.equal('HTTP 410');
      for (const a of detail.attempts)
        expect(a).to.include({ statusCode: 410, responseBody: 'unsubscribed' });
      const ep = (await endpointOf(endpoint.id)).body.data;
      expect(ep).to.include({ isActive: true, disabledReason: null, disabledAt: null });

      // Nothing was cancelled or switched off: the next event goes to it too.
      const later = await newLearner();
      await waitFor(() => r.receipts.some((x) => JSON.parse(x.body).data.identity.id === later.id), {
        what: 'the next event at the 410 receiver',
      });
      await call(app.base, 'DELETE', `/webhooks/${endpoint.id}`, { key: ws.key });
    });

    it('switches an endpoint off only once every delivery to it has failed for 5 days, with the reason on the endpoint', async function () {
      this.timeout(90_000);
      const r = await receiver(() => ({ status: 503, body: 'down' }));
      const { endpoint } = await hook(r, ['identity.created']);
      const em = app.rt.orm.em.fork();
      /** Start of the endpoint's run of failed attempts (null: none). */
      const failingSince = async (): Promise<Date | null> => {
        const [row] = await boundQuery<{ failing_since: string | Date | null }>(
          em,
          'select failing_since from webhook_endpoints where id = ?',
          [endpoint.id],
        );
        return row.failing_since === null ? null : new Date(row.failing_since);
      };
      /** Time is driven by writing the run's start, not by waiting days. */
      const failingFor = (interval: string) =>
        boundQuery(em, `update webhook_endpoints set failing_since = now() - ?::interval where id = ?`, [
          interval,
          endpoint.id,
        ]);

      // The first failure starts the run.
      await newLearner();
      await waitDelivery(endpoint.id, (x) => x.attempts >= 1, 'the first failure');
      expect(await failingSince()).to.be.an.instanceOf(Date);

      // Failing for just under 5 days: a delivery that fails for good leaves the endpoint on.
      await failingFor('4 days 23 hours');
      const first = await waitDelivery(
        endpoint.id,
        (x) => x.status === 'failed',
        'the first delivery to fail',
        20_000,
      );
      expect(first.attempts).to.equal(5);
      expect((await endpointOf(endpoint.id)).body.data).to.include({ isActive: true, disabledReason: null });

      // A delivery still retrying when the endpoint goes off: parked an hour ahead so it is pending then.
      await newLearner();
      const parked = await waitDelivery(
        endpoint.id,
        (x) => x.id !== first.id && x.attempts >= 1,
        'a second delivery to be attempted',
      );
      await waitFor(
        async () =>
          (
            await boundQuery(
              em,
              `update webhook_deliveries set next_attempt_at = now() + interval '1 hour'
                where id = ? and status = 'pending' and locked_until is null returning id`,
              [parked.id],
            )
          ).length === 1,
        { what: 'the second delivery parked between attempts' },
      );

      // Five days and a minute: the next delivery that fails for good switches the endpoint off.
      await failingFor('5 days 1 minute');
      const runStart = (await failingSince())!;
      await newLearner();
      const switchedOff = await waitFor(
        async () => {
          const ep = (await endpointOf(endpoint.id)).body.data;
          return ep.isActive ? null : ep;
        },
        { what: 'the endpoint to be switched off', timeoutMs: 30_000, intervalMs: 200 },
      );
      expect(switchedOff.disabledReason)
        .to.match(/Every delivery failed for 5 days/)
        .and.include(runStart.toISOString().slice(0, 19))
        .and.match(/re-enable with isActive: true/);
      expect(Date.now() - Date.parse(switchedOff.disabledAt!)).to.be.within(-60_000, 60_000);
      const all = await deliveries(app.base, ws.key, endpoint.id);
      expect(all).to.have.length(3);
      const last = all.find((x) => x.id !== first.id && x.id !== parked.id)!;
      expect(last).to.include({ status: 'failed', attempts: 5 });
      expect(all.find((x) => x.id === parked.id)).to.include({ status: 'cancelled', nextAttemptAt: null });

      // Switched off: the next event does not reach it.
      const receiptsAtSwitchOff = r.receipts.length;
      const control = await receiver();
      await hook(control, ['identity.created']);
      const after = await newLearner();
      await waitFor(() => control.receipts.some((x) => JSON.parse(x.body).data.identity.id === after.id), {
        what: 'the control endpoint',
      });
      expect(r.receipts).to.have.length(receiptsAtSwitchOff);
      expect(await deliveries(app.base, ws.key, endpoint.id)).to.have.length(3);

      // Switching it back on clears the reason and starts a new run.
      const back = await call<{ data: EndpointDto }>(app.base, 'PATCH', `/webhooks/${endpoint.id}`, {
        key: ws.key,
        body: { isActive: true },
      });
      expect(back.body.data).to.include({ isActive: true, disabledReason: null, disabledAt: null });
      expect(await failingSince()).to.equal(null);
      await call(app.base, 'DELETE', `/webhooks/${endpoint.id}`, { key: ws.key });
    });

    it('a 2xx ends the run of failures: failures after it start a new run, and the endpoint stays on', async function () {
      this.timeout(60_000);
      let healthy = true;
      const r = await receiver(() => (healthy ? { status: 200 } : { status: 500 }));
      const { endpoint } = await hook(r, ['identity.created']);
      const em = app.rt.orm.em.fork();
      /** Start of the endpoint's run of failed attempts (null: none). */
      const failingSince = async (): Promise<Date | null> => {
        const [row] = await boundQuery<{ failing_since: string | Date | null }>(
          em,
          'select failing_since from webhook_endpoints where id = ?',
          [endpoint.id],
        );
        return row.failing_since === null ? null : new Date(row.failing_since);
      };
      // As if it had been failing for six days when this delivery goes through.
      await boundQuery(
        em,
        `update webhook_endpoints set failing_since = now() - interval '6 days' where id = ?`,
        [endpoint.id],
      );
      await newLearner();
      await waitDelivery(endpoint.id, (x) => x.status === 'delivered', 'the delivery');
      await waitFor(async () => (await failingSince()) === null, { what: 'the run to end' });

      healthy = false;
      const startedFailing = Date.now();
      await newLearner();
      await waitDelivery(endpoint.id, (x) => x.status === 'failed', 'the next delivery to fail', 20_000);
      const since = (await failingSince())!;
      expect(since.getTime()).to.be.within(startedFailing - 60_000, Date.now());
      expect((await endpointOf(endpoint.id)).body.data).to.include({ isActive: true, disabledReason: null });
      await call(app.base, 'DELETE', `/webhooks/${endpoint.id}`, { key: ws.key });
    });

    it('an endpoint created with isActive: false receives nothing until switched on', async () => {
      const off = await receiver();
      const control = await receiver();
      const { endpoint } = await createHook(app.base, ws.key, {
        url: off.url(),
        eventTypes: ['identity.created'],
        isActive: false,
      });
      expect(endpoint.isActive).to.equal(false);
      await hook(control, ['identity.created']);
      const a = await newLearner();
      await waitFor(() => control.receipts.some((x) => JSON.parse(x.body).data.identity.id === a.id), {
        what: 'the control endpoint',
      });
      expect(off.receipts).to.have.length(0);
      expect(await deliveries(app.base, ws.key, endpoint.id)).to.have.length(0);

      await call(app.base, 'PATCH', `/webhooks/${endpoint.id}`, { key: ws.key, body: { isActive: true } });
      const b = await newLearner();
      await waitFor(() => off.receipts.some((x) => JSON.parse(x.body).data.identity.id === b.id), {
        what: 'the endpoint once switched on',
      });
      expect(off.receipts).to.have.length(1);
      await call(app.base, 'DELETE', `/webhooks/${endpoint.id}`, { key: ws.key });
    });

    it('inactive and deleted endpoints receive nothing; deactivating cancels pending deliveries', async () => {
      const flaky = await receiver(() => ({ status: 503 }));
      const quiet = await receiver();
      const gone = await receiver();
      const control = await receiver();
      const { endpoint: flakyEp } = await hook(flaky, ['identity.created']);
      const { endpoint: quietEp } = await hook(quiet, ['identity.created']);
      const { endpoint: goneEp } = await hook(gone, ['identity.created']);
      await hook(control, ['identity.created']);

      await newLearner();
      const pending = await waitDelivery(
        flakyEp.id,
        (x) => x.attempts >= 1 && x.status === 'pending',
        'a retry to be scheduled',
      );
      const off = await call<{ data: EndpointDto }>(app.base, 'PATCH', `/webhooks/${flakyEp.id}`, {
        key: ws.key,
        body: { isActive: false },
      });
      expect(off.body.data.isActive).to.equal(false);
      const cancelled = (await deliveries(app.base, ws.key, flakyEp.id)).find((x) => x.id === pending.id)!;
      expect(cancelled).to.include({ status: 'cancelled', nextAttemptAt: null });
      const triesAtCancel = flaky.receipts.length;

      await call(app.base, 'PATCH', `/webhooks/${quietEp.id}`, { key: ws.key, body: { isActive: false } });
      expect((await call(app.base, 'DELETE', `/webhooks/${goneEp.id}`, { key: ws.key })).status).to.equal(
        204,
      );
      const quietBefore = quiet.receipts.length;
      const goneBefore = gone.receipts.length;

      // Two more events, spread over more than the 1 s retry delay; the control endpoint proves they went out.
      const a = await newLearner();
      await waitFor(() => control.receipts.some((x) => JSON.parse(x.body).data.identity.id === a.id), {
        what: 'control a',
      });
      await new Promise((res) => setTimeout(res, 1500));
      const b = await newLearner();
      await waitFor(() => control.receipts.some((x) => JSON.parse(x.body).data.identity.id === b.id), {
        what: 'control b',
      });
      expect(quiet.receipts.length).to.equal(quietBefore);
      expect(gone.receipts.length).to.equal(goneBefore);
      expect(flaky.receipts.length).to.equal(triesAtCancel);
      expect(await deliveries(app.base, ws.key, quietEp.id)).to.have.length(1);
      expect(
        (await call(app.base, 'GET', `/webhooks/${goneEp.id}/deliveries`, { key: ws.key })).status,
      ).to.equal(404);

      // Resend and test send need an active endpoint.
      const resend = await call(app.base, 'POST', `/webhooks/${flakyEp.id}/deliveries/${pending.id}/resend`, {
        key: ws.key,
      });
      expect(resend.status).to.equal(409);
      expect(
        (await call(app.base, 'POST', `/webhooks/${flakyEp.id}/test`, { key: ws.key, body: {} })).status,
      ).to.equal(409);
    });

    it('test send: a signed sample event of the requested (or first subscribed) type, one attempt, in the log', async () => {
      const r = await receiver();
      const { endpoint, secret } = await hook(r, ['course.progress', 'course.completed']);
      const res = await call<{ data: DeliveryDto }>(app.base, 'POST', `/webhooks/${endpoint.id}/test`, {
        key: ws.key,
        body: { eventType: 'certificate.issued' },
      });
      expect(res.status).to.equal(202);
      expect(res.body.data).to.include({ eventType: 'certificate.issued', status: 'pending', attempts: 0 });
      await waitFor(() => r.receipts.length === 1, { what: 'the test event' });
      const got = r.receipts[0];
      expect(subscriberVerifies(secret, got)).to.deep.equal({ service: true, standard: true });
      expect(got.headers['x-service-event']).to.equal('certificate.issued');
      const env = JSON.parse(got.body) as { id: string; type: string; workspaceId: string; data: unknown };
      expect(env).to.include({ id: res.body.data.eventId, type: 'certificate.issued', workspaceId: ws.id });
      expect(EventPayloads['certificate.issued'].safeParse(env.data).success).to.equal(true);
      await waitDelivery(
        endpoint.id,
        (d) => d.id === res.body.data.id && d.status === 'delivered',
        'the test delivery',
      );

      // Without a type: the endpoint's first one. Every type's sample satisfies its payload contract.
      const dflt = await call<{ data: DeliveryDto }>(app.base, 'POST', `/webhooks/${endpoint.id}/test`, {
        key: ws.key,
      });
      expect(dflt.body.data.eventType).to.equal('course.progress');
      for (const type of EVENT_TYPES) {
        await call(app.base, 'POST', `/webhooks/${endpoint.id}/test`, {
          key: ws.key,
          body: { eventType: type },
        });
      }
      await waitFor(() => r.receipts.length === 2 + EVENT_TYPES.length, { what: 'every sample' });
      for (const got2 of r.receipts) {
        const e = JSON.parse(got2.body) as { type: EventType; data: unknown };
        expect(EventPayloads[e.type].safeParse(e.data).success, e.type).to.equal(true);
      }
      const bad = await call(app.base, 'POST', `/webhooks/${endpoint.id}/test`, {
        key: ws.key,
        body: { eventType: 'course.exploded' },
      });
      expect(bad.status).to.equal(400);
    });

    it('a test send to a failing receiver is attempted once and marked failed', async () => {
      const r = await receiver(() => ({ status: 500 }));
      const { endpoint } = await hook(r, ['course.viewed']);
      const res = await call<{ data: DeliveryDto }>(app.base, 'POST', `/webhooks/${endpoint.id}/test`, {
        key: ws.key,
      });
      const d = await waitDelivery(
        endpoint.id,
        (x) => x.id === res.body.data.id && x.status === 'failed',
        'the failed test send',
      );
      expect(d).to.include({ attempts: 1, lastStatusCode: 500 });
      expect(r.receipts).to.have.length(1);
    });

    it('the delivery log: newest first, paged, filtered by status and eventType', async () => {
      // Published events succeed; viewed events get 500 and stay pending (retrying) while we look.
      const r = await receiver((got) =>
        got.headers['x-service-event'] === 'course.viewed' ? { status: 500 } : { status: 200 },
      );
      const { endpoint } = await hook(r, ['course.viewed', 'course.published']);
      const ids: string[] = [];
      for (let i = 0; i < 3; i++) {
        ids.push(
          await emit('course.published', {
            course: { ...COURSE, title: `v${i}` },
            embedUrl: 'http://lectern.test/embed/x',
          }),
        );
        ids.push(await emit('course.viewed', { course: COURSE, identity: null }));
      }
      await waitFor(
        async () => {
          const all = await deliveries(app.base, ws.key, endpoint.id);
          return (
            all.length === 6 &&
            all.filter((d) => d.status === 'delivered').length === 3 &&
            all.every((d) => d.attempts >= 1)
          );
        },
        { what: 'six deliveries with an attempt each' },
      );

      const all = await deliveries(app.base, ws.key, endpoint.id);
      const created = all.map((d) => Date.parse(d.createdAt));
      expect(created).to.deep.equal([...created].sort((a, b) => b - a));
      const page = await call<{
        data: DeliveryDto[];
        pagination: { limit: number; offset: number; total: number; hasMore: boolean };
      }>(app.base, 'GET', `/webhooks/${endpoint.id}/deliveries?limit=4&offset=2`, { key: ws.key });
      expect(page.body.pagination).to.deep.equal({ limit: 4, offset: 2, total: 6, hasMore: false });
      expect(page.body.data.map((d) => d.id)).to.deep.equal(all.slice(2).map((d) => d.id));

      const delivered = await deliveries(app.base, ws.key, endpoint.id, '?status=delivered');
      expect(delivered.map((d) => d.eventType)).to.deep.equal([
        'course.published',
        'course.published',
        'course.published',
      ]);
      const pending = await deliveries(
        app.base,
        ws.key,
        endpoint.id,
        '?status=pending&eventType=course.viewed',
      );
      expect(pending).to.have.length(3);
      for (const d of pending) {
        expect(d.lastStatusCode).to.equal(500);
        expect(Date.parse(d.nextAttemptAt!)).to.be.greaterThan(Date.parse(d.createdAt));
      }
      expect(
        await deliveries(app.base, ws.key, endpoint.id, '?eventType=course.published&status=pending'),
      ).to.have.length(0);
      const badStatus = await call<{ issues: { path: string[] }[] }>(
        app.base,
        'GET',
        `/webhooks/${endpoint.id}/deliveries?status=sent`,
        { key: ws.key },
      );
      expect(badStatus.status).to.equal(400);
      expect(badStatus.body.issues[0].path).to.deep.equal(['query', 'status']);
      await call(app.base, 'DELETE', `/webhooks/${endpoint.id}`, { key: ws.key });
    });
  });

  describe('Retry-After', () => {
    let worker: Worker;
    // A longest delay of 4 s, so a Retry-After of 3 s is within the schedule and one of 600 s is capped at 4 s.
    before(async () => {
      worker = await startWorker({ WEBHOOK_RETRY_DELAYS: '1,1,1,4' });
    });
    after(async () => worker?.stop());

    it('is honoured on 429/503 within the schedule, never beyond its longest delay', async () => {
      const soon = await receiver((_got: Receipt, i) =>
        i === 0 ? { status: 503, headers: { 'retry-after': '3' } } : { status: 200 },
      );
      const late = await receiver(() => ({ status: 429, headers: { 'retry-after': '600' } }));
      const { endpoint: soonEp } = await hook(soon, ['identity.created']);
      const { endpoint: lateEp } = await hook(late, ['identity.created']);
      await newLearner();

      const capped = await waitDelivery(lateEp.id, (d) => d.attempts === 1, 'the 429');
      const lateDetail = await delivery(app.base, ws.key, lateEp.id, capped.id);
      const wait = Date.parse(lateDetail.nextAttemptAt!) - Date.parse(lateDetail.attempts[0].startedAt);
      expect(wait).to.be.within(3900, 5500);
      expect(lateDetail.attempts[0]).to.include({ statusCode: 429, error: 'HTTP 429' });
      await call(app.base, 'DELETE', `/webhooks/${lateEp.id}`, { key: ws.key });

      await waitDelivery(soonEp.id, (d) => d.status === 'delivered', 'the retry after Retry-After', 15_000);
      expect(soon.receipts).to.have.length(2);
      // Without Retry-After the wait would be ~1 s.
      expect(soon.receipts[1].at - soon.receipts[0].at).to.be.within(2900, 4500);
    });
  });

  describe('SSRF guard at delivery time', () => {
    // The endpoint was accepted when `hooks.example.com` looked public; now the name resolves to loopback
    // (DNS rebinding). The worker checks and pins the address on every attempt (resolving the name at most every
    // 30 s: `cachedResolver`).
    const rebound = async (host: string): Promise<ResolvedAddress[]> => {
      if (host === 'hooks.example.com') return [{ address: '127.0.0.1', family: 4 }];
      throw Object.assign(new Error(`no such host ${host}`), { code: 'ENOTFOUND' });
    };

    it('refuses a host name that resolves to 127.0.0.1, and delivers once private networks are allowed', async () => {
      const r = await receiver();
      const { endpoint } = await createHook(app.base, ws.key, {
        url: `http://hooks.example.com:${r.port}/hook`,
        eventTypes: ['identity.created'],
      });
      const strict = await startWorker({ ALLOW_PRIVATE_NETWORKS: 'false' }, { lookup: rebound });
      let d: DeliveryDto;
      try {
        await newLearner();
        d = await waitDelivery(endpoint.id, (x) => x.attempts >= 1, 'the refused attempt');
      } finally {
        await strict.stop();
      }
      const detail = await delivery(app.base, ws.key, endpoint.id, d.id);
      expect(detail.attempts[0]).to.include({
        statusCode: null,
        error: 'refused: private address 127.0.0.1',
      });
      expect(detail.attempts[0].durationMs).to.be.lessThan(1000);
      expect(r.receipts).to.have.length(0);

      // Same name, same resolver, private networks allowed: it reaches the receiver (so the refusal was the guard),
      // connected to the checked address with the original Host header.
      const lenient = await startWorker({ ALLOW_PRIVATE_NETWORKS: 'true' }, { lookup: rebound });
      try {
        await waitDelivery(
          endpoint.id,
          (x) => x.id === d.id && x.status === 'delivered',
          'the allowed retry',
        );
      } finally {
        await lenient.stop();
      }
      expect(r.receipts).to.have.length(1);
      expect(r.receipts[0].headers.host).to.equal(`hooks.example.com:${r.port}`);
    });

    it('resolves a host name once for many deliveries, and checks the answer on every attempt', async () => {
      const r = await receiver();
      const { endpoint } = await createHook(app.base, ws.key, {
        url: `http://hooks.example.com:${r.port}/hook`,
        eventTypes: ['identity.created'],
      });
      let lookups = 0;
      const counted = async (host: string) => {
        lookups++;
        return rebound(host);
      };
      // Refused (loopback) under the strict policy, however often the cached answer is used...
      const strict = await startWorker({ ALLOW_PRIVATE_NETWORKS: 'false' }, { lookup: counted });
      try {
        for (let i = 0; i < 5; i++) await newLearner();
        await waitFor(
          async () => {
            const list = await deliveries(app.base, ws.key, endpoint.id);
            return list.length >= 5 && list.every((d) => d.attempts >= 1) ? list : null;
          },
          { what: 'five refused attempts' },
        );
      } finally {
        await strict.stop();
      }
      expect(lookups).to.equal(1);
      expect(r.receipts).to.have.length(0);
      // ...and a worker allowed private networks resolves once more (its own cache) and delivers every one.
      const lenient = await startWorker({ ALLOW_PRIVATE_NETWORKS: 'true' }, { lookup: counted });
      try {
        for (let i = 0; i < 5; i++) await newLearner();
        await waitFor(() => (r.receipts.length >= 10 ? true : null), { what: 'ten deliveries' });
      } finally {
        await lenient.stop();
      }
      expect(lookups).to.equal(2);
    });
  });
});
