/**
 * Webhook signing secrets: generation. Encryption at rest is `encryptSecret` of @lectern/secrets.
 *
 * A signing secret is `whsec_` followed by the standard base64 of 32 random bytes (44 characters), so it is also a
 * valid Standard Webhooks secret (whose HMAC key is the base64-decoded part after the prefix). It is shown to the
 * user once at creation and stored only as `encryptSecret(secret, key)`.
 */
import { randomBytes } from 'node:crypto';

export const SECRET_PREFIX = 'whsec_';
const SECRET_BYTES = 32;

/** `whsec_` + base64 of 32 random bytes. */
export function generateSigningSecret(): string {
  return SECRET_PREFIX + randomBytes(SECRET_BYTES).toString('base64');
}
