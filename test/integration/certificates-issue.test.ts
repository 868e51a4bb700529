import { expect } from 'chai';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { deflateSync } from 'node:zlib';
import { makeWorkspace, startTestApp, type TestApp, type TestWorkspace } from '../support/context.js';
import { call } from '../support/http.js';
import { outboxOf } from '../support/spine.js';
import { api, expectNotFound, expectStatus } from '../support/authoring.js';
import { finishedRun, pdfText, qrText } from '../support/certificates.js';
import { boundQuery } from '@lectern/db';
import { isAppError } from '@lectern/errors';
import { createCertificateTemplate, updateCertificateTemplate } from '@lectern/authoring';
import { parseEnv } from '@lectern/config';
import {
  CERTIFICATE_WORKER_ENV,
  certificateRenderSettings,
  issueCertificate,
  normaliseSerial,
  startCertificateWorker,
  type CertificateSubject,
  type IssueOutcome,
} from '@lectern/certificates';
import type { JobWorkerHandle } from '@lectern/jobs';
import type { IssuedCertificateDto } from '@lectern/contracts';

/** A minimal valid 1×1 PNG (so the logo path is exercised end to end). */
function tinyPng(): Buffer {
  const crc = (buf: Buffer) => {
    let c = ~0;
    for (const b of buf) {
      c ^= b;
      for (let k = 0; k < 8; k++) c = (c >>> 1) ^ (0xedb88320 & -(c & 1));
    }
    return ~c >>> 0;
  };
  const chunk = (type: string, data: Buffer) => {
    const len = Buffer.alloc(4);
    len.writeUInt32BE(data.length);
    const td = Buffer.concat([Buffer.from(type), data]);
    const c = Buffer.alloc(4);
    c.writeUInt32BE(crc(td));
    return Buffer.concat([len, td, c]);
  };
  const ihdr = Buffer.from([0, 0, 0, 1, 0, 0, 0, 1, 8, 2, 0, 0, 0]);
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', ihdr),
    chunk('IDAT', deflateSync(Buffer.from([0, 200, 30, 30]))),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

describe('certificates: issuing on first download, the records API, 409 on course delete', function () {
  this.timeout(60_000);
  let app: TestApp;
  let worker: JobWorkerHandle;
  let ws: TestWorkspace;
  let req: ReturnType<typeof api>;
  const em = () => app.rt.orm.em.fork();
  const issue = (s: CertificateSubject) => issueCertificate(app.rt, s);
  const scale = () => ({ id: ws.id, plan: 'scale' as const });
  const issuedEvents = async (workspaceId: string) =>
    (await outboxOf(em(), workspaceId)).filter((e) => e.type === 'certificate.issued');

  before(async () => {
    app = await startTestApp();
    // Logos are served from loopback here, so private addresses are allowed (as the test config does for webhooks).
    const settings = certificateRenderSettings(
      parseEnv(CERTIFICATE_WORKER_ENV, { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' }),
    );
    worker = await startCertificateWorker(app.rt, { ...settings, concurrency: 2 });
    ws = await makeWorkspace(em(), 'scale', 'Acme Academy');
    req = api(app.base, ws.key);
  });
  after(async () => {
    await worker?.stop();
    await app?.close();
  });

  it('the first download issues: a serial, one certificate.issued with the SPEC payload, a PDF with name, course, serial and a QR of the verify URL', async () => {
    const subject = await finishedRun(em(), scale());
    const out = await issue(subject);
    expect(out.issued).to.equal(true);
    const serial = out.certificate.serial;
    expect(serial).to.match(/^LC-[2-9A-HJKMNP-Z]{4}-[2-9A-HJKMNP-Z]{4}-[2-9A-HJKMNP-Z]{4}$/);
    expect(out.pdf.subarray(0, 5).toString()).to.equal('%PDF-');

    const text = await pdfText(out.pdf);
    expect(text).to.include('Ada Lovelace').and.include('Fire safety at work').and.include(serial);
    expect(text).to.include('Acme Academy'); // issuerName empty → the workspace name
    expect(await qrText(out.pdf)).to.equal(`http://lectern.test/verify/${serial}`);

    const events = await issuedEvents(ws.id);
    const mine = events.filter((e) => e.data.serial === serial);
    expect(mine).to.have.length(1);
    const [identity] = await boundQuery<{ email: string }>(
      em(),
      'select email from identities where id = ?',
      [subject.identityId],
    );
    expect(mine[0].data).to.deep.equal({
      course: { id: subject.courseId, title: 'Fire safety at work' },
      identity: {
        id: subject.identityId,
        externalId: subject.identityExternalId,
        name: 'Ada Lovelace',
        email: identity.email,
      },
      serial,
      verifyUrl: `http://lectern.test/verify/${serial}`,
      score: 87.5,
      issuedAt: new Date(out.certificate.issued_at).toISOString(),
    });
  });

  it('later downloads: the same serial and the same stored PDF, no new event; later template edits change nothing issued', async () => {
    const tpl = await createCertificateTemplate(em(), ws.id, {
      name: 'Gold',
      tokens: { eyebrow: 'Certificate of achievement', accentColor: '#b08d57' },
    });
    const subject = await finishedRun(em(), scale(), { certificateId: tpl.id, title: 'Ladders' });
    const first = await issue(subject);
    expect(await pdfText(first.pdf)).to.include('Certificate of achievement');
    await updateCertificateTemplate(em(), ws.id, tpl.id, { tokens: { eyebrow: 'Edited later' } });
    const again = await issue(subject);
    expect(again.issued).to.equal(false);
    expect(again.certificate.serial).to.equal(first.certificate.serial);
    expect(again.pdf.equals(first.pdf)).to.equal(true);
    expect(
      (await issuedEvents(ws.id)).filter((e) => e.data.serial === first.certificate.serial),
    ).to.have.length(1);
    // Even a PDF lost from the store renders again from the snapshot, not from the edited template.
    await boundQuery(em(), 'update issued_certificates set pdf_key = null where serial = ?', [
      first.certificate.serial,
    ]);
    const rerendered = await issue(subject);
    const text = await pdfText(rerendered.pdf);
    expect(text).to.include('Certificate of achievement').and.not.include('Edited later');
  });

  it('racing downloads of one run issue one certificate and one event', async () => {
    const subject = await finishedRun(em(), scale(), { title: 'Race course' });
    const outs: IssueOutcome[] = await Promise.all(Array.from({ length: 6 }, () => issue(subject)));
    const serials = new Set(outs.map((o) => o.certificate.serial));
    expect(serials.size).to.equal(1);
    expect(outs.filter((o) => o.issued)).to.have.length(1);
    const rows = await boundQuery(em(), 'select id from issued_certificates where completion_id = ?', [
      subject.completionId,
    ]);
    expect(rows).to.have.length(1);
    expect((await issuedEvents(ws.id)).filter((e) => serials.has(e.data.serial as string))).to.have.length(1);
  });

  it('refuses with 403 forbidden, writing nothing: not finished, below the pass mark, anonymous, no name', async () => {
    const cases: [Partial<CertificateSubject> & { name?: string | null }, string][] = [
      [{ status: 'in_progress' }, 'not_finished'],
      [{ passed: false, passingScore: 80, score: 40 }, 'not_passed'],
      [{ identityId: null, identityExternalId: null, learnerName: null }, 'anonymous'],
      [{ name: null }, 'no_name'],
    ];
    for (const [over, reason] of cases) {
      const subject = await finishedRun(em(), scale(), over);
      const err = await issue(subject).then(
        () => null,
        (e: unknown) => e,
      );
      expect(isAppError(err) && err.code, reason).to.equal('forbidden');
      expect(isAppError(err) && err.details?.reason).to.equal(reason);
      const rows = await boundQuery(em(), 'select id from issued_certificates where completion_id = ?', [
        subject.completionId,
      ]);
      expect(rows, reason).to.have.length(0);
    }
  });

  it('a template logo is fetched (SSRF guard, PNG/JPEG only): a PNG is drawn, an SVG behind a .png URL is left out', async () => {
    const png = tinyPng();
    const server = http.createServer((r, res) => {
      if (r.url === '/logo.png') res.writeHead(200, { 'content-type': 'image/png' }).end(png);
      else
        res
          .writeHead(200, { 'content-type': 'image/svg+xml' })
          .end('<svg xmlns="http://www.w3.org/2000/svg"/>');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as AddressInfo).port;
    try {
      const good = await createCertificateTemplate(em(), ws.id, {
        name: 'Logo',
        tokens: { logoUrl: `http://127.0.0.1:${port}/logo.png` },
      });
      const bad = await createCertificateTemplate(em(), ws.id, {
        name: 'Fake logo',
        tokens: { logoUrl: `http://127.0.0.1:${port}/fake.png` },
      });
      const withLogo = await issue(await finishedRun(em(), scale(), { certificateId: good.id }));
      const without = await issue(await finishedRun(em(), scale(), { certificateId: bad.id }));
      expect(withLogo.pdf.toString('latin1')).to.match(/\/Subtype \/Image/);
      expect(without.pdf.toString('latin1')).to.not.match(/\/Subtype \/Image/);
      const [job] = await boundQuery<{ result: { warnings: string[] } }>(
        em(),
        `select result from jobs where kind = 'certificate.render' and input->>'serial' = ?`,
        [without.certificate.serial],
      );
      expect(job.result.warnings.join(' ')).to.match(/not a PNG or JPEG/);
    } finally {
      server.close();
    }
  });

  describe('GET /issued-certificates (+ /:serial, /:serial/pdf)', () => {
    let mine: IssueOutcome[];
    let other: { ws: TestWorkspace; out: IssueOutcome };
    let courseId: string;
    before(async () => {
      const first = await finishedRun(em(), scale(), { title: 'Listing course' });
      courseId = first.courseId;
      mine = [await issue(first)];
      for (let i = 0; i < 2; i++)
        mine.push(await issue(await finishedRun(em(), scale(), { courseId, title: 'Listing course' })));
      const ows = await makeWorkspace(em(), 'scale', 'Other');
      other = { ws: ows, out: await issue(await finishedRun(em(), { id: ows.id, plan: 'scale' })) };
    });

    it('lists newest first, paged, filtered by courseId and identityId, own workspace only', async () => {
      const res = await req<IssuedCertificateDto[]>(
        'GET',
        `/issued-certificates?courseId=${courseId}&limit=2`,
      );
      expectStatus(res, 200);
      const body = res.body as unknown as {
        data: IssuedCertificateDto[];
        pagination: Record<string, unknown>;
      };
      expect(body.data.map((c) => c.serial)).to.deep.equal([
        mine[2].certificate.serial,
        mine[1].certificate.serial,
      ]);
      expect(body.pagination).to.deep.equal({ limit: 2, offset: 0, total: 3, hasMore: true });
      const c = body.data[0];
      expect(Object.keys(c).sort()).to.deep.equal(
        [
          'courseId',
          'id',
          'identityExternalId',
          'identityId',
          'issuedAt',
          'locale',
          'score',
          'serial',
          'source',
        ].sort(),
      );
      expect(c).to.deep.include({ courseId, locale: 'en', score: 87.5 });
      expect(c.issuedAt).to.match(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);

      const byLearner = await req<IssuedCertificateDto[]>(
        'GET',
        `/issued-certificates?identityId=${mine[1].certificate.identity_id}`,
      );
      expect(byLearner.body.data.map((x) => x.serial)).to.deep.equal([mine[1].certificate.serial]);
      const all = await req<IssuedCertificateDto[]>('GET', '/issued-certificates?limit=10000');
      expect(all.body.data.map((x) => x.serial)).to.not.include(other.out.certificate.serial);
    });

    it("finds a serial in any case, with or without dashes; another workspace's or an unknown one is 404", async () => {
      const serial = mine[0].certificate.serial;
      for (const spelling of [
        serial,
        serial.toLowerCase(),
        serial.replace(/-/g, ''),
        serial.replace(/-/g, '').toLowerCase(),
      ]) {
        const res = await req<IssuedCertificateDto>(
          'GET',
          `/issued-certificates/${encodeURIComponent(spelling)}`,
        );
        expectStatus(res, 200);
        expect(res.body.data.serial, spelling).to.equal(serial);
      }
      expectNotFound(await req('GET', `/issued-certificates/${other.out.certificate.serial}`));
      expectNotFound(await req('GET', '/issued-certificates/LC-2222-2222-2222'));
      expectNotFound(await req('GET', '/issued-certificates/not-a-serial'));
      expectNotFound(await req('GET', `/issued-certificates/${other.out.certificate.serial}/pdf`));
    });

    it('/pdf returns the stored PDF', async () => {
      const serial = mine[0].certificate.serial;
      const res = await call<Record<string, unknown>>(
        app.base,
        'GET',
        `/issued-certificates/${serial.toLowerCase()}/pdf`,
        {
          key: ws.key,
        },
      );
      expect(res.status).to.equal(200);
      expect(res.headers.get('content-type')).to.equal('application/pdf');
      const got = Buffer.from(
        await (
          await fetch(`${app.base}/issued-certificates/${serial}/pdf`, {
            headers: { authorization: `Bearer ${ws.key}` },
          })
        ).arrayBuffer(),
      );
      expect(got.equals(mine[0].pdf)).to.equal(true);
    });

    it('DELETE /courses/:id → 409 conflict while certificates exist; a course without any deletes', async () => {
      const res = await req('DELETE', `/courses/${courseId}`);
      expect(res.status, res.text).to.equal(409);
      expect(res.body.error).to.equal('conflict');
      expect(res.body.message)
        .to.match(/3 issued certificates/)
        .and.match(/unpublish/);
      expectStatus(await req('GET', `/courses/${courseId}`), 200);
      const fresh = await req<{ id: string }>('POST', '/courses', { title: 'No certificates' });
      expectStatus(await req('DELETE', `/courses/${fresh.body.data.id}`), 204);
    });

    it('the routes are in the OpenAPI document', async () => {
      const doc = (await (await fetch(`${app.base}/openapi.json`)).json()) as {
        paths: Record<string, unknown>;
      };
      for (const p of [
        '/api/v1/issued-certificates',
        '/api/v1/issued-certificates/{serial}',
        '/api/v1/issued-certificates/{serial}/pdf',
        '/verify/{serial}',
      ])
        expect(doc.paths, p).to.have.property(p);
      expect(normaliseSerial(mine[0].certificate.serial)).to.equal(mine[0].certificate.serial);
    });
  });
});
