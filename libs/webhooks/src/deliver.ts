/**
 * One delivery attempt over undici's connection pools (its `dispatch` handler API: no streams, no promise or
 * response object per request, about half the client CPU of node:http per request on the webhook bench).
 *
 * - The URL is checked and its host resolved first (`checkUrlResolved`); the socket then connects only to the
 *   address that was checked, through a pinned `lookup`, so there is no DNS-rebinding window. Host header and TLS
 *   SNI stay the original host name, and certificates are verified against it.
 * - One deadline (default 5000 ms) covers DNS, connect, TLS, request, response headers and body.
 * - Redirects are never followed: a 3xx is a failure.
 * - At most the first 2048 bytes of the response body are kept; past that the connection is closed.
 * - Never throws: every problem becomes `error` with outcome 'retry'.
 */
import { isIP, type LookupFunction } from 'node:net';
import { performance } from 'node:perf_hooks';
import { TextDecoder } from 'node:util';
import { Client, Pool, type Dispatcher } from 'undici';
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
// Keep-alive pools, one per (origin, pinned address), bounded.
// ---------------------------------------------------------------------------------------------------------------

const MAX_POOLS = 256;
/**
 * Connections per origin (and so requests at once to one endpoint from one process). The webhook worker admits
 * no more than this many attempts per endpoint at a time, so a request never waits here with its deadline running.
 */
export const SOCKETS_PER_ORIGIN = 16;
/** Idle keep-alive connections are closed after this long (undici also honours a shorter server Keep-Alive hint). */
const IDLE_MS = 15_000;
const pools = new Map<string, Pool>();

function connectOptions(protocol: string, hostname: string, address: string, family: 4 | 6) {
  return {
    lookup: pinnedLookup(address, family),
    // Bounds a connection attempt that outlives its request's deadline (the deadline itself aborts the request).
    timeout: DEFAULT_TIMEOUT_MS,
    // SNI must be the host name (never an IP literal); certificate checks use the same name.
    ...(protocol === 'https:' && isIP(hostname) === 0 ? { servername: hostname } : {}),
  };
}

/**
 * The pool is keyed by origin AND pinned address: a pooled connection is connected to the address that was
 * checked when it was opened, and a later resolution to another address gets its own pool. Least-recently-used
 * pools are closed past MAX_POOLS: requests under way finish, then its connections close.
 */
function poolFor(url: URL, hostname: string, address: string, family: 4 | 6): Pool {
  const key = `${url.origin}|${address}`;
  const existing = pools.get(key);
  if (existing) {
    pools.delete(key);
    pools.set(key, existing);
    return existing;
  }
  const pool = new Pool(url.origin, {
    connections: SOCKETS_PER_ORIGIN,
    keepAliveTimeout: IDLE_MS,
    keepAliveMaxTimeout: IDLE_MS,
    connect: connectOptions(url.protocol, hostname, address, family),
  });
  pools.set(key, pool);
  if (pools.size > MAX_POOLS) {
    const [oldest, evicted] = pools.entries().next().value!;
    pools.delete(oldest);
    evicted.close().catch(() => undefined);
  }
  return pool;
}

/** Destroys every pooled connection (graceful shutdown, tests). */
export function closeDeliveryAgents(): void {
  for (const pool of pools.values()) pool.destroy().catch(() => undefined);
  pools.clear();
}

// ---------------------------------------------------------------------------------------------------------------

function pinnedLookup(address: string, family: 4 | 6): LookupFunction {
  return (_hostname, options, callback) => {
    if (options.all) callback(null, [{ address, family }]);
    else callback(null, address, family);
  };
}

