/**
 * Secrets at rest (webhook signing secrets, embed-key secrets): AES-256-GCM under the installation secret key.
 *
 * Stored format: `v1:<iv base64>:<tag base64>:<ciphertext base64>` with a random 12-byte IV and a 16-byte tag.
 */
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';

const KEY_BYTES = 32;
const IV_BYTES = 12;
const TAG_BYTES = 16;
const FORMAT_VERSION = 'v1';

function assertKey(key: Buffer): void {
  if (!Buffer.isBuffer(key) || key.length !== KEY_BYTES) {
    throw new Error(`secret encryption key must be ${KEY_BYTES} bytes`);
  }
}

/**
 * Encrypts a signing secret for storage. `context`, when given, is bound as additional authenticated data (for
 * example the endpoint id) and must be passed again to `decryptSecret`.
 */
export function encryptSecret(plain: string, key: Buffer, context?: string): string {
  assertKey(key);
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key, iv, { authTagLength: TAG_BYTES });
  if (context !== undefined) cipher.setAAD(Buffer.from(context, 'utf8'));
  const ct = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
  const tag = cipher.getAuthTag();
  return [FORMAT_VERSION, iv.toString('base64'), tag.toString('base64'), ct.toString('base64')].join(':');
}

const B64 = /^[A-Za-z0-9+/]*={0,2}$/;

function decodeB64(part: string): Buffer | null {
  if (!B64.test(part) || part.length % 4 !== 0) return null;
  return Buffer.from(part, 'base64');
}

/**
 * Decrypts a value produced by `encryptSecret`. Throws on a malformed value, a wrong key, a wrong `context` or any
 * tampering (GCM authentication failure). The messages never include key or plaintext material.
 */
export function decryptSecret(stored: string, key: Buffer, context?: string): string {
  assertKey(key);
  const parts = typeof stored === 'string' ? stored.split(':') : [];
  if (parts.length !== 4 || parts[0] !== FORMAT_VERSION) {
    throw new Error('stored secret is malformed (expected v1:<iv>:<tag>:<ciphertext>)');
  }
  const iv = decodeB64(parts[1]);
  const tag = decodeB64(parts[2]);
  const ct = decodeB64(parts[3]);
  if (!iv || iv.length !== IV_BYTES || !tag || tag.length !== TAG_BYTES || !ct) {
    throw new Error('stored secret is malformed (bad iv, tag or ciphertext encoding)');
  }
  const decipher = createDecipheriv('aes-256-gcm', key, iv, { authTagLength: TAG_BYTES });
  decipher.setAuthTag(tag);
  if (context !== undefined) decipher.setAAD(Buffer.from(context, 'utf8'));
  try {
    return Buffer.concat([decipher.update(ct), decipher.final()]).toString('utf8');
  } catch {
    throw new Error('stored secret could not be decrypted (wrong key or tampered value)');
  }
}

/**
 * Parses the 32-byte encryption key from configuration: 64 hex characters, or base64 (standard or URL-safe,
 * padding optional) of exactly 32 bytes. `name` is used in the error message (e.g. the environment variable).
 */
export function parseEncryptionKey(s: string, name = 'secret encryption key'): Buffer {
  const value = typeof s === 'string' ? s.trim() : '';
  if (value === '') throw new Error(`${name} is missing: expected 64 hex characters or base64 of 32 bytes`);
  if (/^[0-9a-fA-F]{64}$/.test(value)) return Buffer.from(value, 'hex');
  if (/^[A-Za-z0-9+/_-]+={0,2}$/.test(value)) {
    const normalized = value.replace(/-/g, '+').replace(/_/g, '/').replace(/=+$/, '');
    if (normalized.length % 4 !== 1) {
      const key = Buffer.from(normalized, 'base64');
      if (key.length === KEY_BYTES) return key;
      throw new Error(
        `${name} must be 32 bytes: 64 hex characters or base64 of 32 bytes (got base64 of ${key.length} bytes)`,
      );
    }
  }
  throw new Error(`${name} must be 64 hex characters or base64 of 32 bytes (value is neither)`);
}

/**
 * A 32-byte key for one use, derived from the installation secret key: HKDF-SHA256 with the salt `lectern` and
 * the use's own label (`run tokens v1`, `credential signing v1`, …), so every use has an independent key and
 * none needs a setting of its own. The labels are part of stored data (tokens, credentials): never change one.
 */
export function deriveKey(material: Buffer, label: string): Uint8Array {
  return new Uint8Array(hkdfSync('sha256', material, 'lectern', label, KEY_BYTES));
}
