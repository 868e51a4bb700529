import { createHmac } from 'node:crypto';
import { deriveKey } from '@lectern/secrets';
import { scopedTokens } from './scoped-token.js';

/**
 * Run tokens: what a player sends (`Authorization: Bearer …`) with each events or retake call.
 *
 * An HS256 JWT signed with the server's RUN_TOKEN_KEY: `sub` = the completion id, `wid` = its workspace,
 * `aud` = "lectern:run", `exp` = issue time + RUN_TOKEN_TTL_SECONDS. Chosen over an opaque HMAC string because
 * the identity tokens are JWTs verified with the same maintained library (jose), the expiry and audience
 * checks are the library's and not ours, and a headless player can read `exp` to know when to open the run
 * again. Stateless: no row per token, any replica verifies it, and a token is good for its own run only.
 */
export interface RunTokenClaims {
  completionId: string;
  workspaceId: string;
}

export interface RunTokens {
  sign(claims: RunTokenClaims): Promise<string>;
  /** The claims of a valid token for `completionId`; 401 `unauthorized` saying why otherwise. */
  verify(token: string, completionId: string): Promise<RunTokenClaims>;
}

/** `key` is read at each call, so a process without the key configured fails only when a run is opened. */
export function runTokens(key: () => Uint8Array, ttlSeconds: number): RunTokens {
  const tokens = scopedTokens(key, {
    audience: 'lectern:run',
    refused: 'Run token refused',
    notOurs: 'it is not a valid run token of this service',
    expired: 'it has expired; open the run again',
  });
  return {
    async sign({ completionId, workspaceId }) {
      return (await tokens.sign(completionId, workspaceId, { ttlSeconds })).token;
    },
    async verify(token, completionId) {
      const { sub, wid } = await tokens.verify(token);
      if (sub !== completionId) throw tokens.refuse('it belongs to another run');
      return { completionId, workspaceId: wid };
    },
  };
}

/**
 * The player's keys from one 32-byte secret: RUN_TOKEN_KEY when configured, else derived from the
 * installation's secret-encryption key. Separate HKDF labels keep each use's key independent.
 */
export function derivePlayerKeys(
  material: Buffer,
  opts: { derived: boolean },
): {
  runTokenKey: Uint8Array;
  answerKeySecret: string;
} {
  const runTokenKey = opts.derived ? deriveKey(material, 'run tokens v1') : new Uint8Array(material);
  const answerKeySecret = createHmac('sha256', runTokenKey).update('learner item ids v1').digest('hex');
  return { runTokenKey, answerKeySecret };
}
