import { parseEnv } from '@lectern/config';
import { expect } from 'chai';
import { SignJWT } from 'jose';
import { derivePlayerKeys } from '@lectern/learner-runs';
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
import {
  anonymousId,
  createEmbedKey,
  playerApi,
  publishedCourse,
  quizFinishEvents,
  signIdentity,
} from '../support/player.js';

type Open = OpenRunResult;

interface Download {
  status: number;
  headers: Headers;
  pdf: Buffer;
  /** The JSON error body of a refusal. */
  error?: { error: string; message: string; reason?: string };
}

/**
 * The player's certificate download over a real port with the real render worker: issuing on the first
 * download, the same serial after, one certificate and one event under a race, every refusal, and the course
 * that then refuses deletion (issue 11 "Issuing", docs/certificates.md).
 */
describe('learner runs × certificates: GET /player/v1/runs/:id/certificate', function () {
  this.timeout(60_000);
  let app: CustomApp;
  let worker: JobWorkerHandle;
  let player: ReturnType<typeof playerApi>;
  const em = () => app.rt.orm.em.fork();

  before(async () => {
    // /verify lookups of the whole run share one budget per address (127.0.0.1); this file is not about the limit.
    app = await startCustomApp({ VERIFY_LOOKUPS_PER_MINUTE: '1000' });
    const settings = certificateRenderSettings(parseEnv(CERTIFICATE_WORKER_ENV, {}));
    worker = await startCertificateWorker(app.rt, { ...settings, concurrency: 2 });
    player = playerApi(app.url);
  });
  after(async () => {
    await worker?.stop();
    await app?.close();
  });

  /** A download with the token in the header (`via: 'header'`), in `?token=` or not at all. */
  async function download(
    completionId: string,
    token: string | null,
    via: 'header' | 'query' = 'header',
    headers: Record<string, string> = {},
  ): Promise<Download> {
    const path = `/player/v1/runs/${completionId}/certificate`;
    const url =
      via === 'query' && token !== null
        ? `${app.url}${path}?token=${encodeURIComponent(token)}`
        : `${app.url}${path}`;
    const res = await fetch(url, {
      headers: {
        ...headers,
        ...(via === 'header' && token !== null ? { authorization: `Bearer ${token}` } : {}),
      },
    });
    const buf = Buffer.from(await res.arrayBuffer());
    const isJson = (res.headers.get('content-type') ?? '').includes('json');
    const body: unknown = isJson ? JSON.parse(buf.toString('utf8')) : null;
    await checkContract(url, 'GET', res.status, res.headers.get('content-type'), body);
    return {
      status: res.status,
      headers: res.headers,
      pdf: buf,
      error: isJson ? (body as Download['error']) : undefined,
    };
  }

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
  /** Answers both graded blocks (right or wrong) and reaches the last screen. */
  async function finish(run: Open, right: boolean) {
    const res = await player<{ result?: { score: number; passed: boolean } }>(
      'POST',
      `/runs/${run.completion.id}/events`,
      {
        token: run.runToken,
        body: {
          batchId: 'finish',
          events: quizFinishEvents({ q1: right ? 'a' : 'b' }),
        },
      },
    );
    expect(res.status, res.text).to.equal(200);
    return res.body.data.result!;
  }
  const issuedEvents = async (ws: TestWorkspace) =>
    (await outboxOf(em(), ws.id)).filter((e) => e.type === 'certificate.issued');
  const certificatesOf = (completionId: string) =>
    boundQuery<{ serial: string; course_title: string; locale: string; score: string }>(
      em(),
      'select serial, course_title, locale, score from issued_certificates where completion_id = ?',
      [completionId],
    );
  const SERIAL = /LC-[2-9A-HJKMNP-Z]{4}-[2-9A-HJKMNP-Z]{4}-[2-9A-HJKMNP-Z]{4}/;

  it('a signed learner who passed downloads via the header: issued once, the same serial via ?token=, one event with the SPEC payload', async () => {
    const { ws, courseId, ek } = await setup();
    const identity = await signIdentity(
      ek,
      { name: 'Ada Lovelace', email: 'ada@example.test' },
      { sub: 'learner-ada' },
    );
    const run = await open({ courseId, identity });
    expect(await finish(run, true)).to.include({ score: 100, passed: true });

    const first = await download(run.completion.id, run.runToken);
    expect(first.status, first.error?.message).to.equal(200);
    expect(first.headers.get('content-type')).to.equal('application/pdf');
    const disposition = first.headers.get('content-disposition') ?? '';
    expect(disposition).to.match(/^attachment; filename="Fire safety at work - certificate LC-[^"]+\.pdf"$/);
    expect(first.headers.get('cache-control')).to.equal('private, no-store');
    expect(first.headers.get('referrer-policy')).to.equal('no-referrer');
    expect(first.pdf.subarray(0, 5).toString()).to.equal('%PDF-');
    const text = await pdfText(first.pdf);
    const serial = SERIAL.exec(text)?.[0];
    expect(serial, text).to.be.a('string');
    expect(disposition).to.include(serial!);
    expect(text).to.include('Ada Lovelace').and.include('Fire safety at work').and.include('Acme Academy');

    const [cert] = await certificatesOf(run.completion.id);
    expect(cert.serial).to.equal(serial);
    const events = await issuedEvents(ws);
    expect(events).to.have.length(1);
    const [identityRow] = await boundQuery<{ id: string; issued_at: Date }>(
      em(),
      `select i.id, c.issued_at from identities i join issued_certificates c on c.identity_id = i.id
        where i.workspace_id = ? and i.external_id = 'learner-ada'`,
      [ws.id],
    );
    expect(events[0].data).to.deep.equal({
      course: { id: courseId, title: 'Fire safety at work' },
      identity: {
        id: identityRow.id,
        externalId: 'learner-ada',
        name: 'Ada Lovelace',
        email: 'ada@example.test',
      },
      serial,
      verifyUrl: `${app.rt.cfg.PUBLIC_URL}/verify/${serial}`,
      score: 100,
      issuedAt: new Date(identityRow.issued_at).toISOString(),
    });

    // Later downloads, as a plain link and with the header again: the same certificate and PDF, no event.
    const viaQuery = await download(run.completion.id, run.runToken, 'query');
    expect(viaQuery.status, viaQuery.error?.message).to.equal(200);
    expect(viaQuery.pdf.equals(first.pdf)).to.equal(true);
    const again = await download(run.completion.id, run.runToken);
    expect(again.pdf.equals(first.pdf)).to.equal(true);
    expect(await certificatesOf(run.completion.id)).to.have.length(1);
    expect(await issuedEvents(ws)).to.have.length(1);

    // The records API sees the same certificate.
    const rec = await api(app.base, ws.key)<{ serial: string; identityExternalId: string; score: number }>(
      'GET',
      `/issued-certificates/${serial!.toLowerCase().replaceAll('-', '')}`,
    );
    expect(rec.status, rec.text).to.equal(200);
    expect(rec.body.data).to.include({ serial, identityExternalId: 'learner-ada', score: 100 });
  });

  it('four racing first downloads issue one certificate and one event; every download gets the same PDF', async () => {
    const { ws, courseId, ek } = await setup({ title: 'Race course' });
    const run = await open({
      courseId,
      identity: await signIdentity(ek, { name: 'Grace Hopper' }, { sub: 'g' }),
    });
    await finish(run, true);
    const outs = await Promise.all(
      [0, 1, 2, 3].map((i) => download(run.completion.id, run.runToken, i % 2 ? 'query' : 'header')),
    );
    for (const o of outs) expect(o.status, o.error?.message).to.equal(200);
    const texts = await Promise.all(outs.map((o) => pdfText(o.pdf)));
    const serials = new Set(texts.map((t) => SERIAL.exec(t)?.[0]));
    expect(serials.size).to.equal(1);
    expect(await certificatesOf(run.completion.id)).to.have.length(1);
    expect(await issuedEvents(ws)).to.have.length(1);
  });

  it('the course title is printed in the locale served to the run', async () => {
    const { courseId, ek, req } = await setup();
    const tr = await req<{ id: string }>('POST', `/courses/${courseId}/translations`, { locale: 'fr' });
    expect(tr.status, tr.text).to.equal(201);
    const patch = await req('PATCH', `/courses/${courseId}/translations/${tr.body.data.id}`, {
      content: { title: 'Sécurité incendie au travail' },
    });
    expect(patch.status, patch.text).to.equal(200);
    const run = await open({
      courseId,
      lang: 'fr-FR',
      identity: await signIdentity(ek, { name: 'Marie Curie' }, { sub: 'marie' }),
    });
    expect(run.completion.locale).to.equal('fr');
    await finish(run, true);
    const got = await download(run.completion.id, run.runToken);
    expect(got.status, got.error?.message).to.equal(200);
    expect(await pdfText(got.pdf))
      .to.include('Sécurité incendie au travail')
      .and.include('Marie Curie');
    const [cert] = await certificatesOf(run.completion.id);
    expect(cert).to.include({ course_title: 'Sécurité incendie au travail', locale: 'fr' });
  });

  it('refusals: below the pass mark 403, not finished 403 saying so, anonymous refused; nothing issued', async () => {
    const { ws, courseId, ek } = await setup();
    const failed = await open({
      courseId,
      identity: await signIdentity(ek, { name: 'Low Score' }, { sub: 'low' }),
    });
    expect(await finish(failed, false)).to.include({ score: 50, passed: false });
    const below = await download(failed.completion.id, failed.runToken);
    expect(below.status).to.equal(403);
    expect(below.error).to.include({ error: 'forbidden', reason: 'not_passed' });
    expect(below.error!.message).to.match(/at least 75%.*scored 50%/);

    const unfinished = await open({
      courseId,
      identity: await signIdentity(ek, { name: 'Halfway' }, { sub: 'half' }),
    });
    const early = await download(unfinished.completion.id, unfinished.runToken, 'query');
    expect(early.status).to.equal(403);
    expect(early.error).to.include({ error: 'forbidden', reason: 'not_finished' });
    expect(early.error!.message).to.match(/not finished/);

    const anon = await open({ courseId, anonymousId: anonymousId(7) });
    await finish(anon, true);
    const refused = await download(anon.completion.id, anon.runToken);
    expect(refused.status).to.equal(403);
    expect(refused.error).to.include({ error: 'forbidden', reason: 'anonymous' });
    expect(refused.error!.message).to.match(/anonymous.*signed learner identity/);

    const noName = await open({ courseId, identity: await signIdentity(ek, {}, { sub: 'nameless' }) });
    await finish(noName, true);
    const unnamed = await download(noName.completion.id, noName.runToken);
    expect(unnamed.status).to.equal(403);
    expect(unnamed.error).to.include({ error: 'forbidden', reason: 'no_name' });

    const rows = await boundQuery(em(), 'select id from issued_certificates where workspace_id = ?', [ws.id]);
    expect(rows).to.deep.equal([]);
    expect(await issuedEvents(ws)).to.deep.equal([]);
  });

  it("tokens: another run's token, a forged, a malformed and a missing token are 401 and issue nothing", async () => {
    const { ws, courseId, ek } = await setup();
    const a = await open({ courseId, identity: await signIdentity(ek, { name: 'Run A' }, { sub: 'a' }) });
    const b = await open({ courseId, identity: await signIdentity(ek, { name: 'Run B' }, { sub: 'b' }) });
    await finish(a, true);
    const [head, payload] = a.runToken.split('.');
    const forged = `${head}.${payload}.${'A'.repeat(43)}`;
    const cases: [string, Promise<Download>, RegExp][] = [
      ["another run's (header)", download(a.completion.id, b.runToken), /another run/],
      ["another run's (?token=)", download(a.completion.id, b.runToken, 'query'), /another run/],
      ['forged signature', download(a.completion.id, forged), /not a valid run token/],
      ['garbage in ?token=', download(a.completion.id, 'nope', 'query'), /not a valid run token/],
      ['no token', download(a.completion.id, null), /Bearer <runToken> or \?token=/],
      [
        'malformed header wins over a good ?token=',
        (async () => {
          const res = await fetch(
            `${app.url}/player/v1/runs/${a.completion.id}/certificate?token=${encodeURIComponent(a.runToken)}`,
            { headers: { authorization: `Token ${a.runToken}` } },
          );
          const error = (await res.json()) as Download['error'];
          return { status: res.status, headers: res.headers, pdf: Buffer.alloc(0), error };
        })(),
        /Bearer/,
      ],
    ];
    for (const [what, pending, message] of cases) {
      const res = await pending;
      expect(res.status, what).to.equal(401);
      expect(res.error?.error, what).to.equal('unauthorized');
      expect(res.error?.message, what).to.match(message);
    }
    expect(await certificatesOf(a.completion.id)).to.deep.equal([]);
    expect(await issuedEvents(ws)).to.deep.equal([]);
  });

  it('an expired run token is 401 saying so (header and ?token=); the same claims unexpired download', async () => {
    const { ws, courseId, ek } = await setup();
    const run = await open({ courseId, identity: await signIdentity(ek, { name: 'Late' }, { sub: 'late' }) });
    await finish(run, true);
    const { runTokenKey } = derivePlayerKeys(Buffer.from(app.rt.cfg.WEBHOOK_SECRET_KEY!, 'hex'), {
      derived: true,
    });
    const now = Math.floor(Date.now() / 1000);
    const token = (exp: number) =>
      new SignJWT({ wid: ws.id })
        .setProtectedHeader({ alg: 'HS256' })
        .setSubject(run.completion.id)
        .setAudience('lectern:run')
        .setIssuedAt(now - 7200)
        .setExpirationTime(exp)
        .sign(runTokenKey);
    const expired = await token(now - 3600);
    for (const via of ['header', 'query'] as const) {
      const res = await download(run.completion.id, expired, via);
      expect(res.status, via).to.equal(401);
      expect(res.error?.message, via).to.match(/expired/);
    }
    expect(await certificatesOf(run.completion.id)).to.deep.equal([]);
    const ok = await download(run.completion.id, await token(now + 60), 'query');
    expect(ok.status, ok.error?.message).to.equal(200);
  });

  it('once a certificate is issued the course refuses DELETE with 409; unpublished, the certificate still downloads', async () => {
    const { courseId, ek, req } = await setup({ title: 'Kept course' });
    const run = await open({ courseId, identity: await signIdentity(ek, { name: 'Keeper' }, { sub: 'k' }) });
    await finish(run, true);
    const first = await download(run.completion.id, run.runToken);
    expect(first.status).to.equal(200);
    const del = await req('DELETE', `/courses/${courseId}`);
    expect(del.status, del.text).to.equal(409);
    expect(del.body.error).to.equal('conflict');
    expect((await req('GET', `/courses/${courseId}`)).status).to.equal(200);
    expect((await req('PATCH', `/courses/${courseId}`, { status: 'draft' })).status).to.equal(200);
    const later = await download(run.completion.id, run.runToken);
    expect(later.status, later.error?.message).to.equal(200);
    expect(later.pdf.equals(first.pdf)).to.equal(true);
  });

  it('deleting the learner deletes the run but keeps the certificate verifiable; the run token then answers 404', async () => {
    const { ws, courseId, ek, req } = await setup({ title: 'Erasure course' });
    const run = await open({
      courseId,
      identity: await signIdentity(ek, { name: 'Forgotten' }, { sub: 'gdpr' }),
    });
    await finish(run, true);
    expect((await download(run.completion.id, run.runToken)).status).to.equal(200);
    const [cert] = await certificatesOf(run.completion.id);
    const [identity] = await boundQuery<{ id: string }>(
      em(),
      `select id from identities where workspace_id = ? and external_id = 'gdpr'`,
      [ws.id],
    );
    expect((await req('DELETE', `/identities/${identity.id}`)).status).to.equal(204);
    expect(
      await boundQuery(em(), 'select id from completions where id = ?', [run.completion.id]),
    ).to.deep.equal([]);
    const [kept] = await boundQuery<{ completion_id: string | null }>(
      em(),
      'select completion_id from issued_certificates where serial = ?',
      [cert.serial],
    );
    expect(kept.completion_id).to.equal(null);
    const verify = await fetch(`${app.url}/verify/${cert.serial}`, {
      headers: { accept: 'application/json' },
    });
    expect(verify.status).to.equal(200);
    expect(((await verify.json()) as { data: { valid: boolean; learnerName: string } }).data).to.include({
      valid: true,
      learnerName: 'Forgotten',
    });
    const gone = await download(run.completion.id, run.runToken);
    expect(gone.status).to.equal(404);
    expect(gone.error?.error).to.equal('not_found');
  });

  it('the route is in the OpenAPI document under the Player API tag with its 200 PDF, 401, 403 and 404', async () => {
    const doc = (await (await fetch(`${app.base}/openapi.json`)).json()) as {
      paths: Record<
        string,
        Record<
          string,
          {
            tags: string[];
            security: unknown[];
            parameters?: { name: string; in: string }[];
            responses: Record<string, { content?: Record<string, unknown> }>;
          }
        >
      >;
    };
    const op = doc.paths['/player/v1/runs/{completionId}/certificate']?.get;
    expect(op, 'documented').to.not.equal(undefined);
    expect(op.tags).to.deep.equal(['Player API']);
    expect(op.security).to.deep.equal([{ runToken: [] }]);
    expect(op.parameters?.map((p) => `${p.in}:${p.name}`)).to.include.members([
      'path:completionId',
      'query:token',
    ]);
    expect(op.responses['200'].content).to.have.property('application/pdf');
    expect(op.responses).to.include.keys('401', '403', '404');
  });

  it('CORS: a page on another origin may fetch the PDF and read its file name', async () => {
    const { courseId, ek } = await setup();
    const run = await open({ courseId, identity: await signIdentity(ek, { name: 'Cross' }, { sub: 'x' }) });
    const pre = await fetch(`${app.url}/player/v1/runs/${run.completion.id}/certificate`, {
      method: 'OPTIONS',
      headers: {
        origin: 'https://lms.example',
        'access-control-request-method': 'GET',
        'access-control-request-headers': 'authorization',
      },
    });
    expect(pre.status).to.equal(204);
    expect(pre.headers.get('access-control-allow-methods')).to.include('GET');
    await finish(run, true);
    const got = await download(run.completion.id, run.runToken, 'header', { origin: 'https://lms.example' });
    expect(got.status).to.equal(200);
    expect(got.headers.get('access-control-allow-origin')).to.equal('*');
    expect(got.headers.get('access-control-expose-headers')).to.include('Content-Disposition');
  });
});
