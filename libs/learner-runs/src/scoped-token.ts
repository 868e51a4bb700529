import { SignJWT, errors, jwtVerify } from 'jose';
import { AppError } from '@lectern/errors';

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

/** `key` is read at each call, so a process without the key configured fails only when a token is needed. */
export function scopedTokens(key: () => Uint8Array, kind: ScopedTokenKind): ScopedTokens {
  const refuse = (why: string) => new AppError('unauthorized', `${kind.refused}: ${why}`);
  return {
    refuse,
    async sign(sub, wid, opts = {}) {
      const jwt = new SignJWT({ ...opts.claims, wid })
        .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
        .setSubject(sub)
        .setAudience(kind.audience)
        .setIssuedAt();
      const exp = opts.ttlSeconds === undefined ? null : Math.floor(Date.now() / 1000) + opts.ttlSeconds;
      if (exp !== null) jwt.setExpirationTime(exp);
      return { token: await jwt.sign(key()), exp };
    },
    async verify(token) {
      let payload: Record<string, unknown>;
      try {
        ({ payload } = await jwtVerify(token, key(), {
          algorithms: ['HS256'],
          audience: kind.audience,
          ...(kind.expired ? { requiredClaims: ['exp'] } : {}),
        }));
      } catch (err) {
        if (kind.expired && err instanceof errors.JWTExpired) throw refuse(kind.expired);
        throw refuse(kind.notOurs);
      }
      if (typeof payload.sub !== 'string' || typeof payload.wid !== 'string') throw refuse(kind.notOurs);
      return { sub: payload.sub, wid: payload.wid, payload };
    },
  };
}
