import type { Context } from 'koa';
import type { ApiRouter } from '../http/router.js';
import type { RouteDeps } from '../deps.js';
import { ErrorBody } from '@lectern/contracts';
import {
  VC_JWT_MEDIA_TYPE,
  envelopedCredential,
  findBySerial,
  issuerProfile,
  issuerWorkspace,
  lazyCredentialKeys,
  openBadgeCredential,
  signCredential,
  verificationMethodId,
  verifyLookupWait,
  type IssuedCertificateRow,
} from '@lectern/certificates';
import { z } from 'zod';

const EnvelopedCredential = z
  .object({
    '@context': z.string(),
    id: z
      .string()
      .regex(/^data:application\/vc\+jwt,[\w-]+\.[\w-]+\.[\w-]+$/)
      .meta({
        description: 'The credential secured as a compact JWS (EdDSA, typ vc+jwt), as a data: URL',
      }),
    type: z.literal('EnvelopedVerifiableCredential'),
  })
  .meta({ id: 'EnvelopedVerifiableCredential' });

const VerificationMethod = z.object({
  id: z.string(),
  type: z.literal('JsonWebKey'),
  controller: z.string(),
  publicKeyJwk: z.object({
    kty: z.literal('OKP'),
    crv: z.literal('Ed25519'),
    x: z.string(),
    kid: z.string(),
  }),
});

const IssuerProfile = z
  .object({
    '@context': z.array(z.string()),
    id: z.string(),
    type: z.array(z.string()),
    name: z.string(),
    url: z.string(),
    verificationMethod: z.array(VerificationMethod),
    assertionMethod: z.array(z.string()),
  })
  .meta({ id: 'IssuerProfile' });

const lookupResponses = {
  404: { description: 'not_found: no certificate has this serial', schema: ErrorBody },
  429: { description: 'rate_limited: too many lookups from this address (Retry-After)', schema: ErrorBody },
};

/**
 * The Open Badges 3.0 credential of an issued certificate and the issuer profiles that publish its keys
 * (docs/certificates.md "Open Badges credential"). Public like /verify/:serial, under the same per-address
 * lookup budget: a credential lookup is a serial lookup.
 */
export function credentialRoutes(pub: ApiRouter, deps: Pick<RouteDeps, 'orm' | 'cfg' | 'log'>) {
  const keys = lazyCredentialKeys(deps.cfg);
  const publicUrl = deps.cfg.PUBLIC_URL;

  /** The certificate behind `:serial` after one lookup of the address's budget; null when answered already. */
  async function lookUp(ctx: Context): Promise<IssuedCertificateRow | null> {
    ctx.set('Cache-Control', 'no-store');
    const em = deps.orm.em.fork();
    const wait = await verifyLookupWait(em, ctx.ip, deps.cfg.VERIFY_LOOKUPS_PER_MINUTE);
    if (wait > 0) {
      ctx.status = 429;
      ctx.set('Retry-After', String(wait));
      ctx.body = {
        error: 'rate_limited',
        message: `Too many certificate lookups from this address; try again in ${wait} s`,
      };
      return null;
    }
    const row = await findBySerial(em, null, ctx.params.serial);
    if (!row) {
      ctx.status = 404;
      ctx.body = { error: 'not_found', message: 'No certificate has this serial.' };
      return null;
    }
    return row;
  }

  async function jwsOf(row: IssuedCertificateRow): Promise<string> {
    const k = await keys();
    return signCredential(
      openBadgeCredential(row, publicUrl),
      verificationMethodId(publicUrl, row.workspace_id, k.signing),
      k.signing.privateKey,
    );
  }

  pub.route(
    {
      method: 'get',
      path: '/verify/:serial/credential.json',
      operationId: 'getCertificateCredential',
      summary: 'The certificate as an Open Badges 3.0 credential (JSON)',
      description:
        'No key needed; any spelling of the serial; same per-address lookup limit as /verify/:serial. ' +
        'A W3C Verifiable Credential 2.0 `EnvelopedVerifiableCredential`: `id` is `data:application/vc+jwt,<JWS>`, ' +
        'the OpenBadgeCredential signed with EdDSA (Ed25519); the JWS `kid` is a verification method of the issuer profile.',
      tags: ['Verification'],
      auth: 'public',
      responses: {
        200: { description: 'The enveloped credential', schema: EnvelopedCredential },
        ...lookupResponses,
      },
    },
    async (ctx) => {
      const row = await lookUp(ctx);
      if (!row) return;
      ctx.body = envelopedCredential(await jwsOf(row));
    },
  );

  pub.route(
    {
      method: 'get',
      path: '/verify/:serial/credential.jwt',
      operationId: 'getCertificateCredentialJwt',
      summary: 'The certificate as an Open Badges 3.0 credential (compact JWS, application/vc+jwt)',
      description:
        'The same signed credential as credential.json, as the bare compact JWS a wallet or verifier takes. ' +
        'Same serial spelling rules and lookup limit.',
      tags: ['Verification'],
      auth: 'public',
      responses: {
        200: { description: 'The credential as a compact JWS', contentType: VC_JWT_MEDIA_TYPE },
        ...lookupResponses,
      },
    },
    async (ctx) => {
      const row = await lookUp(ctx);
      if (!row) return;
      ctx.type = VC_JWT_MEDIA_TYPE;
      ctx.body = await jwsOf(row);
    },
  );

  pub.route(
    {
      method: 'get',
      path: '/issuers/:workspaceId',
      operationId: 'getIssuerProfile',
      summary: 'An issuer profile: the workspace name and the public keys of its credentials',
      description:
        'The Open Badges 3.0 `Profile` named as `issuer.id` in every credential of the workspace. ' +
        '`verificationMethod` lists the current signing key and the retired ones (Ed25519 JWKs), ' +
        'each with the id a credential JWS names in its `kid`.',
      tags: ['Verification'],
      auth: 'public',
      responses: {
        200: { description: 'The issuer profile', schema: IssuerProfile },
        404: { description: 'not_found: no such issuer', schema: ErrorBody },
      },
    },
    async (ctx) => {
      const ws = await issuerWorkspace(deps.orm.em.fork(), ctx.params.workspaceId);
      if (!ws) {
        ctx.status = 404;
        ctx.body = { error: 'not_found', message: 'No issuer has this id.' };
        return;
      }
      ctx.set('Cache-Control', 'public, max-age=300');
      ctx.body = issuerProfile(publicUrl, ws, await keys());
    },
  );
}