/** The system's code (ECONNREFUSED, a certificate error); for undici's own errors the cause's code or the message. */
function errorText(err: unknown): string {
  if (err && typeof err === 'object') {
    const code = (err as NodeJS.ErrnoException).code;
    if (typeof code === 'string' && code !== '' && !code.startsWith('UND_ERR')) return code;
    const causeCode = ((err as Error).cause as NodeJS.ErrnoException | undefined)?.code;
    if (typeof causeCode === 'string' && causeCode !== '') return causeCode;
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
  out['content-length'] = String(length);
  return out;
}

/** Retry-After from undici's raw header list (alternating names and values). */
function retryAfterOf(raw: Buffer[]): number | null {
  for (let i = 0; i + 1 < raw.length; i += 2) {
    if (raw[i].length === 11 && raw[i].toString('latin1').toLowerCase() === 'retry-after')
      return parseRetryAfter(raw[i + 1].toString('latin1'));
  }
  return null;
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
    /** undici's abort for the request on its connection; null until the request is written to one. */
    let abort: ((err?: Error) => void) | null = null;
    let statusCode: number | null = null;
    let retryAfterSec: number | null = null;
    let decoder: TextDecoder | null = null;
    let responseBody = '';
    let received = 0;
    let oneOff: Client | null = null;
    // The single deadline for DNS + connect + TLS + request + response + body.
    const timer = setTimeout(() => {
      finish('retry', `timeout after ${timeoutMs} ms`);
    }, timeoutMs);

    const finish = (outcome: DeliveryOutcome, error: string | null): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      // Whatever is still under way is cut: a request not yet written never will be (see onConnect).
      abort?.();
      oneOff?.destroy().catch(() => undefined);
      resolve({
        statusCode,
        error,
        durationMs: Math.round(performance.now() - started),
        responseBody,
        retryAfterSec,
        outcome,
      });
    };

    const handler: Dispatcher.DispatchHandlers = {
      onConnect(abortRequest) {
        abort = abortRequest;
        if (settled) abortRequest();
      },
      onError(err) {
        // Headers in, then the connection failed or was closed: the body did not arrive whole.
        finish(
          'retry',
          statusCode !== null && errorText(err) !== 'aborted'
            ? 'response aborted before the body was complete'
            : errorText(err),
        );
      },
      onHeaders(code, rawHeaders) {
        if (code < 200) return true; // 1xx: the final response follows
        statusCode = code;
        if (code === 429 || code === 503) retryAfterSec = retryAfterOf(rawHeaders);
        return true;
      },
      onData(chunk) {
        if (settled) return false;
        const room = RESPONSE_BODY_LIMIT - received;
        if (room > 0) {
          decoder ??= new TextDecoder('utf-8');
          responseBody += decoder.decode(chunk.subarray(0, room), { stream: true });
        }
        received += chunk.length;
        // Enough recorded: drop the rest by closing the connection rather than reading it.
        if (received > RESPONSE_BODY_LIMIT) complete(true);
        return true;
      },
      onComplete() {
        complete(false);
      },
    };

    const complete = (truncated: boolean): void => {
      // Flush a trailing partial UTF-8 sequence only when the body really ended there.
      if (!truncated && decoder) responseBody += decoder.decode();
      const code = statusCode ?? 0;
      if (code >= 200 && code < 300) finish('delivered', null);
      else if (code >= 300 && code < 400) finish('retry', `HTTP ${code} redirect not followed`);
      else finish('retry', `HTTP ${code}`);
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
      const body = typeof opts.body === 'string' ? Buffer.from(opts.body, 'utf8') : opts.body;
      let dispatcher: Dispatcher;
      if (opts.keepAlive === false) {
        oneOff = new Client(url.origin, {
          pipelining: 0,
          connect: connectOptions(url.protocol, hostname, address, family),
        });
        dispatcher = oneOff;
      } else {
        dispatcher = poolFor(url, hostname, address, family);
      }
      dispatcher.dispatch(
        {
          origin: url.origin,
          path: `${url.pathname}${url.search}`,
          method: 'POST',
          headers: outgoingHeaders(opts.headers, body.length),
          body,
        },
        handler,
      );
    };

    start().catch((err: unknown) => finish('retry', errorText(err)));
  });
}
