import { parseEnv } from '@lectern/config';
import { expect } from 'chai';
import { boundQuery } from '@lectern/db';
import {
  CERTIFICATE_WORKER_ENV,
  certificateRenderSettings,
  startCertificateWorker,
} from '@lectern/certificates';
import type { JobWorkerHandle } from '@lectern/jobs';
import type { OpenRunResult } from '@lectern/contracts';
import { makeWorkspace, type TestWorkspace } from '../support/context.js';
import { startCustomApp, outboxOf, type CustomApp } from '../support/spine.js';
import { api } from '../support/authoring.js';
import { checkContract } from '../support/contract.js';
import { pdfText } from '../support/certificates.js';
import { CERTIFICATE_WORDING } from '@lectern/certificates';
import { CHROME_LANGUAGES } from '@lectern/player';
import {
  anonymousId,
  createEmbedKey,
  playerApi,
  publishedCourse,
  quizFinishEvents,
  signIdentity,
} from '../support/player.js';

type Open = OpenRunResult;

interface Answer {
  status: number;
  headers: Headers;
  body: Buffer;
  json?: { data?: Record<string, unknown>; error?: string; message?: string; reason?: string };
}

const SERIAL = /LC-[2-9A-HJKMNP-Z]{4}-[2-9A-HJKMNP-Z]{4}-[2-9A-HJKMNP-Z]{4}/;

/**
 * Issue 19 §1: an issued certificate stays the learner's (a failed retake, a pass mark lowered or cleared), the
 * customer's backend gets it through GET /api/v1/completions/:id/certificate, the certificate speaks the run's
 * language, and match and ranking answers read back to the course's items. Real port, real render worker.
 */
