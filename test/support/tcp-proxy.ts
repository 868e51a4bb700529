import net from 'node:net';
import type { AddressInfo } from 'node:net';

/**
 * A loopback TCP proxy in front of a real service, for outage tests: `cut()` drops every
 * connection and refuses new ones, `restore()` lets traffic through again.
 */
export class TcpProxy {
  private server: net.Server;
  private sockets = new Set<net.Socket>();
  private up = true;
  port = 0;

  constructor(private target: { host: string; port: number }) {
    this.server = net.createServer((client) => this.onClient(client));
  }

  async start(): Promise<this> {
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', () => r()));
    this.port = (this.server.address() as AddressInfo).port;
    return this;
  }

  private onClient(client: net.Socket) {
    if (!this.up) {
      client.destroy();
      return;
    }
    const upstream = net.connect(this.target.port, this.target.host);
    this.sockets.add(client);
    this.sockets.add(upstream);
    const drop = () => {
      client.destroy();
      upstream.destroy();
      this.sockets.delete(client);
      this.sockets.delete(upstream);
    };
    client.on('error', drop).on('close', drop);
    upstream.on('error', drop).on('close', drop);
    client.pipe(upstream);
    upstream.pipe(client);
  }

  cut(): void {
    this.up = false;
    for (const s of this.sockets) s.destroy();
    this.sockets.clear();
  }

  restore(): void {
    this.up = true;
  }

  async close(): Promise<void> {
    this.cut();
    await new Promise<void>((r) => this.server.close(() => r()));
  }
}
