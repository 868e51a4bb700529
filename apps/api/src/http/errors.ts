import type { Context, Next } from 'koa';
import { AppError, HTTP_ERRORS, capIssues, isAppError, type Issue } from '@lectern/errors';
import { asUnavailable } from '@lectern/db';
import type { Logger } from '@lectern/log';

interface BodyParserError {
  status?: number;
  statusCode?: number;
  httpCode?: number;
  type?: string;
  expose?: boolean;
  message?: string;
}

/** Maps errors thrown by body parsers and Koa itself onto our codes. */
function fromHttpError(err: BodyParserError): AppError | null {
  // A corrupt gzip/deflate/br body surfaces as a bare zlib error (no status): the client's fault.
  const zcode = (err as { code?: unknown }).code;
  if (typeof zcode === 'string' && /^(Z_|ERR__ERROR_)/.test(zcode)) {
    const msg = 'The request body could not be decompressed (Content-Encoding does not match the bytes)';
    return new AppError('invalid_request', msg, { issues: [{ code: 'malformed', path: [], message: msg }] });
  }
  const status = err.status ?? err.statusCode ?? err.httpCode;
  if (!status || status < 400 || status >= 500) return null;
  if (status === 413)
    return new AppError('payload_too_large', 'The request body is larger than this endpoint accepts');
  if (status === 415)
    return new AppError('unsupported_media_type', err.message ?? 'Unsupported content type');
  if (status === 400) {
    const msg =
      err.type === 'entity.parse.failed' || /JSON|Unexpected|token/i.test(err.message ?? '')
        ? 'Malformed JSON body'
        : (err.message ?? 'Bad request');
    return new AppError('invalid_request', msg, { issues: [{ code: 'malformed', path: [], message: msg }] });
  }
  if (status === 404) return new AppError('not_found', 'Not found');
  if (status === 405) return new AppError('method_not_allowed', 'Method not allowed on this path');
  if (status === 501) return new AppError('not_found', 'No such route');
  return null;
}

/** The one place where errors become HTTP responses. 5xx details stay in the log. */
export function errorMiddleware(log: Logger) {
  return async (ctx: Context, next: Next) => {
    try {
      await next();
      if (ctx.status === 404 && ctx.body === undefined) {
        throw new AppError('not_found', `No route for ${ctx.method} ${ctx.path}`);
      }
      if (ctx.status === 405 && !ctx.body) {
        throw new AppError(
          'method_not_allowed',
          `${ctx.method} is not allowed on ${ctx.path}; allowed: ${ctx.response.get('Allow')}`,
        );
      }
    } catch (caught) {
      const err = asUnavailable(caught);
      const app = isAppError(err) ? err : fromHttpError(err as BodyParserError);
      const final = app ?? new AppError('internal_error', 'Internal error', { cause: err });
      const { status, error } = HTTP_ERRORS[final.code];
      const requestId = String(ctx.state.requestId ?? '');
      if (status >= 500) {
        log.error({ err: caught, requestId, method: ctx.method, path: ctx.path }, 'request failed');
      }
      ctx.status = status;
      const details = { ...(final.details ?? {}) };
      const listed =
        final.issues ?? (Array.isArray(details.issues) ? (details.issues as Issue[]) : undefined);
      delete details.issues;
      const capped = listed ? capIssues(listed) : undefined;
      ctx.body = {
        error,
        message:
          status >= 500 && final.code === 'internal_error'
            ? `Internal error (request ${requestId}); retry once`
            : final.message,
        ...details,
        ...(capped ? { issues: capped.issues } : {}),
        ...(capped && capped.omitted > 0 ? { issuesOmitted: capped.omitted } : {}),
      };
      if (final.retryAfter !== undefined) ctx.set('Retry-After', String(final.retryAfter));
    }
  };
}
