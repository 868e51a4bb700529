import { expect } from 'chai';
import { createHmac } from 'node:crypto';
import { generateSigningSecret } from '@lectern/webhooks';
import {
  signatureHeaders,
  USER_AGENT,
  verifyServiceSignature,
  verifyStandardSignature,
} from '@lectern/webhooks';

// Independent reference implementations, written from the documented schemes with node:crypto only.
function refServiceSignature(secret: string, body: string): string {
  return 'sha256=' + createHmac('sha256', secret).update(body).digest('hex');
}
function refStandardSignature(secret: string, id: string, ts: string, body: string): string {
  const key = Buffer.from(secret.split('_')[1], 'base64');
  return 'v1,' + createHmac('sha256', key).update(`${id}.${ts}.${body}`).digest('base64');
}

describe('webhooks/signature', () => {
  const secret = generateSigningSecret();
  const body = JSON.stringify({
    id: 'evt_123',
    type: 'course.completed',
    createdAt: '2025-01-01T00:00:00.000Z',
    workspaceId: 'ws_1',
    data: { course: { id: 'c1', title: 'Résumé ✓' } },
  });
  const ts = 1_735_689_600;
  const headers = signatureHeaders({
    secret,
    eventId: 'evt_123',
    eventType: 'course.completed',
    body,
    timestamp: ts,
  });

  it('produces every delivery header', () => {
    expect(headers).to.deep.equal({
      'Content-Type': 'application/json',
      'User-Agent': 'Lectern-Webhooks/1.0 (+https://lectern.dev/docs/webhooks)',
      'X-Service-Event': 'course.completed',
      'X-Service-Delivery': 'evt_123',
      'X-Service-Signature': refServiceSignature(secret, body),
      'webhook-id': 'evt_123',
      'webhook-timestamp': String(ts),
      'webhook-signature': refStandardSignature(secret, 'evt_123', String(ts), body),
    });
    expect(USER_AGENT).to.equal(headers['User-Agent']);
  });

  it('keys X-Service-Signature with the full secret string, prefix included', () => {
    const withoutPrefix = 'sha256=' + createHmac('sha256', secret.slice(6)).update(body).digest('hex');
    expect(headers['X-Service-Signature']).not.to.equal(withoutPrefix);
    expect(headers['X-Service-Signature']).to.match(/^sha256=[0-9a-f]{64}$/);
  });

  it('signs the same bytes for a Buffer body', () => {
    const h2 = signatureHeaders({
      secret,
      eventId: 'evt_123',
      eventType: 'course.completed',
      body: Buffer.from(body),
      timestamp: ts,
    });
    expect(h2).to.deep.equal(headers);
  });

  it('defaults webhook-timestamp to now', () => {
    const now = Math.floor(Date.now() / 1000);
    const h = signatureHeaders({ secret, eventId: 'e', eventType: 't', body: '{}' });
    expect(Number(h['webhook-timestamp'])).to.be.within(now - 1, now + 2);
  });

  it('throws for a secret that is not whsec_<base64>', () => {
    expect(() =>
      signatureHeaders({ secret: 'whsec_not base64!', eventId: 'e', eventType: 't', body: '{}' }),
    ).to.throw(/whsec_/);
  });

  describe('verifyServiceSignature', () => {
    it('accepts the genuine signature', () => {
      expect(verifyServiceSignature(secret, body, headers['X-Service-Signature'])).to.equal(true);
      expect(verifyServiceSignature(secret, Buffer.from(body), refServiceSignature(secret, body))).to.equal(
        true,
      );
    });
    it('rejects a modified body, another secret, and malformed headers', () => {
      const sig = headers['X-Service-Signature'];
      expect(verifyServiceSignature(secret, body + ' ', sig)).to.equal(false);
      expect(verifyServiceSignature(generateSigningSecret(), body, sig)).to.equal(false);
      expect(verifyServiceSignature(secret, body, sig.slice(7))).to.equal(false);
      expect(verifyServiceSignature(secret, body, sig.slice(0, -2))).to.equal(false);
      expect(verifyServiceSignature(secret, body, 'sha1=' + sig.slice(7))).to.equal(false);
      expect(verifyServiceSignature(secret, body, undefined)).to.equal(false);
      expect(verifyServiceSignature(secret, body, '')).to.equal(false);
    });
  });

  describe('verifyStandardSignature', () => {
    const content = { id: 'evt_123', timestamp: String(ts), body };
    it('accepts the genuine signature within tolerance', () => {
      expect(verifyStandardSignature(secret, content, headers['webhook-signature'], 300, ts + 10)).to.equal(
        true,
      );
      expect(verifyStandardSignature(secret, content, headers['webhook-signature'], 300, ts - 300)).to.equal(
        true,
      );
    });
    it('accepts when any of several space-separated signatures matches', () => {
      const header = `v1,${Buffer.alloc(32).toString('base64')} v2,xyz ${headers['webhook-signature']}`;
      expect(verifyStandardSignature(secret, content, header, 300, ts)).to.equal(true);
    });
    it('rejects outside the tolerance, a tampered body/id/timestamp, or another secret', () => {
      const sig = headers['webhook-signature'];
      expect(verifyStandardSignature(secret, content, sig, 300, ts + 301)).to.equal(false);
      expect(
        verifyStandardSignature(secret, { ...content, body: body.replace('c1', 'c2') }, sig, 300, ts),
      ).to.equal(false);
      expect(verifyStandardSignature(secret, { ...content, id: 'evt_124' }, sig, 300, ts)).to.equal(false);
      expect(verifyStandardSignature(secret, { ...content, timestamp: ts + 1 }, sig, 300, ts)).to.equal(
        false,
      );
      expect(verifyStandardSignature(generateSigningSecret(), content, sig, 300, ts)).to.equal(false);
      expect(verifyStandardSignature(secret, content, sig.replace('v1,', 'v2,'), 300, ts)).to.equal(false);
      expect(verifyStandardSignature(secret, content, null, 300, ts)).to.equal(false);
      expect(verifyStandardSignature('whsec_%%%', content, sig, 300, ts)).to.equal(false);
    });
    it('uses the current time by default', () => {
      const now = Math.floor(Date.now() / 1000);
      const h = signatureHeaders({ secret, eventId: 'e1', eventType: 't', body: '{}', timestamp: now });
      expect(
        verifyStandardSignature(secret, { id: 'e1', timestamp: now, body: '{}' }, h['webhook-signature']),
      ).to.equal(true);
      const old = signatureHeaders({
        secret,
        eventId: 'e1',
        eventType: 't',
        body: '{}',
        timestamp: now - 3600,
      });
      expect(
        verifyStandardSignature(
          secret,
          { id: 'e1', timestamp: now - 3600, body: '{}' },
          old['webhook-signature'],
        ),
      ).to.equal(false);
    });
  });
});
