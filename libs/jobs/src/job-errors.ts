import { AppError, HTTP_ERRORS, isAppError, type ErrorCode, type Issue } from '@lectern/errors';

/**
 * How a failed job's error is kept in `jobs.error`: exactly what the API needs to
 * rebuild the AppError the worker decided on, so the HTTP answer does not depend on
 * which process ran the job.
 */
export interface StoredJobError {
  code: ErrorCode;
  message: string;
  issues?: Issue[];
  details?: Record<string, unknown>;
}

function isErrorCode(code: unknown): code is ErrorCode {
  return typeof code === 'string' && Object.prototype.hasOwnProperty.call(HTTP_ERRORS, code);
}

/**
 * Worker side: the error a job ends with. An AppError keeps its code, message, issues
 * and details. Anything else is a fault of ours: the row says `internal_error` with a
 * generic message (the detail goes to the worker's log, never to the API caller).
 */
export function toStoredError(err: unknown): StoredJobError {
  if (isAppError(err) && err.code !== 'internal_error') {
    return {
      code: err.code,
      message: err.message,
      ...(err.issues ? { issues: err.issues } : {}),
      ...(err.details ? { details: err.details } : {}),
    };
  }
  return { code: 'internal_error', message: 'The job failed with an internal error' };
}

/** API side: the stored error back into the AppError the caller gets. */
export function fromStoredError(stored: unknown, jobId: string): AppError {
  const s = (stored ?? {}) as Partial<StoredJobError>;
  if (!isErrorCode(s.code) || typeof s.message !== 'string') {
    return new AppError('internal_error', `Job ${jobId} failed without a readable error`);
  }
  return new AppError(s.code, s.message, {
    issues: Array.isArray(s.issues) ? s.issues : undefined,
    details: s.details && typeof s.details === 'object' ? s.details : undefined,
    // A failed job is final: the caller may resend, but this job will not be retried.
    retryable: s.code === 'unavailable',
  });
}

/**
 * The 504 when the done notice did not come in time. The job is left as it is (queued or
 * processing): it completes when a worker gets to it, so the caller is told the job id
 * and to look before sending the same request again.
 */
export function jobTimeoutError(jobId: string, what: string, timeoutMs: number): AppError {
  const seconds = Math.round(timeoutMs / 100) / 10;
  return new AppError(
    'timeout',
    `The ${what} did not finish within ${seconds} s. It is still queued as job ${jobId} and may complete later; ` +
      'check before sending the same request again, or a duplicate may be created',
    { details: { jobId }, retryable: false },
  );
}
