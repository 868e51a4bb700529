/**
 * Encrypts embed key secrets at rest and opens them again. `context` (the key id) is bound as additional
 * authenticated data, so a stored value moved to another row does not decrypt. The app builds it from the
 * installation's secret-encryption key (the same AES-256-GCM scheme as webhook signing secrets).
 */
export interface SecretBox {
  seal(plain: string, context: string): string;
  open(stored: string, context: string): string;
}
