import type { Catalogue, Operation } from './catalogue.js';

export interface OperationInput {
  params?: Record<string, string | number>;
  query?: Record<string, unknown>;
  /** JSON, a text body, or the bytes of a file body (then `headers['content-type']` says what they are). */
  body?: unknown;
  headers?: Record<string, string>;
}

export interface OperationAnswer {
  status: number;
  /** Parsed JSON; a string for a text answer; bytes for a binary one (a zip, a PDF); null when empty. */
  body: unknown;
  headers: Record<string, string>;
}

/**
 * Runs one operation of the API by its operationId, as the REST call with the caller's key: the same key check,
 * scope, plan gate, rate limit, validation and workspace scoping, because it IS that REST call. Implemented over
 * HTTP for stdio (`fetchOperationCaller`, or the typed client), in-process for the API's own /mcp.
 */
export interface OperationCaller {
  call(operationId: string, input: OperationInput): Promise<OperationAnswer>;
}

/** A request built from an operation and the tool's input: what either transport sends. */
export interface BuiltRequest {
  method: string;
  /** Path and query string, from the service root: `/api/v1/courses/crs_1?limit=20`. */
  url: string;
  headers: Record<string, string>;
  payload?: string | Uint8Array;
}

/**
 * Every byte of a path parameter is percent-encoded, dots included, so a value can only ever name one path segment
 * (`..` reaches `/courses/%2E%2E`, which the route reads back as the id `..`: not_found, never another route).
 */
const segment = (v: string) => encodeURIComponent(v).replace(/\./g, '%2E');

function queryString(query: Record<string, unknown> | undefined): string {
  const qs = new URLSearchParams();
  for (const [k, v] of Object.entries(query ?? {})) {
    if (v === undefined || v === null) continue;
    for (const item of Array.isArray(v) ? v : [v]) {
      qs.append(k, typeof item === 'object' ? JSON.stringify(item) : String(item));
    }
  }
  const s = qs.toString();
  return s ? `?${s}` : '';
}

export function buildRequest(op: Operation, input: OperationInput): BuiltRequest {
  // A missing parameter is sent as an empty segment: the API answers it (a 404 or 405), the tool layer decides nothing.
  const path = op.path.replace(/\{([^}]+)\}/g, (_, name: string) =>
    segment(String(input.params?.[name] ?? '')),
  );
  const headers: Record<string, string> = {};
  let payload: string | Uint8Array | undefined;
  if (op.body && input.body !== undefined) {
    headers['content-type'] = input.headers?.['content-type'] ?? op.body.contentType;
    payload =
      input.body instanceof Uint8Array
        ? input.body
        : op.body.json || typeof input.body !== 'string'
          ? JSON.stringify(input.body)
          : input.body;
  }
  return { method: op.method, url: path + queryString(input.query), headers, payload };
}

const JSON_TYPE = /^application\/(?:[\w.+-]+\+)?json\b/i;
const TEXT_TYPE = /^(?:text\/|application\/(?:xml|javascript))/i;

/** The answer's body as the tool layer sees it: JSON parsed, text as a string, anything else as bytes. */
export function decodeBody(contentType: string | undefined, bytes: Uint8Array): unknown {
  if (bytes.length === 0) return null;
  const type = contentType ?? '';
  if (JSON_TYPE.test(type)) {
    const text = Buffer.from(bytes).toString('utf8');
    try {
      return JSON.parse(text) as unknown;
    } catch {
      return text;
    }
  }
  if (TEXT_TYPE.test(type)) return Buffer.from(bytes).toString('utf8');
  return bytes;
}

/** `http://host:8080`, `http://host:8080/`, `http://host:8080/api/v1` → `http://host:8080`. */
export function serviceRoot(url: string): string {
  const u = new URL(url);
  const path = u.pathname.replace(/\/+$/, '').replace(/\/api\/v1$/, '');
  return `${u.origin}${path}`;
}

export class UnknownOperationError extends Error {
  constructor(readonly operationId: string) {
    super(`unknown operation: ${operationId}`);
    this.name = 'UnknownOperationError';
  }
}

/** The minimal HTTP caller for stdio: fetch against a running service with the API key. */
export function fetchOperationCaller(opts: {
  baseUrl: string;
  apiKey: string;
  catalogue: Catalogue;
  fetch?: typeof fetch;
}): OperationCaller {
  const root = serviceRoot(opts.baseUrl);
  const doFetch = opts.fetch ?? fetch;
  return {
    async call(operationId, input) {
      const op = opts.catalogue.byId.get(operationId);
      if (!op) throw new UnknownOperationError(operationId);
      const req = buildRequest(op, input);
      const res = await doFetch(root + req.url, {
        method: req.method,
        headers: { ...req.headers, authorization: `Bearer ${opts.apiKey}` },
        body: req.payload,
      });
      const bytes = new Uint8Array(await res.arrayBuffer());
      const headers: Record<string, string> = {};
      res.headers.forEach((v, k) => (headers[k] = v));
      return { status: res.status, body: decodeBody(headers['content-type'], bytes), headers };
    },
  };
}
