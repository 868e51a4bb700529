/**
 * One delivery attempt over node:http/https.
 *
 * - The URL is checked and its host resolved first (`checkUrlResolved`); the socket then connects only to the
 *   address that was checked, through a pinned `lookup`, so there is no DNS-rebinding window. Host header and TLS
 *   SNI stay the original host name, and certificates are verified against it.
 * - One deadline (default 5000 ms) covers DNS, connect, TLS, request, response headers and body.
 * - Redirects are never followed: a 3xx is a failure.
 * - At most the first 2048 bytes of the response body are kept; past that the socket is destroyed.
 * - Never throws: every problem becomes `error` with outcome 'retry'.
 */
import http from 'node:http';
import https from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import { performance } from 'node:perf_hooks';
import { checkUrlResolved, type HostResolver } from '@lectern/outbound';

export const DEFAULT_TIMEOUT_MS = 5000;
export const RESPONSE_BODY_LIMIT = 2048;

export interface DeliverOptions {
  url: string;
  /** The raw JSON body; signatures in `headers` must have been computed over exactly these bytes. */
  body: string | Buffer;
  /** Usually `signatureHeaders(...)`. Content-Length and Host are set here and override any given. */
  headers: Record<string, string>;
  /** Deadline for the whole exchange. Default 5000. */
  timeoutMs?: number;
  /** Skip the SSRF address/name policy (ALLOW_PRIVATE_NETWORKS=true). */
  allowPrivate: boolean;
  /** DNS resolver override (default: dns.promises.lookup with all: true). */
  lookup?: HostResolver;
  /** Reuse connections through a per-origin keep-alive agent. Default true. */
  keepAlive?: boolean;
}

export type DeliveryOutcome = 'delivered' | 'retry';

export interface DeliveryResult {
  /** HTTP status when a response arrived (even if the exchange later failed), else null. */
  statusCode: number | null;
  /**
   * Null only when delivered. Otherwise e.g. 'HTTP 500', 'HTTP 302 redirect not followed', 'HTTP 410',
   * 'timeout after 5000 ms', 'refused: private address 127.0.0.1', 'ECONNREFUSED'.
   */
  error: string | null;
  durationMs: number;
  /** First RESPONSE_BODY_LIMIT bytes of the response body, decoded as UTF-8 ('' when none). */
  responseBody: string;
  /** Seconds from Retry-After on a 429 or 503 response, else null. */
  retryAfterSec: number | null;
  /** 'delivered' for 2xx; 'retry' for every failure, a 410 included (SPEC: any non-2xx is retried). */
  outcome: DeliveryOutcome;
}

/**
 * Parses a Retry-After value: delay-seconds or an HTTP-date. Returns whole seconds from `nowMs` (>= 0), or null
 * when absent or unparseable.
 */
export function parseRetryAfter(
  value: string | string[] | undefined,
  nowMs: number = Date.now(),
): number | null {
  const v = (Array.isArray(value) ? value[0] : value)?.trim();
  if (!v) return null;
  if (/^[0-9]+$/.test(v)) {
    const n = Number(v);
    return Number.isSafeInteger(n) ? n : null;
  }
  const at = Date.parse(v);
  if (Number.isNaN(at)) return null;
  return Math.max(0, Math.ceil((at - nowMs) / 1000));
}

// ---------------------------------------------------------------------------------------------------------------
// Keep-alive agents, one per (origin, pinned address), bounded.
// ---------------------------------------------------------------------------------------------------------------

const MAX_AGENTS = 256;
/**
 * Connections per origin (and so requests at once to one endpoint from one process). The webhook worker admits
 * no more than this many attempts per endpoint at a time, so a request never waits here with its deadline running.
 */
export const SOCKETS_PER_ORIGIN = 16;
const AGENT_OPTIONS = {
  keepAlive: true,
  maxSockets: SOCKETS_PER_ORIGIN,
  maxFreeSockets: SOCKETS_PER_ORIGIN,
  /** Idle keep-alive sockets are closed after this long (Node also honours a shorter server Keep-Alive hint). */
  timeout: 15_000,
  scheduling: 'lifo' as const,
};
const agents = new Map<string, http.Agent>();

/**
 * The pool is keyed by origin AND pinned address: a pooled socket is connected to the address that was checked
 * when it was opened, and a later resolution to another address gets its own pool. Least-recently-used pools are
 * dropped past MAX_AGENTS; their idle sockets are unref'd and close on the idle timeout, in-flight ones finish.
 */
function agentFor(protocol: 'http:' | 'https:', origin: string, address: string): http.Agent {
  const key = `${origin}|${address}`;
  const existing = agents.get(key);
  if (existing) {
    agents.delete(key);
    agents.set(key, existing);
    return existing;
  }
  const agent = protocol === 'https:' ? new https.Agent(AGENT_OPTIONS) : new http.Agent(AGENT_OPTIONS);
  agents.set(key, agent);
  if (agents.size > MAX_AGENTS) {
    const oldest = agents.keys().next().value;
    if (oldest !== undefined) agents.delete(oldest);
  }
  return agent;
}

