/**
 * @lectern/client — the typed client of the Lectern API (/api/v1) and the Player API (/player/v1).
 *
 * Types and the operation table are generated from the OpenAPI document the service serves
 * (`npm run client:generate`); this file is the thin hand-written part: a method per operation named by its
 * operationId, typed errors carrying the stable codes, retries, and async iteration over paged lists.
 * docs/client.md shows it in use.
 */
import createClient from 'openapi-fetch';
import type { components, operations, paths } from './generated/api.js';
import { OPERATIONS, type OperationId } from './generated/operations.js';

export type { components, operations, paths };
export { OPERATIONS, type OperationId };

/** The named schemas of the document: `Schemas['Course']`, `Schemas['PlayerCourse']`, … */
export type Schemas = components['schemas'];
/** The Player API's paths alone, for custom players (docs/player-api.md). */
export type PlayerPaths = Pick<paths, Extract<keyof paths, `/player/v1/${string}`>>;

type Op<K extends OperationId> = operations[K];
type Parameters_<K extends OperationId> = Op<K> extends { parameters: infer P } ? P : never;
/** Path parameters of an operation (`{ id: string }`). */
export type PathParams<K extends OperationId> = Parameters_<K> extends { path?: infer P } ? P : never;
/** Query parameters of an operation. */
export type QueryParams<K extends OperationId> = Parameters_<K> extends { query?: infer Q } ? Q : never;
/** The JSON body an operation takes. */
export type RequestBody<K extends OperationId> =
  Op<K> extends {
    requestBody?: { content: { 'application/json': infer B } };
  }
    ? B
    : never;
type Responses<K extends OperationId> = Op<K> extends { responses: infer R } ? R : never;
type JsonOf<R> = R extends { content: { 'application/json': infer J } }
  ? J
  : R extends { content: object }
    ? Uint8Array
    : undefined;
/** What a successful call returns: the JSON body of its 2xx answer (bytes for a file, undefined for 204). */
export type SuccessBody<K extends OperationId> = {
  [S in keyof Responses<K>]: S extends 200 | 201 | 202 | 204 ? JsonOf<Responses<K>[S]> : never;
}[keyof Responses<K>];

export interface OperationInput<K extends OperationId = OperationId> {
  params?: PathParams<K>;
  query?: QueryParams<K>;
  body?: RequestBody<K>;
  headers?: Record<string, string>;
  /** Sent as `Idempotency-Key`; a POST gets a fresh one when absent, and keeps it across retries. */
  idempotencyKey?: string;
  signal?: AbortSignal;
}

/** An answer as the service gave it: what `callOperation` returns, whatever the status. */
export interface OperationAnswer {
  status: number;
  /** Parsed JSON, text for a text answer, bytes for a file (a SCORM zip, a certificate PDF), null when empty. */
  body: unknown;
  headers: Record<string, string>;
}

export interface ErrorIssue {
  path: (string | number)[];
  message: string;
  [key: string]: unknown;
}

/** A non-2xx answer: `code` is the stable error code of SPEC (`not_found`, `plan_required`, `rate_limited`, …). */
export class LecternError extends Error {
  override readonly name = 'LecternError';
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly issues: ErrorIssue[] | undefined,
    readonly operationId: string,
    readonly body: unknown,
  ) {
    super(`${operationId}: ${status} ${code}: ${message}`);
  }
}

export interface ClientOptions {
  /** The service's address (`https://lectern.example.com`); a value ending in `/api/v1` works too. */
  baseUrl: string;
  /** An API key (`lk_…`) or, for the Player API, a run token. */
  apiKey?: string;
  /** Retries of a 429 answer, each after its `Retry-After` (default 3). */
  maxRateLimitRetries?: number;
  /** The longest wait a `Retry-After` may impose before the 429 is thrown instead (default 60 s). */
  maxRetryAfterMs?: number;
  fetch?: typeof fetch;
  /** Added to every request (e.g. a User-Agent of your integration). */
  headers?: Record<string, string>;
}

type Methods = {
  [K in OperationId]: (input?: OperationInput<K>) => Promise<SuccessBody<K>>;
};

