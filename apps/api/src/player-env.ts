import { z } from 'zod';
import { checkedBy } from '@lectern/config';
import { parseEncryptionKey } from '@lectern/secrets';

/**
 * The player (/embed, /player/v1). RUN_TOKEN_KEY signs run tokens (HS256) and keys the learner-facing ids of
 * ranking and match items; unset, it is derived from WEBHOOK_SECRET_KEY (HKDF), so one installation secret
 * covers both. The limits are per client address (run opens and embed pages) and per run (event batches and
 * retakes), separate from the API keys' budget (docs/player-api.md).
 */
export const PlayerEnv = z.object({
  RUN_TOKEN_KEY: checkedBy((v) => parseEncryptionKey(v, 'a 32-byte key')).optional(),
  RUN_TOKEN_TTL_SECONDS: z.coerce
    .number()
    .int()
    .min(60)
    .max(7 * 24 * 3600)
    .default(12 * 3600),
  PLAYER_OPENS_PER_MINUTE_PER_ADDRESS: z.coerce.number().int().min(0).max(1_000_000_000).default(3000),
  /** Where the built player bundle is (dist/player by default, written by `npm run build`). */
  PLAYER_ASSETS_DIR: z.string().min(1).optional(),
  PLAYER_REQUESTS_PER_MINUTE_PER_RUN: z.coerce.number().int().min(0).max(1_000_000_000).default(600),
  /**
   * Anonymous run opens only (signed and tracked opens are not counted here): per client address, and per
   * anonymousId of one course (a browser reopening a course a few times a minute at most).
   */
  PLAYER_ANONYMOUS_OPENS_PER_MINUTE_PER_ADDRESS: z.coerce
    .number()
    .int()
    .min(0)
    .max(1_000_000_000)
    .default(60),
  PLAYER_ANONYMOUS_OPENS_PER_MINUTE_PER_ID: z.coerce.number().int().min(0).max(1_000_000_000).default(10),
});
export type PlayerConfig = z.output<typeof PlayerEnv>;
