import type { PlayerConfig } from './player-env.js';
import {
  decryptSecret,
  encryptSecret,
  installationSecretKey,
  parseEncryptionKey,
  type InstallationSecretConfig,
} from '@lectern/secrets';
import {
  derivePlayerKeys,
  runTokens,
  scopedTokens,
  trackingTokens,
  type RunTokens,
  type SecretBox,
  type TrackingTokens,
} from '@lectern/learner-runs';

export interface PlayerKeys {
  secrets: SecretBox;
  tokens: RunTokens;
  /** SCORM tracking tokens (`track=1` exports), signed with the run-token key under their own audience. */
  tracking: TrackingTokens;
  /** Authors' preview links (`POST /api/v1/courses/:id/preview`), signed with the run-token key too. */
  preview: PreviewTokens;
  answerKeySecret: string;
}

export interface PreviewClaims {
  courseId: string;
  workspaceId: string;
  /** The requested translation, or null for the course's own language. */
  lang: string | null;
}

export interface PreviewTokens {
  /** A token for `claims`, good for `PREVIEW_TTL_SECONDS`; `expiresAt` is its `exp`. */
  sign(claims: PreviewClaims): Promise<{ token: string; expiresAt: Date }>;
  /** The claims of a valid, unexpired preview token for `courseId`; 401 `unauthorized` saying why otherwise. */
  verify(token: string, courseId: string): Promise<PreviewClaims>;
}

/** How long a preview link works: long enough to open and read a draft, short enough that a leaked link dies. */
export const PREVIEW_TTL_SECONDS = 15 * 60;

/**
 * Preview tokens: an HS256 JWT with `sub` = the course, `wid` = its workspace, `lang`, its own audience (so it
 * is never a run or tracking token, nor they one), and a 15-minute `exp`. Stateless: any replica verifies it.
 */
export function previewTokens(key: () => Uint8Array, ttlSeconds = PREVIEW_TTL_SECONDS): PreviewTokens {
  const tokens = scopedTokens(key, {
    audience: 'lectern:preview',
    refused: 'Preview link refused',
    notOurs: 'it is not a valid preview link of this service',
    expired: 'it has expired; ask for a new one',
  });
  return {
    async sign({ courseId, workspaceId, lang }) {
      const { token, exp } = await tokens.sign(courseId, workspaceId, { ttlSeconds, claims: { lang } });
      return { token, expiresAt: new Date((exp ?? 0) * 1000) };
    },
    async verify(token, courseId) {
      const { sub, wid, payload } = await tokens.verify(token);
      if (sub !== courseId) throw tokens.refuse('it belongs to another course');
      return { courseId, workspaceId: wid, lang: typeof payload.lang === 'string' ? payload.lang : null };
    },
  };
}

/**
 * The player's keys, built on first use (a process without the secret-encryption key starts, and fails only
 * when an embed key or a run needs it). Embed key secrets are sealed with the installation's
 * secret-encryption key (WEBHOOK_SECRET_KEY, AES-256-GCM bound to the key id), as webhook signing secrets are;
 * run tokens are signed with RUN_TOKEN_KEY, or a key derived from that same secret when it is unset.
 */
export function lazyPlayerKeys(
  cfg: InstallationSecretConfig & Pick<PlayerConfig, 'RUN_TOKEN_KEY' | 'RUN_TOKEN_TTL_SECONDS'>,
): () => PlayerKeys {
  let keys: PlayerKeys | undefined;
  return () => {
    if (keys) return keys;
    const box = installationSecretKey(cfg);
    const { runTokenKey, answerKeySecret } = cfg.RUN_TOKEN_KEY
      ? derivePlayerKeys(parseEncryptionKey(cfg.RUN_TOKEN_KEY, 'RUN_TOKEN_KEY'), { derived: false })
      : derivePlayerKeys(box, { derived: true });
    keys = {
      secrets: {
        seal: (plain, context) => encryptSecret(plain, box, context),
        open: (stored, context) => decryptSecret(stored, box, context),
      },
      tokens: runTokens(() => runTokenKey, cfg.RUN_TOKEN_TTL_SECONDS),
      tracking: trackingTokens(() => runTokenKey),
      preview: previewTokens(() => runTokenKey),
      answerKeySecret,
    };
    return keys;
  };
}