/** The paged lists (SPEC "Paging rules"): `{data: [...], pagination: {limit, offset, total, hasMore}}`. */
type PagedIds = {
  [K in OperationId]: SuccessBody<K> extends { pagination: unknown; data: (infer _T)[] } ? K : never;
}[OperationId];
type ItemOf<K extends OperationId> = SuccessBody<K> extends { data: (infer T)[] } ? T : never;

const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    const t = setTimeout(resolve, ms);
    signal?.addEventListener('abort', () => (clearTimeout(t), reject(signal.reason)), { once: true });
  });

/** Seconds or an HTTP date, as `Retry-After` may carry; undefined when absent or unreadable. */
export function retryAfterMs(value: string | null, now = Date.now()): number | undefined {
  if (!value) return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

/** Each path parameter is percent-encoded whole, dots included, so a value only ever names one segment. */
const segment = (v: string) => encodeURIComponent(v).replace(/\./g, '%2E');

function queryString(query: object | undefined): string {
  const qs = new URLSearchParams();
  for (const [k, v] of Object.entries(query ?? {})) {
    if (v === undefined || v === null) continue;
    for (const item of Array.isArray(v) ? v : [v]) qs.append(k, String(item));
  }
  const s = qs.toString();
  return s ? `?${s}` : '';
}

async function readBody(res: Response): Promise<unknown> {
  if (res.status === 204 || res.status === 304) return null;
  const type = res.headers.get('content-type') ?? '';
  if (/\bjson\b/.test(type)) {
    const text = await res.text();
    return text ? JSON.parse(text) : null;
  }
  if (/^text\//.test(type)) return res.text();
  const bytes = new Uint8Array(await res.arrayBuffer());
  return bytes.byteLength ? bytes : null;
}

// The class gains a method per operationId in its constructor; the interface of the same name types them.
// eslint-disable-next-line @typescript-eslint/no-unsafe-declaration-merging
export class LecternClient {
  /** The service root (no trailing slash, no `/api/v1`). */
  readonly origin: string;
  /**
   * openapi-fetch over the same transport (auth, retries), for calls by path:
   * `client.http.GET('/api/v1/courses/{id}', { params: { path: { id } } })`.
   */
  readonly http: ReturnType<typeof createClient<paths>>;
  private readonly opts: Required<Pick<ClientOptions, 'maxRateLimitRetries' | 'maxRetryAfterMs'>> &
    ClientOptions;
  private readonly fetchImpl: typeof fetch;

  constructor(opts: ClientOptions) {
    this.origin = opts.baseUrl.replace(/\/+$/, '').replace(/\/api\/v1$/, '');
    this.opts = { maxRateLimitRetries: 3, maxRetryAfterMs: 60_000, ...opts };
    this.fetchImpl = opts.fetch ?? globalThis.fetch.bind(globalThis);
    this.http = createClient<paths>({
      baseUrl: this.origin,
      fetch: (req: Request) => this.send(req.method, req.url, req),
    });
    for (const id of Object.keys(OPERATIONS) as OperationId[]) {
      Object.defineProperty(this, id, {
        value: (input?: OperationInput) => this.invoke(id, input ?? {}),
        enumerable: false,
      });
    }
  }

  /**
   * Runs one operation by its operationId and returns the answer whatever its status (no throw on 4xx/5xx):
   * the generic entry point of tools (the MCP tool server's stdio transport) and scripts.
   */
  async callOperation(operationId: string, input: OperationInput = {}): Promise<OperationAnswer> {
    const op = (OPERATIONS as Record<string, { method: string; path: string }>)[operationId];
    if (!op) throw new TypeError(`unknown operation: ${operationId}`);
    const params = (input.params ?? {}) as Record<string, unknown>;
    // A missing path parameter is an empty segment: the service answers it (404), as it would any request.
    const path = op.path.replace(/\{([^}]+)\}/g, (_, name: string) => segment(String(params[name] ?? '')));
    const headers: Record<string, string> = { ...(input.headers ?? {}) };
    let payload: string | Uint8Array | undefined;
    const body = input.body as unknown;
    if (body !== undefined) {
      if (body instanceof Uint8Array || typeof body === 'string') payload = body;
      else {
        payload = JSON.stringify(body);
        headers['content-type'] ??= 'application/json';
      }
    }
    if (op.method === 'POST') headers['idempotency-key'] ??= input.idempotencyKey ?? crypto.randomUUID();
    const res = await this.send(op.method, `${this.origin}${path}${queryString(input.query as object)}`, {
      headers,
      body: payload,
      signal: input.signal,
    });
    return {
      status: res.status,
      body: await readBody(res),
      headers: Object.fromEntries(res.headers.entries()),
    };
  }

  /**
   * Every item of a paged list (`listCompletions`, `listIdentities`, `listIssuedCertificates`), fetching page
   * after page while `pagination.hasMore` says so.
   */
  async *paginate<K extends PagedIds>(
    operationId: K,
    input: Omit<OperationInput<K>, 'body'> = {},
  ): AsyncGenerator<ItemOf<K>> {
    const query = { ...((input.query as object) ?? {}) } as Record<string, unknown>;
    let offset = Number(query.offset ?? 0);
    for (;;) {
      const page = (await this.invoke(operationId, {
        ...input,
        query: { ...query, offset },
      } as OperationInput)) as {
        data: ItemOf<K>[];
        pagination: { hasMore: boolean };
      };
      for (const item of page.data) yield item;
      if (!page.pagination.hasMore || page.data.length === 0) return;
      offset += page.data.length;
    }
  }

  private async invoke(operationId: OperationId, input: OperationInput): Promise<unknown> {
    const answer = await this.callOperation(operationId, input);
    if (answer.status >= 200 && answer.status < 300) return answer.body ?? undefined;
    const err = (answer.body ?? {}) as { error?: string; message?: string; issues?: ErrorIssue[] };
    throw new LecternError(
      answer.status,
      err.error ?? `http_${answer.status}`,
      err.message ?? `HTTP ${answer.status}`,
      err.issues,
      operationId,
      answer.body,
    );
  }

  /**
   * One request with the client's auth and retry rules: a 429 is retried after its `Retry-After` (at most
   * `maxRateLimitRetries` times, never waiting longer than `maxRetryAfterMs`); a 503 or a 500 `internal_error`
   * is retried once, with the same `Idempotency-Key` (a failed request changed nothing: every write is one
   * transaction, and the operations that create jobs or store files also dedupe by the key).
   */
  private async send(
    method: string,
    url: string,
    init: {
      headers?: RequestInit['headers'];
      body?: RequestInit['body'];
      signal?: AbortSignal | null;
    },
  ): Promise<Response> {
    const headers = new Headers(init.headers);
    for (const [k, v] of Object.entries(this.opts.headers ?? {})) if (!headers.has(k)) headers.set(k, v);
    if (this.opts.apiKey && !headers.has('authorization'))
      headers.set('authorization', `Bearer ${this.opts.apiKey}`);
    if (!headers.has('accept')) headers.set('accept', 'application/json, */*;q=0.5');
    const body =
      init.body instanceof ReadableStream ? await new Response(init.body).arrayBuffer() : init.body;
    let rateLimited = 0;
    let failedOnce = false;
    for (;;) {
      const res = await this.fetchImpl(url, { method, headers, body, signal: init.signal ?? undefined });
      if (res.status === 429 && rateLimited < this.opts.maxRateLimitRetries) {
        const wait = retryAfterMs(res.headers.get('retry-after')) ?? 1000 * 2 ** rateLimited;
        if (wait <= this.opts.maxRetryAfterMs) {
          rateLimited++;
          await res.body?.cancel();
          await sleep(wait, init.signal ?? undefined);
          continue;
        }
      }
      if (!failedOnce && (res.status === 503 || res.status === 500)) {
        const retry = res.status === 503 || (await isInternalError(res.clone()));
        if (retry) {
          failedOnce = true;
          await res.body?.cancel();
          await sleep(retryAfterMs(res.headers.get('retry-after')) ?? 250, init.signal ?? undefined);
          continue;
        }
      }
      return res;
    }
  }
}

async function isInternalError(res: Response): Promise<boolean> {
  try {
    return ((await res.json()) as { error?: string }).error === 'internal_error';
  } catch {
    return false;
  }
}

// A method per operation, named by its operationId: `await client.createCourse({ body })`.
// eslint-disable-next-line @typescript-eslint/no-empty-object-type, @typescript-eslint/no-unsafe-declaration-merging
export interface LecternClient extends Methods {}
