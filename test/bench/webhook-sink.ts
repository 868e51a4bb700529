/**
 * The webhook bench's loopback receivers: a server that answers 200 at once (or never, for `hang`) and notes when
 * it first saw each delivery (`X-Service-Delivery`, or the bare loop's `X-Bench-Id`), in ms since the epoch to the
 * microsecond, so a receipt in another process compares with a commit in the bench's.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import type { BenchChild } from './bench-child.js';

/** Now, in ms since the epoch with sub-millisecond precision: one clock for every process on the machine. */
export const epochNow = (): number => performance.timeOrigin + performance.now();

export class Sink {
  readonly seen = new Map<string, number>();
  private server: http.Server;
  port = 0;
  constructor(hang = false) {
    this.server = http.createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        const id = String(req.headers['x-service-delivery'] ?? req.headers['x-bench-id'] ?? '');
        if (!this.seen.has(id)) this.seen.set(id, epochNow());
        if (!hang) res.end('ok');
      });
    });
    this.server.keepAliveTimeout = 30_000;
  }
  async start(): Promise<this> {
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', () => r()));
    this.port = (this.server.address() as AddressInfo).port;
    return this;
  }
  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((r) => this.server.close(() => r()));
  }
}

/** A receiver as the bench uses it, wherever it runs. */
export interface Receiver {
  port: number;
  /** Distinct deliveries seen so far. */
  count(): Promise<number>;
  /** Receipt time of each delivery seen (ms since the epoch). */
  times(): Promise<Map<string, number>>;
  close(): Promise<void>;
}

/** A receiver in the bench's own process. */
export async function localReceiver(hang: boolean): Promise<Receiver> {
  const sink = await new Sink(hang).start();
  return {
    port: sink.port,
    count: async () => sink.seen.size,
    times: async () => new Map(sink.seen),
    close: () => sink.close(),
  };
}

/** A receiver in the receiver child (webhook-receiver-child.ts). */
export async function childReceiver(child: BenchChild<unknown>, hang: boolean): Promise<Receiver> {
  const port = await child.call<number>('open', { hang });
  return {
    port,
    count: () => child.call<number>('count', { port }),
    times: async () => new Map(await child.call<[string, number][]>('times', { port })),
    close: () => child.call<void>('close', { port }),
  };
}
