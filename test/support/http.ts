import { LecternClient } from '@lectern/client';
import { checkContract } from './contract.js';

export interface Res<T = Record<string, unknown>> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

/** A thin fetch wrapper: JSON in, parsed JSON (or text) out. */
export async function call<T = Record<string, unknown>>(
  base: string,
  method: string,
  path: string,
  opts: { key?: string; body?: unknown; raw?: string | Buffer; headers?: Record<string, string> } = {},
): Promise<Res<T>> {
  const headers: Record<string, string> = { ...(opts.headers ?? {}) };
  if (opts.key) headers.authorization = `Bearer ${opts.key}`;
  let body: string | Buffer | undefined;
  if (opts.body !== undefined) {
    body = JSON.stringify(opts.body);
    headers['content-type'] ??= 'application/json';
  } else if (opts.raw !== undefined) {
    body = opts.raw;
  }
  const res = await fetch(base + path, { method, headers, body });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {
    // not JSON: leave as text
  }
  await checkContract(base + path, method, res.status, res.headers.get('content-type'), parsed);
  return { status: res.status, headers: res.headers, body: parsed as T, text };
}

/**
 * The typed client (@lectern/client) on a test app (or a base URL) with `key`, for tests about the result of an
 * operation. Its answers get the same contract check as `call`'s. Tests about the wire itself (exact statuses,
 * headers, malformed bodies, error envelopes) keep `call`, which sends exactly what they say and retries nothing.
 */
export function clientFor(app: { base: string } | string, key?: string): LecternClient {
  return new LecternClient({
    baseUrl: typeof app === 'string' ? app : app.base,
    apiKey: key,
    fetch: async (input, init) => {
      const res = await fetch(input, init);
      const text = await res.clone().text();
      let parsed: unknown = text;
      try {
        parsed = text ? JSON.parse(text) : null;
      } catch {
        // not JSON: leave as text
      }
      const url = input instanceof Request ? input.url : String(input);
      const method = init?.method ?? (input instanceof Request ? input.method : 'GET');
      await checkContract(url, method, res.status, res.headers.get('content-type'), parsed);
      return res;
    },
  });
}

/** Polls `fn` until it returns a truthy value; sleeps between polls, never a bare sleep for sync. */
export async function waitFor<T>(
  fn: () => Promise<T> | T,
  opts: { timeoutMs?: number; intervalMs?: number; what?: string } = {},
): Promise<NonNullable<T>> {
  const deadline = Date.now() + (opts.timeoutMs ?? 10_000);
  let last: unknown;
  for (;;) {
    try {
      const v = await fn();
      if (v) return v as NonNullable<T>;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline)
      throw new Error(`timed out waiting for ${opts.what ?? 'condition'}${last ? `: ${String(last)}` : ''}`);
    await new Promise((r) => setTimeout(r, opts.intervalMs ?? 50));
  }
}
