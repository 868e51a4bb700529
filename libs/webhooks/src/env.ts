import { z } from 'zod';
import { checkedBy, envBool } from '@lectern/config';
import { parseEncryptionKey } from './secrets.js';
import { parseRetryDelays } from './retry.js';

/**
 * The webhook settings, read by the API (it encrypts signing secrets and checks endpoint URLs) and by the
 * webhook worker. Here rather than in libs/config because the checks are the webhook parsers themselves.
 */
export const WebhookEnv = z.object({
  WEBHOOK_SECRET_KEY: checkedBy((v) => parseEncryptionKey(v, 'a 32-byte key')).optional(),
  WEBHOOK_RETRY_DELAYS: checkedBy(parseRetryDelays).optional(),
  WEBHOOK_ALLOW_PRIVATE_NETWORKS: envBool.default(false),
  // true: the webhook worker also runs an outbox relay (for API replicas started with API_OUTBOX_RELAY=false).
  WEBHOOK_WORKER_OUTBOX_RELAY: envBool.default(false),
});
export type WebhookConfig = z.output<typeof WebhookEnv>;
