import { z } from 'zod';
import { envBool } from '@lectern/config';

/**
 * The one outbound-request setting: may the service connect to loopback, private, link-local and metadata
 * addresses? Webhook deliveries, certificate logos, SCORM fonts and media all go through the same policy.
 *
 * ALLOW_PRIVATE_NETWORKS is its name; WEBHOOK_ALLOW_PRIVATE_NETWORKS, its name from when webhooks were the only
 * outbound requests, still works as an alias. Both set to the same value is fine; both set to different values
 * is a configuration error rather than one silently winning, because either reading could widen the policy
 * against what the operator meant.
 */
export const PrivateNetworkVars = z.object({
  ALLOW_PRIVATE_NETWORKS: envBool.optional(),
  WEBHOOK_ALLOW_PRIVATE_NETWORKS: envBool.optional(),
});
type PrivateNetworkRaw = z.output<typeof PrivateNetworkVars>;

/** The disagreement check, for pieces that read the two variables among their own (`WebhookEnv`). */
export function privateNetworksAgree(v: PrivateNetworkRaw, ctx: z.RefinementCtx): void {
  const { ALLOW_PRIVATE_NETWORKS: name, WEBHOOK_ALLOW_PRIVATE_NETWORKS: alias } = v;
  if (name !== undefined && alias !== undefined && name !== alias) {
    ctx.addIssue({
      code: 'custom',
      path: ['ALLOW_PRIVATE_NETWORKS'],
      message:
        `is ${name} but WEBHOOK_ALLOW_PRIVATE_NETWORKS (its former name) is ${alias}: ` +
        'set only ALLOW_PRIVATE_NETWORKS',
    });
  }
}

/** Replaces the two variables with the one resolved flag, `ALLOW_PRIVATE_NETWORKS` (default false). */
export function resolvePrivateNetworks<T extends PrivateNetworkRaw>(
  v: T,
): Omit<T, keyof PrivateNetworkRaw> & { ALLOW_PRIVATE_NETWORKS: boolean } {
  const { ALLOW_PRIVATE_NETWORKS: name, WEBHOOK_ALLOW_PRIVATE_NETWORKS: alias, ...rest } = v;
  return { ...rest, ALLOW_PRIVATE_NETWORKS: name ?? alias ?? false };
}

/** The configuration piece of a process that fetches from outside: `{ ALLOW_PRIVATE_NETWORKS: boolean }`. */
export const OutboundEnv =
  PrivateNetworkVars.superRefine(privateNetworksAgree).transform(resolvePrivateNetworks);
export type OutboundConfig = z.output<typeof OutboundEnv>;
