import { SignJWT, errors, jwtVerify } from 'jose';
import { AppError } from '@lectern/errors';
import { VersionCache } from './served.js';

/**
 * The service's own short tokens (run tokens, SCORM tracking tokens, authors' preview links): an HS256 JWT with
 * `sub` = the thing it is for, `wid` = its workspace, an audience of its kind (so no kind is ever taken for
 * another), optional extra claims and, when `ttlSeconds` is given, an `exp`. Verified with jose, which checks the
 * algorithm, the audience and the expiry; refusals are 401 `unauthorized` saying why.
 */
export interface ScopedTokenKind {
  audience: string;
  /** Start of every refusal, e.g. "Run token refused". */
  refused: string;
  /** Why a token that is not one of this kind is refused, e.g. "it is not a valid run token of this service". */
  notOurs: string;
  /** Why an expired one is refused; only kinds that expire. */
  expired?: string;
}

export interface ScopedClaims {
  sub: string;
  wid: string;
  payload: Record<string, unknown>;
}

export interface ScopedTokens {
  sign(
    sub: string,
    wid: string,
    opts?: { ttlSeconds?: number; claims?: Record<string, unknown> },
  ): Promise<{ token: string; exp: number | null }>;
  /** `sub`, `wid` and the whole payload of a valid token of this kind; 401 otherwise. */
  verify(token: string): Promise<ScopedClaims>;
  /** The 401 of this kind, for the checks its caller adds (`sub` of another run, …). */
  refuse(why: string): AppError;
}

/**
 * Tokens this process verified, remembered until their `exp`: a player sends the same run token with every batch,
 * and verifying it (jose's HMAC through WebCrypto: a key import and a thread-pool job) was a tenth of the
 * events call's CPU. Keyed by the whole token, signature included, so only a token already verified byte for byte
 * is taken from here; a different key empties it.
 */
const VERIFIED_KEPT = 10_000;

/**
 * `key` is read at each call, so a process without the key configured fails only when a token is needed. `now`
 * (milliseconds since the epoch) is the clock of signing, of jose's expiry check and of the remembered tokens, so a
 * test can step past an `exp` instead of sleeping across a second boundary.
 */
export function scopedTokens(
  key: () => Uint8Array,
  kind: ScopedTokenKind,
  now: () => number = Date.now,
): ScopedTokens {
  const refuse = (why: string) => new AppError('unauthorized', `${kind.refused}: ${why}`);
  const verified = new VersionCache<{ claims: ScopedClaims; expMs: number }>(VERIFIED_KEPT);
  let verifiedWith: Uint8Array | undefined;
  return {
    refuse,
    async sign(sub, wid, opts = {}) {
      const jwt = new SignJWT({ ...opts.claims, wid })
        .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
        .setSubject(sub)
        .setAudience(kind.audience)
        .setIssuedAt(Math.floor(now() / 1000));
      const exp = opts.ttlSeconds === undefined ? null : Math.floor(now() / 1000) + opts.ttlSeconds;
      if (exp !== null) jwt.setExpirationTime(exp);
      return { token: await jwt.sign(key()), exp };
    },
    async verify(token) {
      const k = key();
      if (k !== verifiedWith) {
        verified.clear();
        verifiedWith = k;
      }
      const hit = verified.get(token);
      if (hit) {
        // jose's rule: expired once now >= exp.
        if (now() < hit.expMs) return hit.claims;
        verified.delete(token);
      }
      let payload: Record<string, unknown>;
      try {
        ({ payload } = await jwtVerify(token, k, {
          algorithms: ['HS256'],
          audience: kind.audience,
          currentDate: new Date(now()),
          ...(kind.expired ? { requiredClaims: ['exp'] } : {}),
        }));
      } catch (err) {
        if (kind.expired && err instanceof errors.JWTExpired) throw refuse(kind.expired);
        throw refuse(kind.notOurs);
      }
      if (typeof payload.sub !== 'string' || typeof payload.wid !== 'string') throw refuse(kind.notOurs);
      const claims = { sub: payload.sub, wid: payload.wid, payload };
      // Only tokens that expire are kept (a tracking token has no exp and is verified each time).
      if (typeof payload.exp === 'number') verified.set(token, { claims, expMs: payload.exp * 1000 });
      return claims;
    },
  };
}
