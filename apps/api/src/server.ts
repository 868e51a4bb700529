import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { buildApp } from './app.js';
import { startRelay, type Relay } from '../../../libs/events/src/index.js';
import type { Runtime } from '../../../libs/runtime/src/index.js';

export interface ApiServer {
  server: http.Server;
  relay: Relay;
  url: string;
  close(): Promise<void>;
}

/** Listens and runs the outbox relay (safe in every replica: rows are claimed with SKIP LOCKED). */
export async function startApiServer(
  rt: Runtime,
  opts: { port?: number; host?: string; relay?: boolean } = {},
): Promise<ApiServer> {
  const relay =
    opts.relay === false
      ? { kick() {}, drainOnce: async () => 0, stop: async () => {} }
      : startRelay({ orm: rt.orm, bus: rt.bus, log: rt.log });
  const { app } = buildApp({ rt, relay });
  const server = http.createServer(app.callback());
  server.keepAliveTimeout = 65_000;
  server.requestTimeout = 120_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? rt.cfg.PORT, opts.host ?? rt.cfg.HOST, () => resolve());
  });
  const addr = server.address() as AddressInfo;
  const host = addr.address === '0.0.0.0' || addr.address === '::' ? '127.0.0.1' : addr.address;
  return {
    server,
    relay,
    url: `http://${host}:${addr.port}`,
    async close() {
      // Stop accepting, let in-flight requests finish, drop idle keep-alive sockets.
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      await closed;
      await relay.stop();
    },
  };
}
