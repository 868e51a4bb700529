import { generateKeyPairSync } from 'node:crypto';
import { expect } from 'chai';
import { z } from 'zod';
// The verifier: @noble/curves' Ed25519 over the JWS signing input — not jose, which signs.
import { ed25519 } from '@noble/curves/ed25519.js';
import { startTestApp, type TestApp } from '../support/context.js';
import { call } from '../support/http.js';
import { verificationFixture } from '../support/certificates.js';
import { CertificateEnv, ConfigError, parseEnv } from '@lectern/config';
import type { IssueOutcome } from '@lectern/certificates';

const PUBLIC_URL = 'http://lectern.test'; // the test apps' PUBLIC_URL
const b64url = (s: string) => Buffer.from(s, 'base64url');
const json = (s: string) => JSON.parse(b64url(s).toString('utf8')) as Record<string, unknown>;

/** The shape OB 3.0 (on VC data model 2.0) requires of an OpenBadgeCredential, checked independently of the code. */
const OpenBadgeCredential = z.object({
  '@context': z
    .array(z.string())
    .refine((c) => c[0] === 'https://www.w3.org/ns/credentials/v2', 'VC 2.0 context first')
    .refine(
      (c) =>
        c.some((u) => /^https:\/\/purl\.imsglobal\.org\/spec\/ob\/v3p0\/context-3\.0\.\d+\.json$/.test(u)),
      'the OB 3.0 context',
    ),
  id: z.string().url(),
  type: z
    .array(z.string())
    .refine((t) => t.includes('VerifiableCredential') && t.includes('OpenBadgeCredential')),
  issuer: z.object({
    id: z.string().url(),
    type: z.array(z.string()).refine((t) => t.includes('Profile')),
    name: z.string().min(1),
  }),
  validFrom: z.string().datetime({ offset: true }),
  credentialSubject: z.object({
    type: z.array(z.string()).refine((t) => t.includes('AchievementSubject')),
    identifier: z
      .array(
        z.object({
          type: z.literal('IdentityObject'),
          identityHash: z.string(),
          identityType: z.string(),
          hashed: z.boolean(),
        }),
      )
      .optional(),
    achievement: z.object({
      id: z.string().url(),
      type: z.array(z.string()).refine((t) => t.includes('Achievement')),
      name: z.string().min(1),
      description: z.string().min(1),
      criteria: z.union([z.object({ id: z.string() }), z.object({ narrative: z.string().min(1) })]),
    }),
  }),
});

interface Resolved {
  header: Record<string, unknown>;
  payload: Record<string, unknown>;
  valid: boolean;
}

