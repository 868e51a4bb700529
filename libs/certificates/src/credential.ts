import { createPublicKey, type KeyObject } from 'node:crypto';
import { CompactSign, calculateJwkThumbprint, exportJWK, type JWK } from 'jose';
import {
  ed25519FromSeed,
  parseCredentialSigningKey,
  parseRetiredCredentialKeys,
  type CertificateConfig,
} from '@lectern/config';
import { ASSERTED_IDENTITY_NOTE, iso, resolveCertificateTokens } from '@lectern/contracts';
import { boundQuery, type EntityManager } from '@lectern/db';
import { deriveKey, installationSecretKey, type InstallationSecretConfig } from '@lectern/secrets';
import { reportedScore, scoreOf, type IssuedCertificateRow } from './issue.js';
import { verifyUrl } from './paths.js';

/**
 * Open Badges 3.0 credentials of issued certificates (docs/certificates.md "Open Badges credential"): a W3C
 * Verifiable Credential (data model 2.0) secured as a JWT (VC-JOSE-COSE, `application/vc+jwt`, EdDSA over
 * Ed25519), and the issuer profiles that publish the public keys.
 */

export const VC_CONTEXT = 'https://www.w3.org/ns/credentials/v2';
export const OB_CONTEXT = 'https://purl.imsglobal.org/spec/ob/v3p0/context-3.0.3.json';
export const VC_JWT_MEDIA_TYPE = 'application/vc+jwt';

/** One published Ed25519 public key: its RFC 7638 thumbprint names it in every issuer profile. */
export interface PublishedKey {
  thumbprint: string;
  jwk: JWK;
}

export interface CredentialKeys {
  /** The current key: signs every credential served. */
  signing: PublishedKey & { privateKey: KeyObject };
  /** The current key first, then the retired ones (verification only). */
  published: PublishedKey[];
}

async function published(publicKey: KeyObject): Promise<PublishedKey> {
  const { kty, crv, x } = await exportJWK(publicKey);
  const jwk: JWK = { kty, crv, x };
  return { thumbprint: await calculateJwkThumbprint(jwk, 'sha256'), jwk };
}

/**
 * The credential keys: CREDENTIAL_SIGNING_KEY, or an Ed25519 seed derived from the installation secret
 * (WEBHOOK_SECRET_KEY, HKDF-SHA256 with its own label, as run tokens are) — the same key on every replica and
 * every restart with no extra setting. CREDENTIAL_RETIRED_KEYS stay published for verification.
 */
export async function credentialKeys(
  cfg: Pick<CertificateConfig, 'CREDENTIAL_SIGNING_KEY' | 'CREDENTIAL_RETIRED_KEYS'> &
    InstallationSecretConfig,
): Promise<CredentialKeys> {
  const privateKey = cfg.CREDENTIAL_SIGNING_KEY
    ? parseCredentialSigningKey(cfg.CREDENTIAL_SIGNING_KEY)
    : ed25519FromSeed(deriveKey(installationSecretKey(cfg), 'credential signing v1'));
  const signing = { ...(await published(createPublicKey(privateKey))), privateKey };
  const retired = cfg.CREDENTIAL_RETIRED_KEYS ? parseRetiredCredentialKeys(cfg.CREDENTIAL_RETIRED_KEYS) : [];
  const all = [signing, ...(await Promise.all(retired.map(published)))];
  // A retired key equal to the current one is listed once.
  const seen = new Set<string>();
  return { signing, published: all.filter((k) => !seen.has(k.thumbprint) && seen.add(k.thumbprint)) };
}

/** Built on first use and kept: a process that never serves a credential never needs the key. */
export function lazyCredentialKeys(cfg: Parameters<typeof credentialKeys>[0]): () => Promise<CredentialKeys> {
  let keys: Promise<CredentialKeys> | undefined;
  return () => {
    keys ??= credentialKeys(cfg).catch((err: unknown) => {
      keys = undefined;
      throw err;
    });
    return keys;
  };
}

/** The issuer profile of a workspace: `PUBLIC_URL/issuers/<workspaceId>`. */
export function issuerUrl(publicUrl: string, workspaceId: string): string {
  return `${publicUrl.replace(/\/+$/, '')}/issuers/${workspaceId}`;
}

/** The verification method id of a key in an issuer profile: the JOSE `kid` of what it signed. */
export function verificationMethodId(publicUrl: string, workspaceId: string, key: PublishedKey): string {
  return `${issuerUrl(publicUrl, workspaceId)}#${key.thumbprint}`;
}

