import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import { checkUrlResolved, type HostResolver } from './ssrf.js';

/** What every guarded request shares: the SSRF policy, the redirect limit and the request headers. */
export interface OutboundRequestOptions {
  /** ALLOW_PRIVATE_NETWORKS (`OutboundEnv`): the policy of webhook deliveries, logos, fonts and media. */
  allowPrivate: boolean;
  /**
   * Redirects followed, each target checked against the SSRF policy again before connecting (a public host must
   * not be able to bounce the service to 169.254.169.254). 0 (the default): a 3xx is a failure.
   */
  maxRedirects?: number;
  accept?: string;
  /** Names the feature in the customer's logs, e.g. `Lectern-SCORM`. */
  userAgent?: string;
  lookup?: HostResolver;
  /** Tests only: the address policy (`ResolveOptions.isForbidden`). */
  isForbidden?: (address: string) => boolean;
}

/** The request in flight, so the caller's deadline can abort whichever hop is running. */
export interface LiveRequest {
  req?: http.ClientRequest;
  aborted: boolean;
}

export type OpenedResponse =
  { ok: true; res: http.IncomingMessage; url: URL } | { ok: false; reason: string };

const REDIRECTS = new Set([301, 302, 303, 307, 308]);

/**
 * GETs `url` and follows redirects up to `maxRedirects`: every hop is resolved and checked (`checkUrlResolved`),
 * then connected to exactly the address that was checked. Resolves with a 2xx response whose body the caller
 * reads, or a reason. Never rejects; the caller owns the deadline and aborts through `live`.
 */
export async function openGuarded(
  url: string,
  opts: OutboundRequestOptions,
  live: LiveRequest,
): Promise<OpenedResponse> {
  const maxRedirects = opts.maxRedirects ?? 0;
  let current = url;
  for (let hop = 0; ; hop++) {
    const target = await checkUrlResolved(current, {
      allowPrivate: opts.allowPrivate,
      lookup: opts.lookup,
      isForbidden: opts.isForbidden,
    });
    if (live.aborted) return { ok: false, reason: 'aborted' };
    if (!target.ok) {
      return {
        ok: false,
        reason: hop === 0 ? `refused: ${target.reason}` : `refused redirect: ${target.reason}`,
      };
    }
    const { url: u, hostname, address, family } = target;
    const pinned: LookupFunction = (_host, options, cb) => {
      if ((options as { all?: boolean }).all) cb(null, [{ address, family }]);
      else cb(null, address, family);
    };
    const client = u.protocol === 'https:' ? https : http;
    const answer = await new Promise<http.IncomingMessage | Error>((resolve) => {
      const req = client.get({
        protocol: u.protocol,
        hostname,
        port: u.port === '' ? undefined : Number(u.port),
        path: `${u.pathname}${u.search}`,
        headers: { accept: opts.accept ?? '*/*', 'user-agent': opts.userAgent ?? 'Lectern' },
        lookup: pinned,
        agent: false,
        ...(u.protocol === 'https:' ? { servername: hostname } : {}),
      });
      live.req = req;
      req.on('error', resolve);
      req.on('response', resolve);
    });
    if (answer instanceof Error) return { ok: false, reason: answer.message };
    const status = answer.statusCode ?? 0;
    const location = answer.headers.location;
    if (REDIRECTS.has(status) && location !== undefined) {
      answer.resume();
      live.req?.destroy();
      if (maxRedirects === 0) return { ok: false, reason: `HTTP ${status} (redirects are not followed)` };
      if (hop >= maxRedirects)
        return { ok: false, reason: `HTTP ${status}: more than ${maxRedirects} redirects` };
      try {
        current = new URL(location, u).href;
      } catch {
        return { ok: false, reason: `HTTP ${status} with an invalid Location` };
      }
      continue;
    }
    if (status < 200 || status >= 300) {
      answer.resume();
      // The same words for every 3xx as before redirects could be followed: SCORM export warnings show them.
      const unfollowed = status >= 300 && status < 400 && maxRedirects === 0;
      return { ok: false, reason: `HTTP ${status}${unfollowed ? ' (redirects are not followed)' : ''}` };
    }
    return { ok: true, res: answer, url: u };
  }
}

export type Refused = { ok: false; reason: string };

/** How a guarded GET's body is read: `finish` settles the whole fetch (once; later calls do nothing). */
export interface GuardedBodyReader<R> {
  res: http.IncomingMessage;
  /** The last hop's URL, after redirects. */
  url: URL;
  finish(result: R | Refused): void;
  /** True once the fetch is settled (a chunk still in flight then is dropped). */
  settled(): boolean;
}

/**
 * The frame every guarded GET shares: one deadline over every hop (`timeoutMs`), `openGuarded`, errors of the
 * request and the response as `{ok: false, reason}`, and a single settlement. `read` consumes the 2xx body;
 * `cleanUp` runs once, after the request is torn down and before the promise resolves (a partial file removed).
 * Never rejects.
 */
export function guardedGet<R>(
  url: string,
  opts: OutboundRequestOptions & { timeoutMs: number },
  read: (body: GuardedBodyReader<R>) => void,
  cleanUp?: (result: R | Refused) => Promise<void> | void,
): Promise<R | Refused> {
  return new Promise<R | Refused>((resolve) => {
    let settled = false;
    const live: LiveRequest = { aborted: false };
    const finish = (result: R | Refused) => {
      if (settled) return;
      settled = true;
      live.aborted = true;
      clearTimeout(timer);
      live.req?.destroy();
      void Promise.resolve(cleanUp?.(result)).finally(() => resolve(result));
    };
    const timer = setTimeout(
      () => finish({ ok: false, reason: `timed out after ${opts.timeoutMs} ms` }),
      opts.timeoutMs,
    );
    const start = async () => {
      const opened = await openGuarded(url, opts, live);
      if (settled) {
        if (opened.ok) opened.res.destroy();
        return;
      }
      if (!opened.ok) return finish(opened);
      const { res } = opened;
      live.req?.on('error', (err) => finish({ ok: false, reason: err.message }));
      res.on('error', (err) => finish({ ok: false, reason: err.message }));
      read({ res, url: opened.url, finish, settled: () => settled });
    };
    start().catch((err: unknown) => finish({ ok: false, reason: (err as Error).message }));
  });
}