describe('certificates: the Open Badges 3.0 credential /verify/:serial/credential.json', function () {
  this.timeout(60_000);
  let app: TestApp;
  let plain: IssueOutcome;
  let scored: IssueOutcome;
  let wsId: string;

  /**
   * An independent verifier: splits the compact JWS, takes the key only from the issuer profile the `kid`
   * names — fetched over HTTP from the service (PUBLIC_URL's origin mapped to the test server, as DNS would) —
   * and checks the Ed25519 signature with @noble/curves.
   */
  async function verifyJws(jws: string, base = app.url): Promise<Resolved> {
    const parts = jws.split('.');
    expect(parts).to.have.length(3);
    const [h, p, s] = parts as [string, string, string];
    const header = json(h);
    const payload = json(p);
    expect(header).to.include({ alg: 'EdDSA', typ: 'vc+jwt' });
    const kid = String(header.kid);
    expect(kid.startsWith(`${PUBLIC_URL}/issuers/`), kid).to.equal(true);
    const profileUrl = kid.split('#')[0]!;
    // The key belongs to the credential's issuer.
    expect((payload.issuer as { id: string }).id).to.equal(profileUrl);
    const res = await call<Record<string, unknown>>(base, 'GET', profileUrl.slice(PUBLIC_URL.length));
    expect(res.status).to.equal(200);
    expect(res.body.id).to.equal(profileUrl);
    const method = (
      res.body.verificationMethod as { id: string; publicKeyJwk: { kty: string; crv: string; x: string } }[]
    ).find((m) => m.id === kid);
    if (!method) return { header, payload, valid: false };
    expect(method.publicKeyJwk).to.include({ kty: 'OKP', crv: 'Ed25519' });
    const valid = ed25519.verify(
      new Uint8Array(b64url(s)),
      new TextEncoder().encode(`${h}.${p}`),
      new Uint8Array(b64url(method.publicKeyJwk.x)),
    );
    return { header, payload, valid };
  }

  const jwsOf = (body: Record<string, unknown>): string => {
    expect(body.type).to.equal('EnvelopedVerifiableCredential');
    expect(body['@context']).to.equal('https://www.w3.org/ns/credentials/v2');
    const id = String(body.id);
    expect(id.startsWith('data:application/vc+jwt,')).to.equal(true);
    return id.slice('data:application/vc+jwt,'.length);
  };

  let fixture: Awaited<ReturnType<typeof verificationFixture>>;
  before(async () => {
    fixture = await verificationFixture('Grace Hopper');
    ({ app, plain, scored } = fixture);
    wsId = fixture.workspaceId;
  });
  after(async () => fixture?.close());

  it('serves a signed OpenBadgeCredential that an independent verifier accepts with the published key', async () => {
    const serial = plain.certificate.serial;
    const res = await call(app.url, 'GET', `/verify/${serial}/credential.json`);
    expect(res.status).to.equal(200);
    expect(res.headers.get('content-type')).to.match(/^application\/json/);
    const { valid, payload, header } = await verifyJws(jwsOf(res.body));
    expect(valid).to.equal(true);
    expect(header.cty).to.equal('vc');

    const shape = OpenBadgeCredential.safeParse(payload);
    expect(shape.success, JSON.stringify(shape.error?.issues)).to.equal(true);
    const vc = shape.data!;
    expect(vc.id).to.equal(`${PUBLIC_URL}/verify/${serial}`);
    expect(vc.issuer).to.deep.equal({
      id: `${PUBLIC_URL}/issuers/${wsId}`,
      type: ['Profile'],
      name: 'Acme Academy',
    });
    expect(new Date(vc.validFrom).getTime()).to.equal(new Date(plain.certificate.issued_at).getTime());
    expect(vc.credentialSubject.achievement.name).to.equal('Fire safety at work');
    // The learner by the name printed on the certificate; no email, no internal or external id.
    expect(vc.credentialSubject.identifier).to.deep.equal([
      { type: 'IdentityObject', identityHash: 'Grace Hopper', identityType: 'name', hashed: false },
    ]);
    const text = JSON.stringify(payload);
    expect(text).to.not.include('@example.test');
    expect(text).to.not.include(plain.certificate.identity_id);
    expect(text).to.not.include(plain.certificate.identity_external_id);
    // The default design prints no score, so the credential carries none.
    expect(vc.credentialSubject).to.not.have.property('result');
  });

  it('the compact JWS at credential.jwt (application/vc+jwt) is the same credential; signing is deterministic', async () => {
    const serial = plain.certificate.serial;
    const env = await call(app.url, 'GET', `/verify/${serial}/credential.json`);
    const jwt = await call(app.url, 'GET', `/verify/${serial}/credential.jwt`);
    expect(jwt.status).to.equal(200);
    expect(jwt.headers.get('content-type')).to.match(/^application\/vc\+jwt/);
    expect(jwt.text).to.equal(jwsOf(env.body));
    expect((await verifyJws(jwt.text)).valid).to.equal(true);
  });

  it('a score the certificate prints is a result of the achievement; the issuer is the name printed', async () => {
    const res = await call(app.url, 'GET', `/verify/${scored.certificate.serial}/credential.json`);
    const { valid, payload } = await verifyJws(jwsOf(res.body));
    expect(valid).to.equal(true);
    const subject = payload.credentialSubject as {
      achievement: { resultDescription: { id: string; resultType: string }[] };
      result: { resultDescription: string; value: string }[];
    };
    expect(subject.achievement.resultDescription[0]!.resultType).to.equal('Percent');
    expect(subject.result).to.deep.equal([
      { type: ['Result'], resultDescription: subject.achievement.resultDescription[0]!.id, value: '92' },
    ]);
    expect((payload.issuer as { name: string }).name).to.equal('Acme Training Board');
  });

  it('a tampered credential or signature fails verification', async () => {
    const res = await call(app.url, 'GET', `/verify/${plain.certificate.serial}/credential.json`);
    const jws = jwsOf(res.body);
    const [h, p, s] = jws.split('.') as [string, string, string];
    const payload = json(p);
    (payload.credentialSubject as { identifier: { identityHash: string }[] }).identifier[0]!.identityHash =
      'Mallory';
    const forged = `${h}.${Buffer.from(JSON.stringify(payload)).toString('base64url')}.${s}`;
    expect((await verifyJws(forged)).valid).to.equal(false);
    const sig = b64url(s);
    sig[10] = sig[10]! ^ 1;
    expect((await verifyJws(`${h}.${p}.${sig.toString('base64url')}`)).valid).to.equal(false);
    // A kid the issuer does not publish verifies nothing.
    const otherKid = Buffer.from(
      JSON.stringify({ ...json(h), kid: `${PUBLIC_URL}/issuers/${wsId}#not-a-key` }),
    ).toString('base64url');
    expect((await verifyJws(`${otherKid}.${p}.${s}`)).valid).to.equal(false);
  });

  it('any spelling of the serial serves the same credential; unknown and malformed serials are 404 not_found', async () => {
    const serial = plain.certificate.serial;
    const canonical = (await call(app.url, 'GET', `/verify/${serial}/credential.jwt`)).text;
    for (const spelling of [serial.toLowerCase(), serial.replace(/-/g, ''), serial.replace(/-/g, '‐')]) {
      const res = await call(app.url, 'GET', `/verify/${encodeURIComponent(spelling)}/credential.jwt`);
      expect(res.status, spelling).to.equal(200);
      expect(res.text).to.equal(canonical);
    }
    for (const bad of ['LC-2222-2222-2222', 'LC-0000-0000-0000', 'nonsense']) {
      for (const ext of ['json', 'jwt']) {
        const res = await call<{ error: string }>(app.url, 'GET', `/verify/${bad}/credential.${ext}`);
        expect(res.status, `${bad} ${ext}`).to.equal(404);
        expect(res.body.error).to.equal('not_found');
      }
    }
    const noIssuer = await call<{ error: string }>(app.url, 'GET', '/issuers/ws_nope');
    expect(noIssuer.status).to.equal(404);
    expect(noIssuer.body.error).to.equal('not_found');
  });

  it('credential lookups count against the per-address verification limit', async () => {
    const limited = await startTestApp({ VERIFY_LOOKUPS_PER_MINUTE: '2', TRUST_PROXY: 'true' });
    const client = { 'x-forwarded-for': `198.51.100.${Math.floor(Math.random() * 250) + 1}` };
    try {
      const s = plain.certificate.serial;
      expect(
        (await call(limited.url, 'GET', `/verify/${s}/credential.json`, { headers: client })).status,
      ).to.equal(200);
      expect(
        (await call(limited.url, 'GET', `/verify/LC-2222-2222-2222/credential.jwt`, { headers: client }))
          .status,
      ).to.equal(404);
      const over = await call<{ error: string }>(limited.url, 'GET', `/verify/${s}/credential.jwt`, {
        headers: client,
      });
      expect(over.status).to.equal(429);
      expect(over.body.error).to.equal('rate_limited');
      expect(Number(over.headers.get('retry-after'))).to.be.within(1, 60);
      // The page itself shares the budget.
      expect(
        (await call(limited.url, 'GET', `/verify/${s}?format=json`, { headers: client })).status,
      ).to.equal(429);
    } finally {
      await limited.close();
    }
  });

  it('after a key rotation, credentials signed with the retired key still verify from the issuer profile', async () => {
    const before = (await call(app.url, 'GET', `/verify/${plain.certificate.serial}/credential.jwt`)).text;
    const profile = await call<{ verificationMethod: { publicKeyJwk: { x: string } }[] }>(
      app.url,
      'GET',
      `/issuers/${wsId}`,
    );
    expect(profile.body.verificationMethod).to.have.length(1);
    const oldX = profile.body.verificationMethod[0]!.publicKeyJwk.x;
    const pem = generateKeyPairSync('ed25519').privateKey.export({ format: 'pem', type: 'pkcs8' }).toString();
    const rotated = await startTestApp({ CREDENTIAL_SIGNING_KEY: pem, CREDENTIAL_RETIRED_KEYS: oldX });
    try {
      const after = (await call(rotated.url, 'GET', `/verify/${plain.certificate.serial}/credential.jwt`))
        .text;
      expect(after).to.not.equal(before);
      const fresh = await verifyJws(after, rotated.url);
      expect(fresh.valid).to.equal(true);
      const old = await verifyJws(before, rotated.url);
      expect(old.valid).to.equal(true);
      expect(old.header.kid).to.not.equal(fresh.header.kid);
      expect(fresh.payload).to.deep.equal(old.payload);
    } finally {
      await rotated.close();
    }
  });

  it('a malformed CREDENTIAL_SIGNING_KEY or retired key stops configuration, naming the variable, not echoing it', () => {
    const rsa = generateKeyPairSync('rsa', { modulusLength: 1024 }).privateKey.export({
      format: 'pem',
      type: 'pkcs8',
    });
    for (const env of [
      { CREDENTIAL_SIGNING_KEY: 'abc' },
      { CREDENTIAL_SIGNING_KEY: rsa.toString() },
      { CREDENTIAL_RETIRED_KEYS: 'AAAA' },
    ]) {
      let err: unknown;
      try {
        parseEnv([CertificateEnv], env);
      } catch (e) {
        err = e;
      }
      expect(err).to.be.instanceOf(ConfigError);
      const name = Object.keys(env)[0]!;
      expect((err as Error).message).to.include(name);
      // A private key is never echoed (public keys may be).
      if (name === 'CREDENTIAL_SIGNING_KEY')
        expect((err as Error).message)
          .to.include('value hidden')
          .and.not.include('abc');
    }
    const seed = parseEnv([CertificateEnv], { CREDENTIAL_SIGNING_KEY: 'ab'.repeat(32) });
    expect(seed.CREDENTIAL_SIGNING_KEY).to.equal('ab'.repeat(32));
  });
});
