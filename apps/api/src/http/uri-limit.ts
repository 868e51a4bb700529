import type { Context, Next } from 'koa';
import { AppError } from '@lectern/errors';

/**
 * The longest request target (path and query) the service takes, in characters. The longest legitimate one is an
 * embed page address carrying an identity token (at most 8 KiB) and a locale; Node refuses a request line and
 * headers past 16 KiB together before the app sees them (server.ts answers that 414 too).
 */
export const MAX_URL_LENGTH = 12 * 1024;

export const uriTooLongMessage = () =>
  `The request URL is too long: at most ${MAX_URL_LENGTH} characters of path and query`;

/** 414 `uri_too_long` before anything else (the key check included) reads the request. */
export function uriLimit() {
  return async (ctx: Context, next: Next) => {
    if (ctx.url.length > MAX_URL_LENGTH) {
      ctx.req.resume();
      throw new AppError('uri_too_long', uriTooLongMessage());
    }
    await next();
  };
}