/** Destroys every pooled connection (graceful shutdown, tests). */
export function closeDeliveryAgents(): void {
  for (const agent of agents.values()) agent.destroy();
  agents.clear();
}

// ---------------------------------------------------------------------------------------------------------------

function pinnedLookup(address: string, family: 4 | 6): LookupFunction {
  return (_hostname, options, callback) => {
    if (options.all) callback(null, [{ address, family }]);
    else callback(null, address, family);
  };
}

function errorText(err: unknown): string {
  if (err && typeof err === 'object') {
    const code = (err as NodeJS.ErrnoException).code;
    if (typeof code === 'string' && code !== '') return code;
    const message = (err as Error).message;
    if (typeof message === 'string' && message !== '') return message;
  }
  return String(err);
}

function outgoingHeaders(given: Record<string, string>, length: number): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(given)) {
    const lower = name.toLowerCase();
    if (
      lower === 'content-length' ||
      lower === 'host' ||
      lower === 'transfer-encoding' ||
      lower === 'connection'
    ) {
      continue;
    }
    out[name] = value;
  }
  out['Content-Length'] = String(length);
  return out;
}

/** Performs one attempt. Never throws or rejects. */
export function deliverOnce(opts: DeliverOptions): Promise<DeliveryResult> {
  const started = performance.now();
  const timeoutMs =
    typeof opts.timeoutMs === 'number' && Number.isFinite(opts.timeoutMs) && opts.timeoutMs > 0
      ? opts.timeoutMs
      : DEFAULT_TIMEOUT_MS;

  return new Promise<DeliveryResult>((resolve) => {
    let settled = false;
    let req: http.ClientRequest | undefined;
    let statusCode: number | null = null;
    let retryAfterSec: number | null = null;
    const decoder = new TextDecoder('utf-8');
    let responseBody = '';
    // The single deadline for DNS + connect + TLS + request + response + body.
    const timer = setTimeout(() => {
      finish('retry', `timeout after ${timeoutMs} ms`);
      req?.destroy();
    }, timeoutMs);

    const finish = (outcome: DeliveryOutcome, error: string | null): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve({
        statusCode,
        error,
        durationMs: Math.round(performance.now() - started),
        responseBody,
        retryAfterSec,
        outcome,
      });
    };

    const start = async (): Promise<void> => {
      const target = await checkUrlResolved(opts.url, {
        allowPrivate: opts.allowPrivate,
        lookup: opts.lookup,
      });
      if (settled) return;
      if (!target.ok) {
        finish('retry', `refused: ${target.reason}`);
        return;
      }
      const { url, hostname, address, family } = target;
      const protocol = url.protocol === 'https:' ? 'https:' : 'http:';
      const body = typeof opts.body === 'string' ? Buffer.from(opts.body, 'utf8') : opts.body;
      const requestOptions: https.RequestOptions = {
        protocol,
        hostname,
        port: url.port === '' ? undefined : Number(url.port),
        path: `${url.pathname}${url.search}`,
        method: 'POST',
        headers: outgoingHeaders(opts.headers, body.length),
        lookup: pinnedLookup(address, family),
        agent: opts.keepAlive === false ? false : agentFor(protocol, url.origin, address),
      };
      // SNI must be the host name (never an IP literal); certificate checks use the same name.
      if (protocol === 'https:' && isIP(hostname) === 0) requestOptions.servername = hostname;

      const request = (protocol === 'https:' ? https : http).request(requestOptions);
      req = request;
      request.on('error', (err) => finish('retry', errorText(err)));
      request.on('response', (res) => {
        statusCode = res.statusCode ?? null;
        if (statusCode === 429 || statusCode === 503)
          retryAfterSec = parseRetryAfter(res.headers['retry-after']);
        let received = 0;
        const complete = (truncated: boolean): void => {
          // Flush a trailing partial UTF-8 sequence only when the body really ended there.
          if (!truncated) responseBody += decoder.decode();
          const code = statusCode ?? 0;
          if (code >= 200 && code < 300) finish('delivered', null);
          else if (code >= 300 && code < 400) finish('retry', `HTTP ${code} redirect not followed`);
          else finish('retry', `HTTP ${code}`);
        };
        res.on('data', (chunk: Buffer) => {
          if (settled) return;
          const room = RESPONSE_BODY_LIMIT - received;
          if (room > 0) responseBody += decoder.decode(chunk.subarray(0, room), { stream: true });
          received += chunk.length;
          if (received > RESPONSE_BODY_LIMIT) {
            // Enough recorded: drop the rest by closing the connection rather than reading it.
            complete(true);
            res.destroy();
            request.destroy();
          }
        });
        res.on('end', () => complete(false));
        res.on('error', (err) => finish('retry', errorText(err)));
        res.on('close', () => {
          if (!res.complete) finish('retry', 'response aborted before the body was complete');
        });
      });
      request.end(body);
    };

    start().catch((err: unknown) => finish('retry', errorText(err)));
  });
}
