import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Receipt {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  /** The raw body exactly as received. */
  body: string;
  at: number;
}

/** What the receiver answers to the n-th request (0-based): a response, or 'hang' to never answer. */
export type Reply = { status: number; headers?: Record<string, string>; body?: string } | 'hang';

/**
 * A real HTTP server on loopback that records every request, for webhook tests. `reply` decides each answer;
 * the default is 200 "ok".
 */
export class Receiver {
  readonly receipts: Receipt[] = [];
  reply: (receipt: Receipt, n: number) => Reply = () => ({ status: 200, body: 'ok' });
  private server: http.Server;
  port = 0;

  constructor(reply?: (receipt: Receipt, n: number) => Reply) {
    if (reply) this.reply = reply;
    this.server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const receipt: Receipt = {
          method: req.method ?? '',
          path: req.url ?? '',
          headers: req.headers,
          body: Buffer.concat(chunks).toString('utf8'),
          at: Date.now(),
        };
        const n = this.receipts.length;
        this.receipts.push(receipt);
        const r = this.reply(receipt, n);
        if (r === 'hang') return;
        res.writeHead(r.status, { 'content-type': 'text/plain', ...(r.headers ?? {}) });
        res.end(r.body ?? '');
      });
    });
  }

  async start(): Promise<this> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', () => resolve()));
    this.port = (this.server.address() as AddressInfo).port;
    return this;
  }

  url(path = '/hook'): string {
    return `http://127.0.0.1:${this.port}${path}`;
  }

  /** Receipts carrying this X-Service-Delivery (event id). */
  forEvent(eventId: string): Receipt[] {
    return this.receipts.filter((r) => r.headers['x-service-delivery'] === eventId);
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
