import { createHash, randomBytes } from 'node:crypto';
import type { Context, Next } from 'koa';

/**
 * The response headers of the HTML pages the service serves (the embed page, the authors' preview, /verify) and
 * the defaults of every other answer. docs/player.md "Content-Security-Policy" describes the policy.
 */

/** `frame-ancestors` of a page anyone may frame (the embed and preview pages today). */
export const ANY_FRAME_ANCESTOR: readonly string[] = ['*'];
/** `frame-ancestors` of a page no one may frame (/verify: a page people must trust at a glance). */
export const NO_FRAME_ANCESTOR: readonly string[] = ["'none'"];

export interface PagePolicyInput {
  /**
   * Who may frame the page: CSP sources (`https://lms.example.org`, `*`) or `'none'`. The one parameter a
   * per-workspace list of allowed origins replaces.
   */
  frameAncestors: readonly string[];
  /**
   * The `cspHash` of each inline `<style>` element the page's template writes (hashed once, where the template's
   * constants are defined, not per response).
   */
  styleHashes?: readonly string[];
  /** A per-response nonce for style sheets the player adds at run time (its theme); absent on other pages. */
  styleNonce?: string;
  /** The service's public origin (PUBLIC_URL), allowed beside 'self' (a page reached under another host name). */
  publicOrigin?: string;
  /**
   * The object store's address as browsers see it (S3_PUBLIC_ENDPOINT): signed media load from it, and a store on
   * plain http (the loopback store of `lectern start`) is not covered by `https:`.
   */
  mediaOrigin?: string;
}

/** `'sha256-…'` of an inline element's text, as CSP computes it (UTF-8, base64); a few µs for a style sheet. */
export function cspHash(text: string): string {
  return `'sha256-${createHash('sha256').update(text, 'utf8').digest('base64')}'`;
}

/** A fresh nonce for one response (128 bits). */
export function newNonce(): string {
  return randomBytes(16).toString('base64');
}

/**
 * The Content-Security-Policy of a page. Scripts only from the service (no inline script at all: the player's
 * config is a JSON data block, which is not executed); styles from the service plus the template's inline
 * elements by hash and the player's theme sheet by nonce; images, media and embed-block frames also from any
 * https origin (courses show media and widgets hosted elsewhere); fonts likewise (a theme's custom fonts);
 * requests only to the service; no plugins, no `<base>`, forms only to the service.
 */
export function contentSecurityPolicy(input: PagePolicyInput): string {
  const self = ["'self'", ...(input.publicOrigin ? [input.publicOrigin] : [])].join(' ');
  const styles = [
    self,
    ...new Set(input.styleHashes ?? []),
    ...(input.styleNonce ? [`'nonce-${input.styleNonce}'`] : []),
  ].join(' ');
  const media = input.mediaOrigin ? ` ${input.mediaOrigin}` : '';
  return [
    "default-src 'none'",
    `script-src ${self}`,
    `style-src ${styles}`,
    `img-src ${self}${media} https: data: blob:`,
    `media-src ${self}${media} https: blob:`,
    `font-src ${self} https: data:`,
    `frame-src ${self} https:`,
    `connect-src ${self}`,
    `form-action ${self}`,
    "object-src 'none'",
    "base-uri 'none'",
    `frame-ancestors ${input.frameAncestors.join(' ')}`,
  ].join('; ');
}

export type ReferrerPolicy = 'no-referrer' | 'strict-origin-when-cross-origin';

/** The headers of a page: its policy, no MIME sniffing, and what it tells the pages it links to. */
export function setPageHeaders(
  ctx: Context,
  input: PagePolicyInput & { referrerPolicy: ReferrerPolicy },
): void {
  ctx.set('Content-Security-Policy', contentSecurityPolicy(input));
  ctx.set('X-Content-Type-Options', 'nosniff');
  ctx.set('Referrer-Policy', input.referrerPolicy);
}

/**
 * Every answer: no MIME sniffing, and a referrer reduced to the origin when it leaves the service. Pages set
 * their own stricter values on top (setPageHeaders).
 */
export function baselineHeaders() {
  return async (ctx: Context, next: Next) => {
    ctx.set('X-Content-Type-Options', 'nosniff');
    ctx.set('Referrer-Policy', 'strict-origin-when-cross-origin');
    await next();
  };
}

/** The origin of a configured public URL (`https://lectern.example.com`), or undefined when it is not a URL. */
export function originOf(url: string): string | undefined {
  try {
    const origin = new URL(url).origin;
    return origin === 'null' ? undefined : origin;
  } catch {
    return undefined;
  }
}
