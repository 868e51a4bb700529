/**
 * A worker's own small HTTP server (node:http, no framework): /healthz (the process is alive), /readyz (its
 * dependencies answer; the same checks as the API's) and /metrics (Prometheus; Bearer METRICS_TOKEN when set).
 * Probes and scrapes only: it serves no API.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { bearerMatches, type Metrics } from '@lectern/metrics';
import type { Logger } from '@lectern/log';
import { checkReadiness, readinessBody, type ReadinessDeps } from './readiness.js';

/** /readyz checks every dependency given (the object store only when the worker holds one). */
export interface WorkerHttpDeps extends ReadinessDeps {
  log: Logger;
  /** Absent: /metrics answers 404. */
  metrics?: Pick<Metrics, 'render'>;
}

export interface WorkerHttpOptions {
  /** 0 picks a free port (tests); whether to start at all (WORKER_HTTP_PORT=0) is the caller's decision. */
  port: number;
  /** Listen address (HOST). Default 0.0.0.0. */
  host?: string;
  /** METRICS_TOKEN: when set, /metrics requires `Authorization: Bearer <token>`. */
  metricsToken?: string;
}

export interface WorkerHttp {
  server: http.Server;
  url: string;
  close(): Promise<void>;
}

function send(
  res: http.ServerResponse,
  status: number,
  body: unknown,
  headers: http.OutgoingHttpHeaders = {},
) {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': Buffer.byteLength(text),
    'Cache-Control': 'no-store',
    ...headers,
  });
  res.end(text);
}

export async function startWorkerHttp(deps: WorkerHttpDeps, opts: WorkerHttpOptions): Promise<WorkerHttp> {
  const { log, metrics } = deps;
  const token = opts.metricsToken;

  const handle = async (req: http.IncomingMessage, res: http.ServerResponse): Promise<void> => {
    const path = (req.url ?? '/').split('?')[0];
    if (path !== '/healthz' && path !== '/readyz' && path !== '/metrics') {
      send(res, 404, { error: 'not_found', message: `No route for ${req.method} ${path}` });
      return;
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      send(
        res,
        405,
        {
          error: 'method_not_allowed',
          message: `${req.method} is not allowed on ${path}; allowed: GET, HEAD`,
        },
        { Allow: 'GET, HEAD' },
      );
      return;
    }
    if (path === '/healthz') {
      send(res, 200, { data: { status: 'ok' } });
    } else if (path === '/readyz') {
      const { status, body } = readinessBody(await checkReadiness(deps));
      send(res, status, body);
    } else if (token && !bearerMatches(req.headers.authorization, token)) {
      send(
        res,
        401,
        { error: 'unauthorized', message: 'Send Authorization: Bearer <METRICS_TOKEN>' },
        { 'WWW-Authenticate': 'Bearer' },
      );
    } else if (!metrics) {
      send(res, 404, { error: 'not_found', message: 'Metrics are not collected in this process' });
    } else {
      const { contentType, body } = await metrics.render();
      res.writeHead(200, {
        'Content-Type': contentType,
        'Content-Length': Buffer.byteLength(body),
        'Cache-Control': 'no-store',
      });
      res.end(body);
    }
  };

  const server = http.createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      log.error({ err, path: req.url }, 'worker http request failed');
      if (!res.headersSent) send(res, 500, { error: 'internal_error', message: 'Internal error' });
      else res.destroy();
    });
  });
  server.keepAliveTimeout = 65_000;
  server.requestTimeout = 30_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, opts.host ?? '0.0.0.0', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const addr = server.address() as AddressInfo;
  const host = addr.address === '0.0.0.0' || addr.address === '::' ? '127.0.0.1' : addr.address;
  const url = `http://${host.includes(':') ? `[${host}]` : host}:${addr.port}`;
  log.info({ url }, 'worker http listening (/healthz, /readyz, /metrics)');
  return {
    server,
    url,
    async close() {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      await closed;
    },
  };
}
