import { ErrorBody } from '@lectern/contracts';
import type { ResponseSpec } from '../http/router.js';

/** The error rows every keyed route can answer with (SPEC.md "Errors"). */
export const errorResponses: Record<number, ResponseSpec> = {
  400: {
    description: 'invalid_request: the body or query fails validation (with issues)',
    schema: ErrorBody,
  },
  401: { description: 'unauthorized: missing, wrong, revoked or malformed key', schema: ErrorBody },
  402: {
    description: 'plan_required: Sandbox allowance spent, or invoice past its grace period',
    schema: ErrorBody,
  },
  403: { description: 'insufficient_scope (read-only key) or plan_required', schema: ErrorBody },
  404: { description: 'not_found', schema: ErrorBody },
  429: { description: 'rate_limited (Retry-After seconds)', schema: ErrorBody },
  500: { description: 'internal_error', schema: ErrorBody },
};

/**
 * What a synchronous command (docs/jobs.md: an import, an export) answers besides its own rows: 503 when the object
 * store or the job queue cannot be reached, 504 past its deadline (`timeout` says what the caller may do then).
 */
export function syncJobErrors(timeout: string): Record<number, ResponseSpec> {
  return {
    503: {
      description: 'service_unavailable: the object store or the job queue is unreachable (Retry-After)',
      schema: ErrorBody,
    },
    504: { description: `timeout: ${timeout}`, schema: ErrorBody },
  };
}
