import http from 'node:http';
import type { Duplex } from 'node:stream';
import type { AddressInfo } from 'node:net';
import { buildApp } from './app.js';
import { MAX_URL_LENGTH, uriTooLongMessage } from './http/uri-limit.js';
import { NO_RELAY, startRelay, type Relay } from '@lectern/events';
import { relayFanOut } from '@lectern/webhooks';
import type { ApiDeps } from './deps.js';

export interface ApiServer {
  server: http.Server;
  relay: Relay;
  url: string;
  close(): Promise<void>;
}

/**
 * Requests Node's HTTP parser refuses before Koa sees them (a raw newline inside a header, a
 * malformed request line) still get a JSON error body. A broken Authorization header is the
 * spec's 401 (a stray newline in the key); anything else is a 400.
 */
function answerClientError(err: NodeJS.ErrnoException & { rawPacket?: Buffer }, socket: Duplex): void {
  if (err.code === 'ECONNRESET' || !socket.writable) {
    socket.destroy();
    return;
  }
  const raw = err.rawPacket?.toString('latin1') ?? '';
  if (err.code === 'HPE_HEADER_OVERFLOW' && requestLineTooLong(raw)) {
    // Answered before any header is looked at: a huge URL is not an authentication problem.
    const body = JSON.stringify({ error: 'uri_too_long', message: uriTooLongMessage() });
    socket.end(
      `HTTP/1.1 414 URI Too Long\r\nContent-Type: application/json; charset=utf-8\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
    return;
  }
  const auth = /\r?\nauthorization:/i.test(raw);
  const status = auth ? 401 : 400;
  const body = JSON.stringify(
    auth
      ? { error: 'unauthorized', message: 'Malformed Authorization header; send Authorization: Bearer <key>' }
      : {
          error: 'invalid_request',
          message: 'Malformed HTTP request',
          issues: [{ code: 'malformed', path: [], message: err.code ?? 'bad request' }],
        },
  );
  socket.end(
    `HTTP/1.1 ${status} ${auth ? 'Unauthorized' : 'Bad Request'}\r\nContent-Type: application/json; charset=utf-8\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}

/**
 * Whether the bytes the parser gave up on start with (or are inside) a request line longer than we take. Node
 * refuses a request whose request line and headers pass its header limit (16 KiB) as one overflow; the URL is the
 * culprit when the first line of what it read is not a header field and is itself over the URL limit.
 */
function requestLineTooLong(raw: string): boolean {
  const end = raw.indexOf('\n');
  const first = end === -1 ? raw : raw.slice(0, end);
  if (/^[!#$%&'*+.^_`|~0-9A-Za-z-]+:/.test(first)) return false;
  return first.length > MAX_URL_LENGTH;
}

/**
 * Listens and runs the outbox relay (safe in every replica: rows are claimed with SKIP LOCKED), unless
 * API_OUTBOX_RELAY=false says another process runs it.
 */
export async function startApiServer(
  deps: ApiDeps,
  opts: { port?: number; host?: string; relay?: boolean } = {},
): Promise<ApiServer> {
  const relay =
    opts.relay === false || deps.cfg.API_OUTBOX_RELAY === false
      ? NO_RELAY
      : startRelay({ orm: deps.orm, bus: deps.bus, log: deps.log, fanOut: relayFanOut(deps.bus) });
  const { app } = buildApp({ ...deps, relay });
  const server = http.createServer(app.callback());
  server.on('clientError', (err: NodeJS.ErrnoException & { rawPacket?: Buffer }, socket) =>
    answerClientError(err, socket),
  );
  server.keepAliveTimeout = 65_000;
  server.requestTimeout = 120_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? deps.cfg.PORT, opts.host ?? deps.cfg.HOST, () => resolve());
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
