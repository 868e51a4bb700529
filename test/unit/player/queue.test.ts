import { expect } from 'chai';
import {
  EventQueue,
  MAX_EVENTS_PER_BATCH,
  PlayerClient,
  eventOutcome,
  type Batch,
  type FetchInit,
  type KeyValueStore,
  type QueueOptions,
  type SendOutcome,
} from '@lectern/player';

/** localStorage as the browser has it: strings in, strings out. */
class MemoryStore implements KeyValueStore {
  readonly data = new Map<string, string>();
  getItem(k: string) {
    return this.data.get(k) ?? null;
  }
  setItem(k: string, v: string) {
    this.data.set(k, v);
  }
  removeItem(k: string) {
    this.data.delete(k);
  }
}

interface Sent {
  batch: Batch;
  keepalive: boolean;
}

/** A transport whose answers the test scripts, recording every attempt. */
function harness(overrides: Partial<QueueOptions> = {}, store = new MemoryStore()) {
  const sent: Sent[] = [];
  const answers: SendOutcome[] = [];
  let ids = 0;
  let clock = 1_000_000;
  const responses: unknown[] = [];
  const queue = new EventQueue({
    storage: store,
    storageKey: 'outbox:c1',
    newBatchId: () => `b${++ids}`,
    now: () => clock,
    send: async (batch, opts) => {
      sent.push({ batch: { batchId: batch.batchId, events: [...batch.events] }, keepalive: opts.keepalive });
      return answers.shift() ?? { kind: 'ok', response: { completion: {} } };
    },
    onResponse: (r) => responses.push(r),
    ...overrides,
  });
  return {
    queue,
    store,
    sent,
    answers,
    responses,
    advance: (ms: number) => (clock += ms),
  };
}