/**
 * The OB 3.0 `OpenBadgeCredential` of a certificate, from the facts recorded at issue only (so it never
 * changes): `id` is the verification page, the issuer the workspace's profile under the name printed on the
 * certificate, `validFrom` the issue time, and the subject the learner by name — the name printed on the
 * certificate and shown on the public page, as an `IdentityObject` of type `name` (OB 3.0's way; an
 * AchievementSubject has no name property). No email, no identity id: see docs/certificates.md.
 * The score is a `result` only when the certificate prints it. A certificate of an LMS-asserted learner
 * (`source: scorm`) says so in the credential's `description`, as the PDF and the page do.
 */
export function openBadgeCredential(row: IssuedCertificateRow, publicUrl: string): Record<string, unknown> {
  const issuer = issuerUrl(publicUrl, row.workspace_id);
  const achievementId = `${issuer}#course-${row.course_id}`;
  const score = reportedScore(scoreOf(row));
  const printsScore = resolveCertificateTokens(row.design).showScore && scoreOf(row) !== null;
  const scoreId = `${achievementId}-score`;
  return {
    '@context': [VC_CONTEXT, OB_CONTEXT],
    id: verifyUrl(publicUrl, row.serial),
    type: ['VerifiableCredential', 'OpenBadgeCredential'],
    name: row.course_title,
    ...(row.source === 'scorm' ? { description: ASSERTED_IDENTITY_NOTE } : {}),
    issuer: { id: issuer, type: ['Profile'], name: row.issuer_name },
    validFrom: iso(row.issued_at)!,
    credentialSubject: {
      type: ['AchievementSubject'],
      identifier: [
        { type: 'IdentityObject', identityHash: row.learner_name, identityType: 'name', hashed: false },
      ],
      achievement: {
        id: achievementId,
        type: ['Achievement'],
        achievementType: 'Course',
        name: row.course_title,
        description: `Completion of the course “${row.course_title}”, certificate ${row.serial}.`,
        criteria: {
          narrative: `Finish the course “${row.course_title}” and reach its pass mark, when it has one.`,
        },
        inLanguage: row.locale,
        ...(printsScore
          ? {
              resultDescription: [
                { id: scoreId, type: ['ResultDescription'], name: 'Score', resultType: 'Percent' },
              ],
            }
          : {}),
      },
      ...(printsScore
        ? { result: [{ type: ['Result'], resultDescription: scoreId, value: String(score) }] }
        : {}),
    },
  };
}

/**
 * The credential secured as a compact JWS (VC-JOSE-COSE): the payload is the credential itself, the header
 * `{alg: EdDSA, typ: vc+jwt, cty: vc, kid: <issuer profile URL>#<thumbprint>}`. Ed25519 signatures are
 * deterministic (RFC 8032), and the credential depends only on the stored row, so signing on every request
 * serves the same bytes every time, until the key changes.
 */
export async function signCredential(
  credential: Record<string, unknown>,
  kid: string,
  key: KeyObject,
): Promise<string> {
  return new CompactSign(new TextEncoder().encode(JSON.stringify(credential)))
    .setProtectedHeader({ alg: 'EdDSA', typ: 'vc+jwt', cty: 'vc', kid })
    .sign(key);
}

/** VC 2.0's JSON form of a credential secured by an envelope: the JWS as a `data:` URL. */
export function envelopedCredential(jws: string): Record<string, unknown> {
  return {
    '@context': VC_CONTEXT,
    id: `data:${VC_JWT_MEDIA_TYPE},${jws}`,
    type: 'EnvelopedVerifiableCredential',
  };
}

/**
 * The OB 3.0 issuer `Profile` served at the issuer URL: the workspace's current name and every published key
 * as a `JsonWebKey` verification method, so a verifier resolves the JWS `kid` with one HTTP GET.
 */
export function issuerProfile(
  publicUrl: string,
  workspace: { id: string; name: string },
  keys: CredentialKeys,
): Record<string, unknown> {
  const id = issuerUrl(publicUrl, workspace.id);
  const methods = keys.published.map((k) => ({
    id: verificationMethodId(publicUrl, workspace.id, k),
    type: 'JsonWebKey',
    controller: id,
    publicKeyJwk: { ...k.jwk, kid: k.thumbprint },
  }));
  return {
    '@context': [VC_CONTEXT, OB_CONTEXT],
    id,
    type: ['Profile'],
    name: workspace.name,
    url: publicUrl.replace(/\/+$/, ''),
    verificationMethod: methods,
    assertionMethod: methods.map((m) => m.id),
  };
}

/** The workspace behind an issuer profile, or null. */
export async function issuerWorkspace(
  em: EntityManager,
  workspaceId: string,
): Promise<{ id: string; name: string } | null> {
  const [row] = await boundQuery<{ id: string; name: string }>(
    em,
    'select id, name from workspaces where id = ?',
    [workspaceId],
  );
  return row ?? null;
}
