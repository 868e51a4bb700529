import type { Issue } from './issue.js';

export type { Issue };

/**
 * One transport-neutral error for domain, worker and API code. The API maps
 * `code` to an HTTP status in exactly one place (`httpErrorFor`); workers use
 * `retryable` to choose nak-with-delay or term.
 */
export type ErrorCode =
  | 'invalid_request'
  | 'unauthorized'
  | 'insufficient_scope'
  | 'forbidden'
  | 'origin_not_allowed'
  | 'plan_required'
  | 'plan_blocked'
  | 'not_found'
  | 'method_not_allowed'
  | 'conflict'
  | 'payload_too_large'
  | 'uri_too_long'
  | 'unsupported_media_type'
  | 'rate_limited'
  | 'internal_error'
  | 'unavailable'
  | 'timeout';

export interface AppErrorOptions {
  issues?: Issue[];
  retryable?: boolean;
  cause?: unknown;
  /** Seconds, sent as Retry-After for 429/503. */
  retryAfter?: number;
  /** Extra fields merged into the error body (e.g. CSV `issues` with row numbers). */
  details?: Record<string, unknown>;
}

export class AppError extends Error {
  readonly code: ErrorCode;
  readonly issues?: Issue[];
  readonly retryable: boolean;
  readonly retryAfter?: number;
  readonly details?: Record<string, unknown>;

  constructor(code: ErrorCode, message: string, opts: AppErrorOptions = {}) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.name = 'AppError';
    this.code = code;
    this.issues = opts.issues;
    this.retryable = opts.retryable ?? (code === 'unavailable' || code === 'timeout');
    this.retryAfter = opts.retryAfter;
    this.details = opts.details;
  }
}

/** Status and public error string for each code. A new code without a row does not compile. */
export const HTTP_ERRORS: Record<ErrorCode, { status: number; error: string }> = {
  invalid_request: { status: 400, error: 'invalid_request' },
  unauthorized: { status: 401, error: 'unauthorized' },
  insufficient_scope: { status: 403, error: 'insufficient_scope' },
  // SPEC: a certificate download refused (run not finished, pass mark not met, anonymous run).
  forbidden: { status: 403, error: 'forbidden' },
  // A run open from an origin the workspace did not list (docs/player-api.md "Who may open runs").
  origin_not_allowed: { status: 403, error: 'origin_not_allowed' },
  plan_required: { status: 403, error: 'plan_required' },
  // SPEC: a spent Sandbox allowance or an unpaid invoice past grace is a 402 with the same stable code.
  plan_blocked: { status: 402, error: 'plan_required' },
  not_found: { status: 404, error: 'not_found' },
  method_not_allowed: { status: 405, error: 'method_not_allowed' },
  conflict: { status: 409, error: 'conflict' },
  payload_too_large: { status: 413, error: 'payload_too_large' },
  uri_too_long: { status: 414, error: 'uri_too_long' },
  unsupported_media_type: { status: 415, error: 'unsupported_media_type' },
  rate_limited: { status: 429, error: 'rate_limited' },
  internal_error: { status: 500, error: 'internal_error' },
  unavailable: { status: 503, error: 'service_unavailable' },
  timeout: { status: 504, error: 'timeout' },
};

export function isAppError(err: unknown): err is AppError {
  return err instanceof AppError;
}

/** The PostgreSQL SQLSTATE of an error (or of one of its causes), if it came from the server. */
export function sqlStateOf(err: unknown): string | undefined {
  let e: unknown = err;
  for (let depth = 0; e && depth < 5; depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) && !code.startsWith('E')) return code;
    e = (e as { cause?: unknown }).cause;
  }
  return undefined;
}

/**
 * SQLSTATE classes a retry can fix: connection (08), transaction rollback (40: deadlock, serialization),
 * insufficient resources (53), operator intervention (57), system error (58), lock not available (55P03).
 * Every other server error (bad data 22, constraint 23, syntax 42, …) fails the same way every time, and so
 * does 08P01 (protocol violation: what a NUL in a bound value gets), although it sits in class 08.
 */
export function isTransientSqlState(state: string): boolean {
  if (state === '08P01') return false;
  return /^(08|40|53|57|58)/.test(state) || state === '55P03';
}

/**
 * Whether a failed message or job is worth another try: an AppError says for itself (deterministic input errors
 * are terminal); a database error is retried only when its SQLSTATE is transient (an outage, a deadlock: bad data
 * or a broken constraint fails identically on every delivery); any other unknown fault (network, a bug) gets
 * another delivery.
 */
export function isRetryable(err: unknown): boolean {
  if (isAppError(err)) return err.retryable;
  const state = sqlStateOf(err);
  return state === undefined || isTransientSqlState(state);
}

export function invalid(message: string, issues: Issue[]): AppError {
  return new AppError('invalid_request', message, { issues });
}

export function notFound(what: string): AppError {
  return new AppError('not_found', `${what} not found`);
}

/** zod issues → spec issues (`{code, path, message}`). */
export function issuesFromZod(
  zodIssues: readonly { code: string; path: readonly PropertyKey[]; message: string }[],
  prefix: (string | number)[] = [],
): Issue[] {
  return zodIssues.map((i) => ({
    code: i.code,
    path: [...prefix, ...i.path.map((p) => (typeof p === 'symbol' ? String(p) : p))],
    message: i.message,
  }));
}

/**
 * At most this many issues travel in one error body; the rest are counted in `issuesOmitted`.
 * A client fixes the first ones and sends again; a list of 640,000 helps nobody and costs memory.
 */
export const MAX_ISSUES = 100;

/** The issues an error body carries, and how many were left out. */
export function capIssues(issues: readonly Issue[]): { issues: Issue[]; omitted: number } {
  return issues.length <= MAX_ISSUES
    ? { issues: [...issues], omitted: 0 }
    : { issues: issues.slice(0, MAX_ISSUES), omitted: issues.length - MAX_ISSUES };
}

export { MAX_JSON_DEPTH, badTextReason, inputIssue } from './input.js';