describe('player event outbox', () => {
  it('gathers events into one batch per flush, with an id fixed at sealing', async () => {
    const h = harness();
    h.queue.add({ type: 'screen', screenId: 's1' });
    h.queue.add({ type: 'answer', blockId: 'q1', answer: 'a' });
    await h.queue.flush();
    expect(h.sent).to.deep.equal([
      {
        batch: {
          batchId: 'b1',
          events: [
            { type: 'screen', screenId: 's1' },
            { type: 'answer', blockId: 'q1', answer: 'a' },
          ],
        },
        keepalive: false,
      },
    ]);
    expect(h.queue.unacknowledged).to.equal(0);
    expect(h.store.data.size).to.equal(0);
    await h.queue.flush();
    expect(h.sent).to.have.length(1); // nothing new, nothing sent
  });

  it('keeps every event in storage until the server acknowledges it', async () => {
    const h = harness();
    h.queue.add({ type: 'answer', blockId: 'q1', answer: true });
    expect(JSON.parse(h.store.getItem('outbox:c1')!)).to.deep.equal({
      pending: [{ type: 'answer', blockId: 'q1', answer: true }],
      sealed: [],
    });
    h.answers.push({ kind: 'retry' });
    await h.queue.flush();
    expect(JSON.parse(h.store.getItem('outbox:c1')!)).to.deep.equal({
      pending: [],
      sealed: [{ batchId: 'b1', events: [{ type: 'answer', blockId: 'q1', answer: true }] }],
    });
  });

  it('retries a failed batch with the same batchId, after a backoff unless forced', async () => {
    const h = harness();
    h.queue.add({ type: 'screen', screenId: 's1' });
    h.answers.push({ kind: 'retry' });
    await h.queue.flush();
    h.queue.add({ type: 'screen', screenId: 's2' });
    await h.queue.flush(); // inside the 1 s backoff: not sent
    expect(h.sent).to.have.length(1);
    h.advance(1001);
    await h.queue.flush();
    expect(h.sent.map((s) => s.batch.batchId)).to.deep.equal(['b1', 'b1', 'b2']);
    expect(h.sent[1].batch).to.deep.equal(h.sent[0].batch);
    expect(h.queue.unacknowledged).to.equal(0);
  });

  it('doubles the backoff up to 30 s and a forced flush (screen change, online) ignores it', async () => {
    const h = harness();
    h.queue.add({ type: 'screen', screenId: 's1' });
    for (let i = 0; i < 8; i++) {
      h.answers.push({ kind: 'retry' });
      await h.queue.flush(true);
    }
    expect(h.sent).to.have.length(8);
    h.advance(29_000);
    await h.queue.flush();
    expect(h.sent).to.have.length(8);
    h.advance(1_001);
    await h.queue.flush();
    expect(h.sent).to.have.length(9);
    expect(new Set(h.sent.map((s) => s.batch.batchId))).to.deep.equal(new Set(['b1']));
  });

  it('a page loaded later resends what an earlier page left in storage, same ids, in order', async () => {
    const store = new MemoryStore();
    const first = harness({}, store);
    first.queue.add({ type: 'screen', screenId: 's1' });
    first.answers.push({ kind: 'retry' });
    await first.queue.flush();
    first.queue.add({ type: 'answer', blockId: 'q1', answer: 'b' }); // still pending when the tab died

    const second = harness({ newBatchId: () => 'fresh' }, store);
    expect(second.queue.unacknowledged).to.equal(2);
    await second.queue.flush(true);
    expect(second.sent.map((s) => s.batch)).to.deep.equal([
      { batchId: 'b1', events: [{ type: 'screen', screenId: 's1' }] },
      { batchId: 'fresh', events: [{ type: 'answer', blockId: 'q1', answer: 'b' }] },
    ]);
    expect(store.data.size).to.equal(0);
  });

  it('ignores a corrupt or foreign storage entry', () => {
    const store = new MemoryStore();
    store.setItem('outbox:c1', '{not json');
    expect(harness({}, store).queue.unacknowledged).to.equal(0);
    store.setItem(
      'outbox:c1',
      JSON.stringify({ sealed: [{ batchId: 'x', events: [{ type: 'nope' }] }], pending: [7] }),
    );
    expect(harness({}, store).queue.unacknowledged).to.equal(0);
  });

  it('still delivers when storage throws (full, or disabled in private browsing)', async () => {
    const broken: KeyValueStore = {
      getItem: () => {
        throw new Error('denied');
      },
      setItem: () => {
        throw new Error('quota');
      },
      removeItem: () => {
        throw new Error('denied');
      },
    };
    const h = harness({ storage: broken });
    h.queue.add({ type: 'screen', screenId: 's1' });
    await h.queue.flush();
    expect(h.sent).to.have.length(1);
  });

  it(`splits more than ${MAX_EVENTS_PER_BATCH} events into batches the server accepts`, async () => {
    const h = harness();
    for (let i = 0; i < 250; i++) h.queue.add({ type: 'answer', blockId: `q${i}`, answer: i });
    await h.queue.flush();
    expect(h.sent.map((s) => s.batch.events.length)).to.deep.equal([100, 100, 50]);
    expect(h.sent.map((s) => s.batch.batchId)).to.deep.equal(['b1', 'b2', 'b3']);
  });

  it('sends one batch at a time: a flush during a send joins it and goes round again', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const order: string[] = [];
    const h = harness({
      send: async (batch) => {
        order.push(`start ${batch.batchId}`);
        if (batch.batchId === 'b1') await gate;
        order.push(`end ${batch.batchId}`);
        return { kind: 'ok', response: { completion: {} } };
      },
    });
    h.queue.add({ type: 'screen', screenId: 's1' });
    const a = h.queue.flush();
    h.queue.add({ type: 'screen', screenId: 's2' });
    const b = h.queue.flush();
    release();
    await Promise.all([a, b]);
    expect(order).to.deep.equal(['start b1', 'end b1', 'start b2', 'end b2']);
  });

  it('adds the learner time since the last batch as a time event', async () => {
    let seconds = 7;
    const h = harness({ takeSeconds: () => seconds });
    h.queue.add({ type: 'screen', screenId: 's1' });
    await h.queue.flush();
    seconds = 0;
    h.queue.add({ type: 'screen', screenId: 's2' });
    await h.queue.flush();
    expect(h.sent.map((s) => s.batch.events)).to.deep.equal([
      [
        { type: 'screen', screenId: 's1' },
        { type: 'time', seconds: 7 },
      ],
      [{ type: 'screen', screenId: 's2' }],
    ]);
  });

  it('drops a batch the server refuses for good and reports it, so it cannot block the rest', async () => {
    const rejected: [string, number][] = [];
    const h = harness({ onRejected: (b, status) => rejected.push([b.batchId, status]) });
    h.queue.add({ type: 'answer', blockId: 'q1', answer: 'x' });
    h.answers.push({ kind: 'rejected', status: 400 });
    await h.queue.flush();
    h.queue.add({ type: 'screen', screenId: 's2' });
    await h.queue.flush();
    expect(rejected).to.deep.equal([['b1', 400]]);
    expect(h.sent.map((s) => s.batch.batchId)).to.deep.equal(['b1', 'b2']);
    expect(h.queue.unacknowledged).to.equal(0);
  });

  it('on 401 asks for a fresh run token and resends the same batch', async () => {
    let renewals = 0;
    const h = harness({
      onUnauthorized: async () => {
        renewals++;
        return true;
      },
    });
    h.queue.add({ type: 'screen', screenId: 's1' });
    h.answers.push({ kind: 'unauthorized' });
    await h.queue.flush();
    expect(renewals).to.equal(1);
    expect(h.sent.map((s) => s.batch.batchId)).to.deep.equal(['b1', 'b1']);
    expect(h.queue.unacknowledged).to.equal(0);
  });

  it('renews at most once per batch and flush when the server keeps answering 401', async () => {
    let renewals = 0;
    const h = harness({
      onUnauthorized: async () => {
        renewals++;
        return true;
      },
      send: async () => ({ kind: 'unauthorized' }),
    });
    h.queue.add({ type: 'screen', screenId: 's1' });
    await h.queue.flush();
    expect(renewals).to.equal(1);
    expect(h.queue.unacknowledged).to.equal(1);
  });

  it('keeps the batch when the token cannot be renewed', async () => {
    const h = harness({ onUnauthorized: async () => false });
    h.queue.add({ type: 'screen', screenId: 's1' });
    h.answers.push({ kind: 'unauthorized' });
    await h.queue.flush();
    expect(h.queue.unacknowledged).to.equal(1);
  });

  it('hands each answer of the server to the player and reports the backlog', async () => {
    const backlog: boolean[] = [];
    const h = harness({ onBacklog: (w) => backlog.push(w) });
    h.queue.add({ type: 'answer', blockId: 'q1', answer: 'a' });
    h.answers.push({ kind: 'retry' });
    h.answers.push({
      kind: 'ok',
      response: { completion: { status: 'in_progress' }, feedback: [{ blockId: 'q1', correct: true }] },
    });
    await h.queue.flush();
    await h.queue.flush(true);
    expect(backlog).to.deep.equal([true, false]);
    expect(h.responses).to.deep.equal([
      { completion: { status: 'in_progress' }, feedback: [{ blockId: 'q1', correct: true }] },
    ]);
  });

  it('on page exit fires every batch with keepalive and clears only what is acknowledged', async () => {
    const h = harness();
    h.queue.add({ type: 'answer', blockId: 'q1', answer: 'a' });
    h.answers.push({ kind: 'retry' });
    await h.queue.flush();
    h.queue.add({ type: 'answer', blockId: 'q2', answer: 'b' });
    h.answers.push({ kind: 'ok', response: { completion: {} } });
    h.answers.push({ kind: 'retry' });
    h.queue.flushOnExit();
    await new Promise((r) => setImmediate(r));
    expect(h.sent.slice(1)).to.deep.equal([
      { batch: { batchId: 'b1', events: [{ type: 'answer', blockId: 'q1', answer: 'a' }] }, keepalive: true },
      { batch: { batchId: 'b2', events: [{ type: 'answer', blockId: 'q2', answer: 'b' }] }, keepalive: true },
    ]);
    expect(h.queue.batches.map((b) => b.batchId)).to.deep.equal(['b2']);
    expect(JSON.parse(h.store.getItem('outbox:c1')!).sealed.map((b: Batch) => b.batchId)).to.deep.equal([
      'b2',
    ]);
  });
});

