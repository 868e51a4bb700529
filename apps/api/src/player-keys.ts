import type { WebhookConfig } from '@lectern/webhooks';
import type { PlayerConfig } from './player-env.js';
import { decryptSecret, encryptSecret, parseEncryptionKey, webhookSecretKey } from '@lectern/webhooks';
import {
  derivePlayerKeys,
  runTokens,
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
  answerKeySecret: string;
}

/**
 * The player's keys, built on first use (a process without the secret-encryption key starts, and fails only
 * when an embed key or a run needs it). Embed key secrets are sealed with the installation's
 * secret-encryption key (WEBHOOK_SECRET_KEY, AES-256-GCM bound to the key id), as webhook signing secrets are;
 * run tokens are signed with RUN_TOKEN_KEY, or a key derived from that same secret when it is unset.
 */
export function lazyPlayerKeys(
  cfg: Pick<WebhookConfig, 'WEBHOOK_SECRET_KEY'> &
    Pick<PlayerConfig, 'RUN_TOKEN_KEY' | 'RUN_TOKEN_TTL_SECONDS'>,
): () => PlayerKeys {
  let keys: PlayerKeys | undefined;
  return () => {
    if (keys) return keys;
    const box = webhookSecretKey(cfg);
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
      answerKeySecret,
    };
    return keys;
  };
}
