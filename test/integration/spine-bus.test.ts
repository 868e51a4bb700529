import { expect } from 'chai';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { z } from 'zod';
import { testConfig } from '../support/context.js';
import { waitFor } from '../support/http.js';
import { envFor, REPO_ROOT } from '../support/spine.js';
import { createLogger } from '@lectern/log';
import { AppError } from '@lectern/errors';
import { nanos } from '@nats-io/transport-node';
import {
  connectBus,
  notifyJobDone,
  provisionStreams,
  requestJob,
  runConsumer,
  type Bus,
  type ConsumerHandle,
  type ConsumerSpec,
  type HandlerContext,
  PublishError,
} from '@lectern/bus';

const Payload = z.object({ n: z.number() });
type Payload = z.infer<typeof Payload>;
const ACK_WAIT_MS = 1500;
const refusal = async (p: Promise<unknown>): Promise<string> => {
  try {
    await p;
  } catch (err) {
    return (err as Error).message;
  }
  return 'accepted';
};

describe('spine: the bus consumer runner (JetStream)', () => {
  let bus: Bus;
  const log = createLogger({ level: 'silent' });
  const handles: ConsumerHandle[] = [];
  const durables: string[] = [];

  before(async () => {
    const cfg = testConfig();
    bus = await connectBus({ url: cfg.NATS_URL, prefix: cfg.BUS_PREFIX, name: 'bus-test', log });
    await provisionStreams(bus);
  });
  afterEach(async () => {
    await Promise.all(handles.splice(0).map((h) => h.stop()));
  });
  after(async () => {
    for (const d of durables)
      await bus.jsm.consumers.delete(bus.names.stream('JOBS'), d).catch(() => undefined);
    await bus?.close();
  });

  /** A consumer spec on the JOBS stream with its own non-overlapping filter. */
  function testSpec(
    overrides: Partial<ConsumerSpec> = {},
  ): ConsumerSpec & { token: string; subject: string } {
    const token = `t${randomBytes(4).toString('hex')}`;
    const spec = {
      stream: 'JOBS' as const,
      app: `test-${token}`,
      filter: ['jobs', 'test', token, '>'],
      ackWaitMs: ACK_WAIT_MS,
      maxDeliver: 5,
      ...overrides,
    };
    durables.push(bus.names.durable(spec.app));
    return { ...spec, token, subject: bus.names.subject('jobs', 'test', token, 'run') };
  }

  async function start(
    spec: ConsumerSpec,
    handler: (p: Payload, ctx: HandlerContext) => Promise<void>,
    extra: {
      backoffMs?: (n: number) => number;
      onGiveUp?: (p: unknown, e: unknown) => Promise<void>;
      concurrency?: number;
    } = {},
  ) {
    const h = await runConsumer({ bus, spec, schema: Payload, log, handler, ...extra });
    handles.push(h);
    return h;
  }

  async function publishRaw(subject: string, data: string): Promise<number> {
    const ack = await bus.js.publish(subject, data);
    return ack.seq;
  }

  async function consumerState(spec: ConsumerSpec) {
    const ci = await bus.jsm.consumers.info(bus.names.stream(spec.stream), bus.names.durable(spec.app));
    return {
      ackPending: ci.num_ack_pending,
      pending: ci.num_pending,
      redelivered: ci.num_redelivered,
      ackFloor: ci.ack_floor.stream_seq,
      delivered: ci.delivered.stream_seq,
    };
  }

  /** Settled: the message at `seq` was delivered and nothing is pending or waiting for an ack. */
  const settled = (spec: ConsumerSpec, seq: number) => async () => {
    const s = await consumerState(spec);
    return s.ackFloor >= seq && s.ackPending === 0 && s.pending === 0 ? s : null;
  };

  it('a consumer that dies without acking: the message is redelivered to another instance', async function () {
    this.timeout(30_000);
    const spec = testSpec();
    const cfg = testConfig();
    const child: ChildProcess = spawn(
      process.execPath,
      [
        '--import',
        'tsx',
        path.join(REPO_ROOT, 'test/support/bus-consumer-child.ts'),
        spec.app,
        spec.token,
        String(ACK_WAIT_MS),
      ],
      {
        cwd: REPO_ROOT,
        env: envFor(cfg),
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let out = '';
    let err = '';
    child.stdout!.on('data', (d) => (out += d));
    child.stderr!.on('data', (d) => (err += d));
    const exited = new Promise<void>((r) => child.once('exit', () => r()));
    try {
      await waitFor(() => out.includes('ready'), {
        timeoutMs: 15_000,
        what: `the child consumer to start (${err})`,
      });
      await publishRaw(spec.subject, JSON.stringify({ n: 42 }));
      await waitFor(() => out.includes('received'), {
        timeoutMs: 5000,
        what: 'the child to take the message',
      });
      expect(out).to.include('"deliveryCount":1');
    } finally {
      child.kill('SIGKILL');
      await exited;
    }

    const got: { payload: Payload; deliveryCount: number }[] = [];
    await start(spec, async (payload, ctx) => {
      got.push({ payload, deliveryCount: ctx.deliveryCount });
    });
    await waitFor(() => got.length > 0, {
      timeoutMs: ACK_WAIT_MS * 4,
      what: 'redelivery to the second instance',
    });
    expect(got).to.deep.equal([{ payload: { n: 42 }, deliveryCount: 2 }]);
    const s = await waitFor(
      async () => {
        const st = await consumerState(spec);
        return st.ackPending === 0 && st.pending === 0 ? st : null;
      },
      { what: 'the ack' },
    );
    expect(s.redelivered).to.equal(0);
  });

  it("a retryable failure is nak'd with the backoff delay and redelivered", async () => {
    const spec = testSpec();
    const seen: { at: number; deliveryCount: number }[] = [];
    await start(
      spec,
      async (_p, ctx) => {
        seen.push({ at: Date.now(), deliveryCount: ctx.deliveryCount });
        if (ctx.deliveryCount === 1) throw new AppError('unavailable', 'database down');
      },
      { backoffMs: () => 600 },
    );
    const seq = await publishRaw(spec.subject, JSON.stringify({ n: 1 }));
    await waitFor(() => seen.length >= 2, { timeoutMs: 5000, what: 'the redelivery' });
    expect(seen.map((s) => s.deliveryCount)).to.deep.equal([1, 2]);
    const gap = seen[1].at - seen[0].at;
    expect(gap, 'nak delay honoured').to.be.at.least(500);
    expect(gap, 'redelivered by the nak, not by AckWait expiry').to.be.lessThan(ACK_WAIT_MS + 500);
    await waitFor(settled(spec, seq), { what: 'the ack after the retry' });
    expect(seen).to.have.length(2);
  });

  it('an unknown error counts as retryable', async () => {
    const spec = testSpec();
    let calls = 0;
    await start(
      spec,
      async () => {
        calls++;
        if (calls === 1) throw new Error('ECONNRESET');
      },
      { backoffMs: () => 50 },
    );
    const seq = await publishRaw(spec.subject, JSON.stringify({ n: 2 }));
    await waitFor(settled(spec, seq), { what: 'the retry to succeed' });
    expect(calls).to.equal(2);
  });

  it('a non-retryable AppError is terminated, not redelivered', async () => {
    const spec = testSpec();
    let calls = 0;
    const gaveUp: unknown[] = [];
    await start(
      spec,
      async () => {
        calls++;
        throw new AppError('invalid_request', 'this command can never succeed');
      },
      { backoffMs: () => 50, onGiveUp: async (_p, e) => void gaveUp.push(e) },
    );
    const seq = await publishRaw(spec.subject, JSON.stringify({ n: 3 }));
    const s = await waitFor(settled(spec, seq), { what: 'the term' });
    expect(s.redelivered).to.equal(0);
    expect(calls).to.equal(1);
    await waitFor(() => gaveUp.length === 1, { what: 'onGiveUp' });
    expect((gaveUp[0] as AppError).code).to.equal('invalid_request');
  });

  it('a payload failing its schema (poison) is terminated without reaching the handler', async () => {
    const spec = testSpec();
    let calls = 0;
    const gaveUp: unknown[] = [];
    await start(spec, async () => void calls++, { onGiveUp: async (p) => void gaveUp.push(p) });
    const bad = await publishRaw(spec.subject, JSON.stringify({ n: 'not a number' }));
    const notJson = await publishRaw(spec.subject, '{not json');
    const s = await waitFor(settled(spec, Math.max(bad, notJson)), {
      what: 'both poison messages to be terminated',
    });
    expect(s.redelivered).to.equal(0);
    expect(calls).to.equal(0);
    expect(gaveUp).to.deep.include({ n: 'not a number' });
    // The consumer is still healthy after poison.
    const good = await publishRaw(spec.subject, JSON.stringify({ n: 4 }));
    await waitFor(settled(spec, good), { what: 'a good message after poison' });
    expect(calls).to.equal(1);
  });

  it('a retryable failure gives up after maxDeliver deliveries', async () => {
    const spec = testSpec({ maxDeliver: 3 });
    const counts: number[] = [];
    const gaveUp: unknown[] = [];
    await start(
      spec,
      async (_p, ctx) => {
        counts.push(ctx.deliveryCount);
        throw new AppError('unavailable', 'still down');
      },
      { backoffMs: () => 50, onGiveUp: async (_p, e) => void gaveUp.push(e) },
    );
    const seq = await publishRaw(spec.subject, JSON.stringify({ n: 5 }));
    await waitFor(settled(spec, seq), { timeoutMs: 5000, what: 'the final term' });
    expect(counts).to.deep.equal([1, 2, 3]);
    await waitFor(() => gaveUp.length === 1, { what: 'onGiveUp' });
  });

  it('bounded concurrency: never more handlers in flight than asked', async () => {
    const spec = testSpec();
    let inFlight = 0;
    let peak = 0;
    let done = 0;
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const handle = await start(
      spec,
      async () => {
        inFlight++;
        peak = Math.max(peak, inFlight);
        await gate;
        inFlight--;
        done++;
      },
      { concurrency: 2 },
    );
    let last = 0;
    for (let n = 0; n < 6; n++) last = await publishRaw(spec.subject, JSON.stringify({ n }));
    await waitFor(() => handle.inFlight() === 2, { what: 'two handlers running' });
    expect(peak).to.equal(2);
    release();
    await waitFor(settled(spec, last), { what: 'all six acked' });
    expect(done).to.equal(6);
    expect(peak).to.equal(2);
  });

  it('graceful stop waits for the in-flight handler to finish and ack; nothing is redelivered', async () => {
    const spec = testSpec();
    let started = 0;
    let finished = 0;
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const handle = await runConsumer({
      bus,
      spec,
      schema: Payload,
      log,
      handler: async () => {
        started++;
        await gate;
        finished++;
      },
    });
    const seq = await publishRaw(spec.subject, JSON.stringify({ n: 7 }));
    await waitFor(() => started === 1, { what: 'the handler to start' });

    let stopped = false;
    const stopping = handle.stop().then(() => (stopped = true));
    await waitFor(async () => (await consumerState(spec)).ackPending === 1, {
      what: 'the message to be in flight',
    });
    expect(stopped, 'stop() must wait for the in-flight handler').to.equal(false);
    expect(handle.inFlight()).to.equal(1);

    release();
    await stopping;
    expect(finished).to.equal(1);
    const s = await waitFor(settled(spec, seq), { what: 'the ack sent before stop() resolved' });
    expect(s.redelivered).to.equal(0);

    // A new instance of the same consumer finds nothing to do.
    let again = 0;
    await start(spec, async () => void again++);
    const next = await publishRaw(spec.subject, JSON.stringify({ n: 8 }));
    await waitFor(settled(spec, next), { what: 'the next message' });
    expect(again, 'only the new message, not a redelivery of the old one').to.equal(1);
  });

  it('provisioning is idempotent and sets AckWait and MaxDeliver explicitly on the durable', async () => {
    await provisionStreams(bus);
    await provisionStreams(bus);
    for (const key of ['JOBS', 'EVENTS'] as const) {
      const si = await bus.jsm.streams.info(bus.names.stream(key));
      expect(si.config.subjects).to.deep.equal([bus.names.subject(key.toLowerCase(), '>')]);
      expect(si.config.duplicate_window, `${key} deduplicates by Nats-Msg-Id`).to.be.greaterThan(0);
    }
    const spec = testSpec({ maxDeliver: 4, ackWaitMs: 2500 });
    await start(spec, async () => undefined);
    await start(spec, async () => undefined);
    const ci = await bus.jsm.consumers.info(bus.names.stream('JOBS'), bus.names.durable(spec.app));
    expect(ci.config.max_deliver).to.equal(4);
    expect(ci.config.ack_wait).to.equal(nanos(2500));
    expect(ci.config.ack_policy).to.equal('explicit');
    expect(ci.config.filter_subject).to.equal(bus.names.subject('jobs', 'test', spec.token, '>'));
  });

  it('provisioning leaves a matching stream alone and updates one whose settings differ, idempotently', async () => {
    const jobs = bus.names.stream('JOBS');
    await provisionStreams(bus);
    const wanted = (await bus.jsm.streams.info(jobs)).config;
    expect(wanted.num_replicas, 'BUS_REPLICAS defaults to 1').to.equal(1);
    // Another limit on the server, as an older version or an operator's hand would leave it.
    await bus.jsm.streams.update(jobs, { ...wanted, max_age: nanos(3_600_000) });
    expect((await bus.jsm.streams.info(jobs)).config.max_age).to.equal(nanos(3_600_000));

    const updates: string[] = [];
    const streams = bus.jsm.streams;
    const update = streams.update.bind(streams);
    streams.update = (name, cfg) => {
      updates.push(name);
      return update(name, cfg);
    };
    try {
      await provisionStreams(bus);
      expect((await bus.jsm.streams.info(jobs)).config.max_age, 'the differing limit restored').to.equal(
        wanted.max_age,
      );
      expect(updates, 'only the stream that differed was updated').to.deep.equal([jobs]);
      await provisionStreams(bus, { replicas: 1 });
      expect(updates, 'the same settings again change nothing').to.deep.equal([jobs]);
    } finally {
      streams.update = update;
    }
  });

  it('BUS_REPLICAS above what the server can place is refused with a message naming the setting', async () => {
    const cfg = testConfig();
    const prefix = `${cfg.BUS_PREFIX}r${randomBytes(3).toString('hex')}`;
    const other = await connectBus({ url: cfg.NATS_URL, prefix, name: 'replicas-test', log });
    try {
      // A new deployment: nothing is created.
      const created = await refusal(provisionStreams(other, { replicas: 3 }));
      expect(created).to.match(/^BUS_REPLICAS=3: the nats-server at this NATS_URL is not part of a cluster/);
      expect(created).to.include('Set BUS_REPLICAS=1 for a single server');
      const names: string[] = [];
      for await (const si of other.jsm.streams.list()) names.push(si.config.name);
      expect(names).not.to.include(other.names.stream('JOBS'));
      // An existing deployment raising the setting (which this server would accept and then not keep): refused the
      // same way, the stream untouched.
      await provisionStreams(other, { replicas: 1 });
      const updated = await refusal(provisionStreams(other, { replicas: 3 }));
      expect(updated).to.match(/^BUS_REPLICAS=3: /);
      expect((await other.jsm.streams.info(other.names.stream('JOBS'))).config.num_replicas).to.equal(1);
    } finally {
      for (const key of ['JOBS', 'EVENTS'] as const)
        await other.jsm.streams.delete(other.names.stream(key)).catch(() => undefined);
      await other.close();
    }
  });

  it('provisioning deletes the retired DELIVERIES stream an earlier version left behind', async () => {
    const retired = `${bus.names.prefix}_DELIVERIES`;
    await bus.jsm.streams.add({ name: retired, subjects: [bus.names.subject('deliveries', '>')] });
    await provisionStreams(bus);
    const names: string[] = [];
    for await (const si of bus.jsm.streams.list()) names.push(si.config.name);
    expect(names).to.include.members([bus.names.stream('JOBS'), bus.names.stream('EVENTS')]);
    expect(names).not.to.include(retired);
    // Nothing to delete the next time: still fine.
    await provisionStreams(bus);
  });

  it('request–reply for synchronous commands: done notice → true; no worker → false at the deadline; a repeated job id runs once', async () => {
    const spec = testSpec();
    const runs: string[] = [];
    const handle = await runConsumer({
      bus,
      spec,
      schema: z.object({ jobId: z.string() }),
      log,
      handler: async ({ jobId }) => {
        runs.push(jobId);
        notifyJobDone(bus, jobId);
      },
    });
    handles.push(handle);
    const jobId = `job_${randomBytes(6).toString('hex')}`;
    expect(await requestJob(bus, spec.subject, jobId, { jobId }, 5000)).to.equal(true);
    expect(runs).to.deep.equal([jobId]);
    // Same job id: JetStream drops the duplicate publish, so no worker runs and the caller times out
    // (it then reads the job row, which is the truth).
    expect(await requestJob(bus, spec.subject, jobId, { jobId }, 400)).to.equal(false);
    expect(runs).to.deep.equal([jobId]);

    const idle = testSpec();
    const started = Date.now();
    expect(
      await requestJob(bus, idle.subject, `job_${randomBytes(6).toString('hex')}`, { jobId: 'x' }, 300),
    ).to.equal(false);
    expect(Date.now() - started).to.be.within(250, 2000);
  });
});

describe('spine: JetStream publishes (the bus publisher)', () => {
  let bus: Bus;
  const log = createLogger({ level: 'silent' });
  const streams: string[] = [];

  before(async () => {
    const cfg = testConfig();
    bus = await connectBus({ url: cfg.NATS_URL, prefix: cfg.BUS_PREFIX, name: 'publish-test', log });
  });
  after(async () => {
    for (const s of streams) await bus.jsm.streams.delete(s).catch(() => undefined);
    await bus?.close();
  });

  /** A stream of its own on `<name>.>`, with any extra limits. */
  async function stream(extra: Record<string, unknown> = {}): Promise<string> {
    const name = `${bus.names.prefix}_PUB_${randomBytes(4).toString('hex')}`;
    await bus.jsm.streams.add({ name, subjects: [`${name}.>`], duplicate_window: nanos(60_000), ...extra });
    streams.push(name);
    return name;
  }

  const reasonOf = async (p: Promise<unknown>) => {
    const err = await p.then(
      () => null,
      (e: unknown) => e,
    );
    expect(err, 'the publish should have failed').to.be.instanceOf(PublishError);
    return (err as PublishError).reason;
  };

  it('resolves with the stream and sequence once stored; a repeated message id is acknowledged as a duplicate and stored once', async () => {
    const name = await stream();
    const first = await bus.publish(`${name}.a`, { n: 1 }, { msgId: 'm1' });
    expect(first).to.deep.equal({ stream: name, seq: 1, duplicate: false });
    const again = await bus.publish(`${name}.a`, { n: 1 }, { msgId: 'm1' });
    expect(again).to.deep.equal({ stream: name, seq: 1, duplicate: true });
    const text = await bus.publishJson(`${name}.b`, '{"n":2}', { msgId: 'm2' });
    expect(text).to.deep.equal({ stream: name, seq: 2, duplicate: false });
    const info = await bus.jsm.streams.info(name);
    expect(info.state.messages).to.equal(2);
    const stored = await bus.jsm.streams.getMessage(name, { seq: 2 });
    expect(new TextDecoder().decode(stored?.data)).to.equal('{"n":2}');
  });

  it('many publishes in flight at once are each acknowledged with their own sequence', async () => {
    const name = await stream();
    const acks = await Promise.all(
      Array.from({ length: 500 }, (_, i) => bus.publish(`${name}.a`, { i }, { msgId: `m${i}` })),
    );
    expect(new Set(acks.map((a) => a.seq)).size).to.equal(500);
    expect(acks.every((a) => a.stream === name && !a.duplicate)).to.equal(true);
    expect((await bus.jsm.streams.info(name)).state.messages).to.equal(500);
  });

  it('fails as no_stream when no stream takes the subject', async () => {
    expect(
      await reasonOf(bus.publish(`${bus.names.prefix}.nostream.${randomBytes(4).toString('hex')}`, {})),
    ).to.equal('no_stream');
  });

  it('fails as refused when the client refuses the subject before sending', async () => {
    expect(await reasonOf(bus.publish('', {}))).to.equal('refused');
  });

  it('fails as refused when JetStream answers with an error (a full stream that discards new messages)', async () => {
    const name = await stream({ max_msgs: 1, discard: 'new' });
    await bus.publish(`${name}.a`, { n: 1 });
    expect(await reasonOf(bus.publish(`${name}.a`, { n: 2 }))).to.equal('refused');
    expect((await bus.jsm.streams.info(name)).state.messages).to.equal(1);
  });

  it('fails as timeout when nobody acknowledges in time (a core subscriber that never answers)', async () => {
    const subject = `${bus.names.prefix}.silent.${randomBytes(4).toString('hex')}`;
    const sub = bus.nc.subscribe(subject);
    try {
      const started = Date.now();
      expect(await reasonOf(bus.publish(subject, {}, { timeoutMs: 300 }))).to.equal('timeout');
      expect(Date.now() - started).to.be.within(250, 2000);
    } finally {
      sub.unsubscribe();
    }
  });

  it('fails as closed when the connection closes before the acknowledgement, and at once after', async () => {
    const cfg = testConfig();
    const other = await connectBus({ url: cfg.NATS_URL, prefix: cfg.BUS_PREFIX, name: 'publish-close', log });
    const subject = `${bus.names.prefix}.silent.${randomBytes(4).toString('hex')}`;
    const sub = bus.nc.subscribe(subject);
    // The silent subscriber must be known to the server before the publish, or the publish meets no responder.
    await bus.nc.flush();
    try {
      const waiting = reasonOf(other.publish(subject, {}, { timeoutMs: 30_000 }));
      await bus.nc.flush();
      await other.nc.close();
      expect(await waiting).to.equal('closed');
      expect(await reasonOf(other.publish(subject, {}))).to.equal('closed');
    } finally {
      sub.unsubscribe();
    }
  });
});