describe('player API client', () => {
  it('maps statuses: 2xx taken, 401 renew, 402/408/429/5xx retried, other 4xx dropped', () => {
    expect(eventOutcome(200, { data: { completion: { status: 'completed' } } })).to.deep.equal({
      kind: 'ok',
      response: { completion: { status: 'completed' } },
    });
    expect(eventOutcome(401, null)).to.deep.equal({ kind: 'unauthorized' });
    for (const s of [402, 408, 429, 500, 502, 503])
      expect(eventOutcome(s, null), String(s)).to.deep.equal({ kind: 'retry' });
    for (const s of [400, 403, 404, 413]) {
      expect(eventOutcome(s, null), String(s)).to.deep.equal({ kind: 'rejected', status: s });
    }
  });

  it('speaks the Player API contract: open, events with the run token, retake', async () => {
    const calls: { url: string; init: FetchInit }[] = [];
    const replies = [
      {
        status: 201,
        body: { data: { runToken: 't1', completion: { id: 'c1' }, course: { id: 'crs', screens: [] } } },
      },
      { status: 200, body: { data: { completion: { status: 'in_progress' } } } },
      { status: 200, body: { data: { completion: { status: 'completed' } } } },
    ];
    const client = new PlayerClient('https://lectern.example/', async (url, init) => {
      calls.push({ url, init });
      const r = replies.shift()!;
      return { status: r.status, json: async () => r.body };
    });
    const run = await client.openRun({
      courseId: 'crs',
      identity: null,
      lang: 'fr',
      anonymousId: 'anon_0123456789abcdef',
    });
    expect(run.runToken).to.equal('t1');
    const outcome = await client.sendEvents(
      'c1',
      't1',
      { batchId: 'b1', events: [{ type: 'time', seconds: 3 }] },
      true,
    );
    expect(outcome).to.deep.equal({ kind: 'ok', response: { completion: { status: 'in_progress' } } });
    await client.retake('c1', 't1');
    expect(calls.map((c) => [c.url, c.init.method])).to.deep.equal([
      ['https://lectern.example/player/v1/runs', 'POST'],
      ['https://lectern.example/player/v1/runs/c1/events', 'POST'],
      ['https://lectern.example/player/v1/runs/c1/retake', 'POST'],
    ]);
    expect(JSON.parse(calls[0].init.body!)).to.deep.equal({
      courseId: 'crs',
      anonymousId: 'anon_0123456789abcdef',
      lang: 'fr',
    });
    expect(calls[0].init.headers.authorization).to.equal(undefined);
    expect(JSON.parse(calls[1].init.body!)).to.deep.equal({
      batchId: 'b1',
      events: [{ type: 'time', seconds: 3 }],
    });
    expect(calls[1].init.headers.authorization).to.equal('Bearer t1');
    expect(calls[1].init.keepalive).to.equal(true);
    expect(calls[2].init.headers.authorization).to.equal('Bearer t1');
  });

  it('sends the signed identity instead of an anonymous id, and surfaces refusals with their code', async () => {
    let body: unknown;
    const client = new PlayerClient('http://x', async (_url, init) => {
      body = JSON.parse(init.body!);
      return { status: 401, json: async () => ({ error: 'unauthorized', message: 'token expired' }) };
    });
    const err = await client
      .openRun({ courseId: 'crs', identity: 'jwt', anonymousId: 'anon_0123456789abcdef' })
      .catch((e: unknown) => e);
    expect(body).to.deep.equal({ courseId: 'crs', identity: 'jwt' });
    expect(err).to.include({ status: 401, code: 'unauthorized', message: 'token expired' });
  });

  it('turns a network failure into a retry, never an exception', async () => {
    const client = new PlayerClient('http://x', async () => {
      throw new TypeError('Failed to fetch');
    });
    expect(await client.sendEvents('c1', 't', { batchId: 'b', events: [] }, false)).to.deep.equal({
      kind: 'retry',
    });
  });
});
