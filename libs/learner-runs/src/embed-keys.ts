import { randomBytes } from 'node:crypto';
import { decodeProtectedHeader, errors, jwtVerify } from 'jose';
import { EmbedKeySchema, newId, boundQuery, type EmbedKey, type EntityManager } from '@lectern/db';
import { AppError, notFound } from '@lectern/errors';
import type { EmbedKeyCreatedDto, EmbedKeyDto } from '@lectern/contracts';
import type { SecretBox } from './ports.js';

/**
 * Embed keys: the secrets a customer's backend signs learner identity tokens with. Several may be live at once
 * (rotation without downtime); a deleted key is revoked (kept with `revoked_at`, so a refused token can say so)
 * and refused from that moment, on every replica, because every verification reads the key row.
 */

export const EMBED_SECRET_PREFIX = 'esk_';

export function embedKeyDto(row: Pick<EmbedKey, 'id' | 'name' | 'createdAt'>): EmbedKeyDto {
  return { id: row.id, name: row.name, createdAt: row.createdAt.toISOString() };
}

export async function createEmbedKey(
  em: EntityManager,
  box: SecretBox,
  workspaceId: string,
  name: string,
): Promise<EmbedKeyCreatedDto> {
  const id = newId('ek');
  // 32 random bytes: the HS256 key is the UTF-8 bytes of the whole string (RFC 7518 asks for ≥ 256 bits).
  const secret = EMBED_SECRET_PREFIX + randomBytes(32).toString('base64url');
  const row = em.create(EmbedKeySchema, {
    id,
    workspaceId,
    name,
    secretEncrypted: box.seal(secret, id),
    createdAt: new Date(),
    revokedAt: null,
  });
  await em.flush();
  return { ...embedKeyDto(row), secret };
}

/** Live keys, newest first, without secrets. */
export async function listEmbedKeys(em: EntityManager, workspaceId: string): Promise<EmbedKeyDto[]> {
  const rows = await em.find(
    EmbedKeySchema,
    { workspaceId, revokedAt: null },
    { orderBy: { createdAt: 'desc', id: 'desc' } },
  );
  return rows.map(embedKeyDto);
}

/** Revokes a live key; an unknown, another workspace's or already deleted key is a 404. */
export async function revokeEmbedKey(em: EntityManager, workspaceId: string, id: string): Promise<void> {
  const rows = await boundQuery(
    em,
    'update embed_keys set revoked_at = now() where id = ? and workspace_id = ? and revoked_at is null returning id',
    [id, workspaceId],
  );
  if (rows.length === 0) throw notFound('Embed key');
}

/** The learner a verified identity token names. */
export interface VerifiedLearner {
  externalId: string;
  name?: string;
  email?: string;
}

/** Identity tokens may live at most this long ahead (SPEC-silent; issue 9). */
export const MAX_IDENTITY_LIFETIME_SECONDS = 30 * 24 * 3600;
/** Tolerated clock difference between the customer's servers and ours. */
const CLOCK_TOLERANCE_SECONDS = 30;

const refuse = (why: string) => new AppError('unauthorized', `Identity token refused: ${why}`);

/**
 * Verifies an identity token for a course of `workspaceId`: HS256 only (`none` and every other alg refused
 * before any key is looked up), `kid` naming a live embed key of that workspace, a valid signature, `sub` and
 * `exp` present, not expired, `exp` at most 30 days ahead, and `courseId`, when present, naming this course.
 * Any failure is a 401 saying which; a bad token never becomes an anonymous run.
 */
export async function verifyIdentityToken(
  em: EntityManager,
  box: SecretBox,
  token: string,
  course: { id: string; workspaceId: string },
  now = new Date(),
): Promise<VerifiedLearner> {
  let header: { alg?: unknown; kid?: unknown };
  try {
    header = decodeProtectedHeader(token);
  } catch {
    throw refuse('it is not a JWT (expected three base64url parts: header.payload.signature)');
  }
  if (header.alg !== 'HS256') throw refuse(`alg must be HS256 (got ${JSON.stringify(header.alg ?? null)})`);
  if (typeof header.kid !== 'string' || header.kid === '')
    throw refuse('the header has no kid; set it to the id of the embed key that signed the token');
  const kid = header.kid;
  const [key] = await boundQuery<{
    id: string;
    workspace_id: string;
    secret_encrypted: string;
    revoked_at: Date | null;
  }>(em, 'select id, workspace_id, secret_encrypted, revoked_at from embed_keys where id = ?', [kid]);
  // Another workspace's key reads as unknown: whether an id exists elsewhere is not this caller's business.
  if (!key || key.workspace_id !== course.workspaceId)
    throw refuse(`kid ${JSON.stringify(kid)} is not an embed key of this course's workspace`);
  if (key.revoked_at) throw refuse(`embed key ${kid} was deleted; sign with a live key`);
  const secret = new TextEncoder().encode(box.open(key.secret_encrypted, key.id));

  let payload: Record<string, unknown>;
  try {
    ({ payload } = await jwtVerify(token, secret, {
      algorithms: ['HS256'],
      requiredClaims: ['sub', 'exp'],
      clockTolerance: CLOCK_TOLERANCE_SECONDS,
      currentDate: now,
    }));
  } catch (err) {
    if (err instanceof errors.JWSSignatureVerificationFailed)
      throw refuse(`the signature does not verify with embed key ${kid}`);
    if (err instanceof errors.JWTExpired) throw refuse('it has expired (exp is in the past)');
    if (err instanceof errors.JWTClaimValidationFailed) {
      if (err.reason === 'missing') throw refuse(`the ${err.claim} claim is missing`);
      throw refuse(`the ${err.claim} claim is invalid (${err.message})`);
    }
    throw refuse('it is not a well-formed JWT');
  }
  const exp = payload.exp as number;
  if (exp - now.getTime() / 1000 > MAX_IDENTITY_LIFETIME_SECONDS + CLOCK_TOLERANCE_SECONDS)
    throw refuse('exp is more than 30 days ahead; sign short-lived tokens');
  const sub = payload.sub;
  if (typeof sub !== 'string' || sub.trim() === '' || sub.length > 255)
    throw refuse('sub must be the learner id: a non-empty string of at most 255 characters');
  if (payload.courseId !== undefined && payload.courseId !== course.id)
    throw refuse('it is valid for another course only (courseId claim)');
  const learner: VerifiedLearner = { externalId: sub.trim() };
  for (const claim of ['name', 'email'] as const) {
    const v = payload[claim];
    if (v === undefined || v === null) continue;
    if (typeof v !== 'string' || v.length > (claim === 'email' ? 320 : 255))
      throw refuse(
        `the ${claim} claim must be a string of at most ${claim === 'email' ? 320 : 255} characters`,
      );
    if (v !== '') learner[claim] = v;
  }
  return learner;
}
