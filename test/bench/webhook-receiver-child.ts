/**
 * The webhook bench's receivers in a process of their own (the bench-child protocol of bench-child.ts): a
 * subscriber's server is never in the API's process, and in the bench's own process it shared one thread with the
 * producer and the relay, whose work then held up every receipt. Calls: `open` (a receiver on a port of its own;
 * `hang`: it never answers) → its port; `count` → how many distinct deliveries it has seen; `times` → each
 * delivery's receipt time (ms since the epoch, to the microsecond: comparable with the bench process's clock);
 * `close`.
 */
import { benchChildEnv, serveBench } from './bench-child.js';
import { Sink } from './webhook-sink.js';

benchChildEnv('webhook-receiver-child');
const sinks = new Map<number, Sink>();
serveBench(
  async () => {
    await Promise.all([...sinks.values()].map((s) => s.close()));
  },
  {},
  {
    open: async ({ hang }: { hang: boolean }) => {
      const sink = await new Sink(hang).start();
      sinks.set(sink.port, sink);
      return sink.port;
    },
    count: ({ port }: { port: number }) => sinks.get(port)!.seen.size,
    times: ({ port }: { port: number }) => [...sinks.get(port)!.seen],
    close: async ({ port }: { port: number }) => {
      await sinks.get(port)?.close();
      sinks.delete(port);
    },
  },
);
