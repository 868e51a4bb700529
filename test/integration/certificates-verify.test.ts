import { expect } from 'chai';
import { startTestApp, type TestApp } from '../support/context.js';
import { verificationFixture } from '../support/certificates.js';
import type { IssueOutcome } from '@lectern/certificates';

describe('certificates: the public verification page /verify/:serial', function () {
  this.timeout(60_000);
  let app: TestApp;
  let plain: IssueOutcome;
  let scored: IssueOutcome;

  let fixture: Awaited<ReturnType<typeof verificationFixture>>;
  before(async () => {
    fixture = await verificationFixture('Grace <Hopper>');
    ({ app, plain, scored } = fixture);
  });
  after(async () => fixture?.close());

  const get = (path: string, accept = 'text/html') => fetch(`${app.url}${path}`, { headers: { accept } });

  it('a browser gets an HTML page stating valid, learner, course, issuer and date; no key needed; text is escaped', async () => {
    const res = await get(`/verify/${plain.certificate.serial}`);
    expect(res.status).to.equal(200);
    expect(res.headers.get('content-type')).to.match(/^text\/html/);
    const html = await res.text();
    expect(html).to.include('Valid certificate');
    expect(html).to.include('Grace &lt;Hopper&gt;').and.not.include('<Hopper>');
    expect(html)
      .to.include('Fire safety at work')
      .and.include('Acme Academy')
      .and.include(plain.certificate.serial);
    expect(html).to.match(/Issued on<\/dt><dd>\w+ \d{1,2}, \d{4}</);
    expect(html).to.not.include('Score'); // the default design does not print the score
  });

  it('Accept: application/json gets the same facts; the score only when the design shows it', async () => {
    const res = await get(`/verify/${scored.certificate.serial}`, 'application/json');
    expect(res.status).to.equal(200);
    const body = (await res.json()) as { data: Record<string, unknown> };
    expect(body.data).to.deep.equal({
      valid: true,
      serial: scored.certificate.serial,
      learnerName: 'Ada Lovelace',
      courseTitle: 'Forklift basics',
      issuerName: 'Acme Training Board',
      issuedAt: new Date(scored.certificate.issued_at).toISOString(),
      locale: 'en',
      score: 92,
      // A signed learner's run: the issuer's system vouched for the learner.
      source: 'embed',
      learnerIdentity: 'verified',
    });
    const plainJson = (await (
      await get(`/verify/${plain.certificate.serial}`, 'application/json')
    ).json()) as {
      data: { score: unknown };
    };
    expect(plainJson.data.score).to.equal(null);
    expect(await (await get(`/verify/${scored.certificate.serial}`)).text()).to.include('92%');
  });

  it('any spelling of the serial (case, dashes) shows the same certificate', async () => {
    const s = plain.certificate.serial;
    for (const spelling of [s.toLowerCase(), s.replace(/-/g, ''), s.replace(/-/g, '').toLowerCase()]) {
      const res = await get(`/verify/${spelling}`, 'application/json');
      expect(res.status, spelling).to.equal(200);
      expect(((await res.json()) as { data: { serial: string } }).data.serial).to.equal(s);
    }
  });

  it('an unknown or malformed serial gets a 404 page (and a 404 not_found in JSON)', async () => {
    for (const bad of ['LC-2222-2222-2222', 'LC-0OIL-2222-2222', '<script>']) {
      const res = await get(`/verify/${encodeURIComponent(bad)}`);
      expect(res.status, bad).to.equal(404);
      const html = await res.text();
      expect(html).to.include('Not a valid certificate').and.not.include('<script>');
      const json = await get(`/verify/${encodeURIComponent(bad)}`, 'application/json');
      expect(json.status).to.equal(404);
      expect(((await json.json()) as { error: string }).error).to.equal('not_found');
    }
  });

  it('limits lookups per client address: past the limit 429 with Retry-After, found and unknown serials alike', async () => {
    // Behind a proxy (TRUST_PROXY): the client address is X-Forwarded-For, so each test address starts fresh.
    const limited = await startTestApp({ VERIFY_LOOKUPS_PER_MINUTE: '3', TRUST_PROXY: 'true' });
    const client = `198.51.100.${Math.floor(Math.random() * 250) + 1}`;
    const other = `203.0.113.${Math.floor(Math.random() * 250) + 1}`;
    try {
      const url = (s: string) => `${limited.url}/verify/${s}`;
      const json = (from: string) => ({ accept: 'application/json', 'x-forwarded-for': from });
      const statuses: number[] = [];
      for (const s of [plain.certificate.serial, 'LC-2222-2222-2222', plain.certificate.serial]) {
        statuses.push((await fetch(url(s), { headers: json(client) })).status);
      }
      expect(statuses).to.deep.equal([200, 404, 200]);
      const over = await fetch(url(plain.certificate.serial), { headers: json(client) });
      expect(over.status).to.equal(429);
      expect(Number(over.headers.get('retry-after'))).to.be.within(1, 60);
      expect(((await over.json()) as { error: string }).error).to.equal('rate_limited');
      const page = await fetch(url(plain.certificate.serial), { headers: { 'x-forwarded-for': client } });
      expect(page.status).to.equal(429);
      expect(await page.text()).to.include('Too many lookups');
      // Another address is not held back by this one.
      expect((await fetch(url(plain.certificate.serial), { headers: json(other) })).status).to.equal(200);
    } finally {
      await limited.close();
    }
  });
});
