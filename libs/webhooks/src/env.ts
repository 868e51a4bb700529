import { z } from 'zod';
import { checkedBy, envBool } from '@lectern/config';
import { PrivateNetworkVars, privateNetworksAgree, resolvePrivateNetworks } from '@lectern/outbound';
import { InstallationSecretEnv } from '@lectern/secrets';
import { parseRetryDelays } from './retry.js';

/**
 * The webhook settings, read by the API (it encrypts signing secrets and checks endpoint URLs) and by the
 * webhook worker: the installation secret key, the retry schedule, and the outbound private-network flag
 * (ALLOW_PRIVATE_NETWORKS, or its alias WEBHOOK_ALLOW_PRIVATE_NETWORKS: `OutboundEnv`), resolved to one
 * `ALLOW_PRIVATE_NETWORKS`. Here rather than in libs/config because the checks are the webhook parsers themselves.
 */
export const WebhookEnv = z
  .object({
    ...InstallationSecretEnv.shape,
    WEBHOOK_RETRY_DELAYS: checkedBy(parseRetryDelays).optional(),
    ...PrivateNetworkVars.shape,
    // true: the webhook worker also runs an outbox relay (for API replicas started with API_OUTBOX_RELAY=false).
    WEBHOOK_WORKER_OUTBOX_RELAY: envBool.default(false),
  })
  .superRefine(privateNetworksAgree)
  .transform(resolvePrivateNetworks);
export type WebhookConfig = z.output<typeof WebhookEnv>;
