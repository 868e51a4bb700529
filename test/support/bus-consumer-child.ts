/**
 * A consumer process that takes one message and never finishes it: the parent test kills it
 * (SIGKILL, no ack, no drain) to prove JetStream redelivers to another instance after AckWait.
 * Args: APP FILTER_TOKEN ACK_WAIT_MS. Environment: the test run's configuration.
 */
import { z } from 'zod';
import { BusEnv, parseEnv } from '@lectern/config';
import { createLogger } from '@lectern/log';
import { connectBus, runConsumer } from '@lectern/bus';

const [app, token, ackWait] = process.argv.slice(2);
const cfg = parseEnv([BusEnv], process.env);
const log = createLogger({ level: 'silent' });
const bus = await connectBus({ url: cfg.NATS_URL, prefix: cfg.BUS_PREFIX, name: 'dying-consumer', log });
await runConsumer({
  bus,
  log,
  spec: {
    stream: 'JOBS',
    app,
    filter: ['jobs', 'test', token, '>'],
    ackWaitMs: Number(ackWait),
    maxDeliver: 5,
  },
  schema: z.object({ n: z.number() }),
  concurrency: 1,
  handler: async (payload, ctx) => {
    process.stdout.write(`received ${JSON.stringify({ payload, deliveryCount: ctx.deliveryCount })}\n`);
    await new Promise(() => undefined);
  },
});
process.stdout.write('ready\n');