describe('certificates in the journey: kept after a retake, the API download, the run’s language', function () {
  this.timeout(60_000);
  let app: CustomApp;
  let worker: JobWorkerHandle;
  let player: ReturnType<typeof playerApi>;
  const em = () => app.rt.orm.em.fork();
  let batch = 0;

  before(async () => {
    app = await startCustomApp({ VERIFY_LOOKUPS_PER_MINUTE: '1000' });
    const settings = certificateRenderSettings(parseEnv(CERTIFICATE_WORKER_ENV, {}));
    worker = await startCertificateWorker(app.rt, { ...settings, concurrency: 2 });
    player = playerApi(app.url);
  });
  after(async () => {
    await worker?.stop();
    await app?.close();
  });

  async function fetchAnswer(url: string, headers: Record<string, string>): Promise<Answer> {
    const res = await fetch(url, { headers });
    const body = Buffer.from(await res.arrayBuffer());
    const isJson = (res.headers.get('content-type') ?? '').includes('json');
    const json = isJson ? (JSON.parse(body.toString('utf8')) as Answer['json']) : undefined;
    await checkContract(url, 'GET', res.status, res.headers.get('content-type'), json ?? null);
    return { status: res.status, headers: res.headers, body, json };
  }
  /** The learner's download from the player (run token in the header). */
  const learnerDownload = (run: Open) =>
    fetchAnswer(`${app.url}/player/v1/runs/${run.completion.id}/certificate`, {
      authorization: `Bearer ${run.runToken}`,
    });
  /** The customer's backend: GET /api/v1/completions/:id/certificate with a key and an Accept header (or none). */
  const backendDownload = (completionId: string, key: string, accept?: string) =>
    fetchAnswer(`${app.base}/completions/${completionId}/certificate`, {
      authorization: `Bearer ${key}`,
      ...(accept ? { accept } : {}),
    });

  async function setup(course: Record<string, unknown> = {}) {
    const ws = await makeWorkspace(em(), 'scale', 'Acme Academy');
    const courseId = await publishedCourse(app.base, ws.key, {
      title: 'Fire safety at work',
      passingScore: 75,
      ...course,
    });
    const ek = await createEmbedKey(app.base, ws.key);
    return { ws, courseId, ek, req: api(app.base, ws.key) };
  }
  const open = async (body: Record<string, unknown>): Promise<Open> => {
    const res = await player<Open>('POST', '/runs', { body });
    expect(res.status, res.text).to.be.oneOf([200, 201]);
    return res.body.data;
  };
  async function send(run: Open, events: unknown[]) {
    const res = await player<{ result?: { score: number; passed: boolean | null } }>(
      'POST',
      `/runs/${run.completion.id}/events`,
      { token: run.runToken, body: { batchId: `b${++batch}`, events } },
    );
    expect(res.status, res.text).to.equal(200);
    return res.body.data.result;
  }
  /** Both graded blocks right (score 100) or one wrong (score 50), ending on the last screen. */
  const finish = (run: Open, right: boolean) => send(run, quizFinishEvents({ q1: right ? 'a' : 'b' }));
  async function retake(run: Open) {
    const res = await player('POST', `/runs/${run.completion.id}/retake`, { token: run.runToken, body: {} });
    expect(res.status, res.text).to.equal(200);
  }
  const issuedEvents = async (ws: TestWorkspace) =>
    (await outboxOf(em(), ws.id)).filter((e) => e.type === 'certificate.issued');
  const certificatesOf = (completionId: string) =>
    boundQuery<{ serial: string; design: Record<string, unknown> }>(
      em(),
      'select serial, design from issued_certificates where completion_id = ?',
      [completionId],
    );
  async function verifyValid(serial: string) {
    const res = await fetch(`${app.url}/verify/${serial}`, { headers: { accept: 'application/json' } });
    expect(res.status).to.equal(200);
    return ((await res.json()) as { data: { valid: boolean; serial: string } }).data;
  }
  const serialOf = async (pdf: Buffer) => SERIAL.exec(await pdfText(pdf))?.[0];

  describe('an issued certificate stays the learner’s', () => {
    it('pass → download → retake → fail: the learner’s download is 200 with the same serial, no second event; /verify valid', async () => {
      const { ws, courseId, ek } = await setup();
      const run = await open({
        courseId,
        identity: await signIdentity(ek, { name: 'Ada Lovelace' }, { sub: 'ada' }),
      });
      expect(await finish(run, true)).to.include({ score: 100, passed: true });
      const first = await learnerDownload(run);
      expect(first.status, first.json?.message).to.equal(200);
      const serial = await serialOf(first.body);
      expect(serial).to.be.a('string');
      expect(first.headers.get('certificate-serial')).to.equal(serial);
      expect(first.headers.get('certificate-verify-url')).to.equal(
        `${app.rt.cfg.PUBLIC_URL}/verify/${serial}`,
      );

      // Re-opened, the run says how it ended (a resuming player shows the download from it).
      const reopened = await open({
        courseId,
        identity: await signIdentity(ek, { name: 'Ada Lovelace' }, { sub: 'ada' }),
      });
      // (with the finished pass's review: docs/player-api.md "Review")
      const { review, ...result } = reopened.completion.result!;
      expect(result).to.deep.equal({ score: 100, passed: true, attempt: 1 });
      expect(review).to.be.an('array').that.is.not.empty;
      expect(reopened.completion.certificate?.serial).to.equal(serial);

      await retake(run);
      // Mid-retake (the run keeps its last result) and after the failed finish alike.
      expect((await learnerDownload(run)).status).to.equal(200);
      expect(await finish(run, false)).to.include({ score: 50, passed: false });
      const after = await learnerDownload(run);
      expect(after.status, after.json?.message).to.equal(200);
      expect(after.headers.get('certificate-serial')).to.equal(serial);
      expect(after.body.equals(first.body)).to.equal(true);
      const reopenedAfter = await open({
        courseId,
        identity: await signIdentity(ek, { name: 'Ada Lovelace' }, { sub: 'ada' }),
      });
      expect(reopenedAfter.completion.result).to.deep.include({ score: 50, passed: false, attempt: 2 });
      expect(reopenedAfter.completion.certificate).to.deep.equal({
        serial,
        verifyUrl: `${app.rt.cfg.PUBLIC_URL}/verify/${serial}`,
      });
      expect(await issuedEvents(ws)).to.have.length(1);
      expect(await certificatesOf(run.completion.id)).to.have.length(1);
      expect(await verifyValid(serial!)).to.include({ valid: true, serial });

      // The backend is told the same: the issued record, not a 403.
      const rec = await backendDownload(run.completion.id, ws.key, 'application/json');
      expect(rec.status, rec.json?.message).to.equal(200);
      expect(rec.json?.data).to.include({ serial });
    });

    it('lowering, then clearing the pass mark takes no certificate away, and a failed run stays refused until it passes', async () => {
      const { ws, courseId, ek, req } = await setup();
      const run = await open({
        courseId,
        identity: await signIdentity(ek, { name: 'Grace Hopper' }, { sub: 'g' }),
      });
      await finish(run, true);
      const serial = (await learnerDownload(run)).headers.get('certificate-serial');
      expect(serial).to.match(SERIAL);

      // Lowered to 60 and the learner then fails the retake under it (50 < 60).
      expect((await req('PATCH', `/courses/${courseId}`, { passingScore: 60 })).status).to.equal(200);
      await retake(run);
      expect(await finish(run, false)).to.include({ score: 50, passed: false });
      const lowered = await learnerDownload(run);
      expect(lowered.status, lowered.json?.message).to.equal(200);
      expect(lowered.headers.get('certificate-serial')).to.equal(serial);

      // Cleared: still the same certificate, through the player and the API.
      expect((await req('PATCH', `/courses/${courseId}`, { passingScore: null })).status).to.equal(200);
      const cleared = await learnerDownload(run);
      expect(cleared.status).to.equal(200);
      expect(cleared.headers.get('certificate-serial')).to.equal(serial);
      const viaApi = await backendDownload(run.completion.id, ws.key);
      expect(viaApi.status).to.equal(200);
      expect(viaApi.headers.get('certificate-serial')).to.equal(serial);
      expect(await issuedEvents(ws)).to.have.length(1);

      // A learner who never had one is judged by the rules as before: failed at 75 → 403 not_passed.
      expect((await req('PATCH', `/courses/${courseId}`, { passingScore: 75 })).status).to.equal(200);
      const other = await open({
        courseId,
        identity: await signIdentity(ek, { name: 'Low' }, { sub: 'low' }),
      });
      await finish(other, false);
      const refused = await learnerDownload(other);
      expect(refused.status).to.equal(403);
      expect(refused.json).to.include({ error: 'forbidden', reason: 'not_passed' });
      expect(await certificatesOf(other.completion.id)).to.have.length(0);
    });
  });

  describe('GET /api/v1/completions/:id/certificate', () => {
    it('the first call issues (one event), the PDF by default and for */*, the record for Accept: application/json', async () => {
      const { ws, courseId, ek } = await setup();
      const run = await open({
        courseId,
        identity: await signIdentity(
          ek,
          { name: 'Katherine Johnson', email: 'kj@example.test' },
          { sub: 'kj' },
        ),
      });
      await finish(run, true);

      const pdf = await backendDownload(run.completion.id, ws.key);
      expect(pdf.status, pdf.json?.message).to.equal(200);
      expect(pdf.headers.get('content-type')).to.equal('application/pdf');
      expect(pdf.headers.get('content-disposition')).to.match(
        /^attachment; filename="Fire safety at work - certificate LC-/,
      );
      expect(pdf.headers.get('cache-control')).to.equal('private, no-store');
      expect(pdf.headers.get('vary')).to.match(/accept/i);
      const serial = await serialOf(pdf.body);
      expect(pdf.headers.get('certificate-serial')).to.equal(serial);
      expect(await pdfText(pdf.body)).to.include('Katherine Johnson');
      const events = await issuedEvents(ws);
      expect(events).to.have.length(1);
      expect(events[0].data).to.include({ serial, score: 100 });

      // The backend's calls are not the learner's: the run's per-minute window is untouched by them.
      const windowOf = async () =>
        (
          await boundQuery<{ n: number }>(
            em(),
            'select rate_window_count as n from completions where id = ?',
            [run.completion.id],
          )
        )[0].n;
      const before = await windowOf();
      const star = await backendDownload(run.completion.id, ws.key, '*/*');
      expect(star.headers.get('content-type')).to.equal('application/pdf');
      expect(star.body.equals(pdf.body)).to.equal(true);
      const explicit = await backendDownload(run.completion.id, ws.key, 'application/pdf');
      expect(explicit.body.equals(pdf.body)).to.equal(true);
      expect(await windowOf()).to.equal(before);

      const rec = await backendDownload(run.completion.id, ws.key, 'application/json');
      expect(rec.status).to.equal(200);
      expect(rec.headers.get('content-type')).to.match(/^application\/json/);
      expect(rec.json?.data).to.include({
        serial,
        courseId,
        identityExternalId: 'kj',
        score: 100,
        locale: 'en',
      });
      // The learner's own download is the same certificate; nothing more was issued.
      const mine = await learnerDownload(run);
      expect(mine.headers.get('certificate-serial')).to.equal(serial);
      expect(await issuedEvents(ws)).to.have.length(1);
    });

    it('a first call asking for JSON issues without waiting for the PDF; the learner then downloads that certificate', async () => {
      const { ws, courseId, ek } = await setup();
      const run = await open({
        courseId,
        identity: await signIdentity(ek, { name: 'Mary Jackson' }, { sub: 'mj' }),
      });
      await finish(run, true);
      const rec = await backendDownload(run.completion.id, ws.key, 'application/json');
      expect(rec.status, rec.json?.message).to.equal(200);
      const serial = rec.json?.data?.serial as string;
      expect(serial).to.match(SERIAL);
      expect(await issuedEvents(ws)).to.have.length(1);
      const got = await learnerDownload(run);
      expect(got.status).to.equal(200);
      expect(await serialOf(got.body)).to.equal(serial);
      expect(await issuedEvents(ws)).to.have.length(1);
    });

    it('refusals: not passed 403 not_passed, unfinished 403, anonymous 403; read-only key 403; another workspace and unknown ids 404 — nothing issued', async () => {
      const { ws, courseId, ek } = await setup();
      const failed = await open({
        courseId,
        identity: await signIdentity(ek, { name: 'Low' }, { sub: 'low' }),
      });
      await finish(failed, false);
      for (const accept of [undefined, 'application/json']) {
        const res = await backendDownload(failed.completion.id, ws.key, accept);
        expect(res.status).to.equal(403);
        expect(res.json).to.include({ error: 'forbidden', reason: 'not_passed' });
      }
      const halfway = await open({
        courseId,
        identity: await signIdentity(ek, { name: 'Half' }, { sub: 'half' }),
      });
      const early = await backendDownload(halfway.completion.id, ws.key);
      expect(early.json).to.include({ error: 'forbidden', reason: 'not_finished' });
      const anon = await open({ courseId, anonymousId: anonymousId(7) });
      await finish(anon, true);
      const anonymous = await backendDownload(anon.completion.id, ws.key, 'application/json');
      expect(anonymous.status).to.equal(403);
      expect(anonymous.json).to.include({ reason: 'anonymous' });

      const passed = await open({
        courseId,
        identity: await signIdentity(ek, { name: 'Passed' }, { sub: 'p' }),
      });
      await finish(passed, true);
      const readOnly = await backendDownload(passed.completion.id, ws.readKey);
      expect(readOnly.status).to.equal(403);
      expect(readOnly.json).to.include({ error: 'insufficient_scope' });
      const other = await makeWorkspace(em(), 'scale', 'Other');
      for (const accept of [undefined, 'application/json']) {
        const res = await backendDownload(passed.completion.id, other.key, accept);
        expect(res.status).to.equal(404);
        expect(res.json).to.include({ error: 'not_found' });
      }
      expect((await backendDownload('cmp_doesnotexist', ws.key)).status).to.equal(404);
      expect((await backendDownload('../../etc/passwd', ws.key)).status).to.equal(404);
      expect(await issuedEvents(ws)).to.have.length(0);
      expect(await certificatesOf(passed.completion.id)).to.have.length(0);
      // A key without auth at all.
      const bare = await fetch(`${app.base}/completions/${passed.completion.id}/certificate`);
      expect(bare.status).to.equal(401);
    });

    it('is in the OpenAPI document with its operationId, its PDF and JSON answers, under Completions', async () => {
      const res = await fetch(`${app.base}/openapi.json`);
      const doc = (await res.json()) as {
        paths: Record<
          string,
          Record<
            string,
            {
              operationId: string;
              tags: string[];
              responses: Record<string, { content?: Record<string, unknown> }>;
            }
          >
        >;
      };
      const op = doc.paths['/api/v1/completions/{id}/certificate']?.get;
      expect(op?.operationId).to.equal('getCompletionCertificate');
      expect(op?.tags).to.deep.equal(['Completions']);
      expect(Object.keys(op!.responses['200'].content ?? {})).to.have.members([
        'application/pdf',
        'application/json',
      ]);
    });
  });

  describe('the certificate speaks the run’s language', () => {
    it('a French run: French eyebrow, body text and date (pdftotext); an English run of the same course stays English', async () => {
      const { ws, courseId, ek, req } = await setup();
      const tr = await req<{ id: string }>('POST', `/courses/${courseId}/translations`, { locale: 'fr' });
      expect(tr.status, tr.text).to.equal(201);
      await req('PATCH', `/courses/${courseId}/translations/${tr.body.data.id}`, {
        content: { title: 'Sécurité incendie au travail' },
      });
      const fr = await open({
        courseId,
        lang: 'fr-FR',
        identity: await signIdentity(ek, { name: 'Marie Curie' }, { sub: 'marie' }),
      });
      expect(fr.completion.locale).to.equal('fr');
      await finish(fr, true);
      const got = await learnerDownload(fr);
      expect(got.status, got.json?.message).to.equal(200);
      const text = (await pdfText(got.body)).replace(/\s+/g, ' ');
      const issuedAt = (await backendDownload(fr.completion.id, ws.key, 'application/json')).json?.data
        ?.issuedAt as string;
      const frenchDate = new Intl.DateTimeFormat('fr', { dateStyle: 'long', timeZone: 'UTC' }).format(
        new Date(issuedAt),
      );
      expect(text)
        .to.include('Certificat de réussite')
        .and.include('a suivi avec succès la formation')
        .and.include('Sécurité incendie au travail')
        .and.include(frenchDate);
      expect(frenchDate).to.match(/^\d{1,2} \p{L}+ \d{4}$/u);
      expect(text).not.to.include('Certificate of completion');
      expect(text).not.to.include('has successfully completed');

      const en = await open({
        courseId,
        identity: await signIdentity(ek, { name: 'Alan Turing' }, { sub: 'alan' }),
      });
      await finish(en, true);
      const english = (await pdfText((await learnerDownload(en)).body)).replace(/\s+/g, ' ');
      expect(english).to.include('Certificate of completion').and.include('has successfully completed');
      // The English snapshot is the template's tokens as they are (the built-in design: none).
      const [enCert] = await certificatesOf(en.completion.id);
      expect(enCert.design).to.deep.equal({});
    });

    it('every language of the player’s interface: its wording on the PDF (and its date where the text reads back plainly)', async () => {
      const { ws, courseId, ek, req } = await setup();
      const langs = CHROME_LANGUAGES.filter((l) => l !== 'en');
      for (const lang of langs) {
        const tr = await req('POST', `/courses/${courseId}/translations`, { locale: lang });
        expect(tr.status, tr.text).to.equal(201);
      }
      for (const lang of langs) {
        const run = await open({
          courseId,
          lang,
          identity: await signIdentity(ek, { name: 'Ada Lovelace' }, { sub: `ada-${lang}` }),
        });
        expect(run.completion.locale).to.equal(lang);
        await finish(run, true);
        const got = await learnerDownload(run);
        expect(got.status, `${lang}: ${got.json?.message}`).to.equal(200);
        // pdftotext gives Arabic back in presentation forms and CJK with spaces: compare compatibility-normalised
        // text without whitespace.
        const flat = (t: string) => t.normalize('NFKC').replace(/\s+/g, '');
        const text = flat(await pdfText(got.body));
        const wording = CERTIFICATE_WORDING[lang];
        expect(text, lang).to.include(flat(wording.eyebrow));
        expect(text, lang).not.to.include(flat('Certificate of completion'));
        if (!['ar', 'he'].includes(lang)) {
          expect(text, lang).to.include(flat(wording.bodyText));
          const issuedAt = (await backendDownload(run.completion.id, ws.key, 'application/json')).json?.data
            ?.issuedAt as string;
          const date = new Intl.DateTimeFormat(lang, { dateStyle: 'long', timeZone: 'UTC' }).format(
            new Date(issuedAt),
          );
          expect(text, lang).to.include(flat(date));
        }
      }
    });

    it('the template’s texts come from the course translation (certificate.<token> paths); untranslated ones stay as written', async () => {
      const { courseId, ek, req } = await setup();
      const tpl = await req<{ id: string }>('POST', '/certificates', {
        name: 'Excellence',
        tokens: {
          eyebrow: 'Certificate of excellence',
          footerText: 'Acme Academy, Springfield',
          signatureName: 'Dr. Jane Roe',
          signatureTitle: 'Head of training',
        },
      });
      expect(tpl.status, tpl.text).to.equal(201);
      expect(
        (await req('PATCH', `/courses/${courseId}`, { certificateId: tpl.body.data.id })).status,
      ).to.equal(200);
      const tr = await req<{ id: string }>('POST', `/courses/${courseId}/translations`, { locale: 'de' });
      // The template's texts are listed for translators…
      const fields = await req<{ fields: { path: string; sourceText: string }[] }>(
        'GET',
        `/courses/${courseId}/translatable`,
      );
      expect(fields.status, fields.text).to.equal(200);
      expect(fields.body.data.fields.filter((f) => f.path.startsWith('certificate.'))).to.deep.equal([
        {
          path: 'certificate.eyebrow',
          group: 'certificate',
          labelKey: 'certificate.eyebrow',
          sourceText: 'Certificate of excellence',
        },
        {
          path: 'certificate.signatureName',
          group: 'certificate',
          labelKey: 'certificate.signatureName',
          sourceText: 'Dr. Jane Roe',
        },
        {
          path: 'certificate.signatureTitle',
          group: 'certificate',
          labelKey: 'certificate.signatureTitle',
          sourceText: 'Head of training',
        },
        {
          path: 'certificate.footerText',
          group: 'certificate',
          labelKey: 'certificate.footerText',
          sourceText: 'Acme Academy, Springfield',
        },
      ]);
      // … accepted in a translation; a token the template does not set (bodyText) is an unknown path.
      const bad = await req('PATCH', `/courses/${courseId}/translations/${tr.body.data.id}`, {
        content: { 'certificate.bodyText': 'hat bestanden' },
      });
      expect(bad.status).to.equal(400);
      const ok = await req('PATCH', `/courses/${courseId}/translations/${tr.body.data.id}`, {
        content: {
          'certificate.eyebrow': 'Exzellenzzertifikat',
          'certificate.signatureTitle': 'Leiterin der Ausbildung',
        },
      });
      expect(ok.status, ok.text).to.equal(200);

      const run = await open({
        courseId,
        lang: 'de',
        identity: await signIdentity(ek, { name: 'Emmy Noether' }, { sub: 'emmy' }),
      });
      expect(run.completion.locale).to.equal('de');
      await finish(run, true);
      const text = (await pdfText((await learnerDownload(run)).body)).replace(/\s+/g, ' ');
      expect(text)
        .to.include('Exzellenzzertifikat')
        .and.include('Leiterin der Ausbildung')
        .and.include('Acme Academy, Springfield')
        .and.include('hat erfolgreich abgeschlossen');
      expect(text).not.to.include('Certificate of excellence');
      const [cert] = await certificatesOf(run.completion.id);
      expect(cert.design).to.include({
        eyebrow: 'Exzellenzzertifikat',
        bodyText: 'hat erfolgreich abgeschlossen',
      });
    });
  });
});
