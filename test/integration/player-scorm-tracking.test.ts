import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { parseEnv } from '@lectern/config';
import { boundQuery } from '@lectern/db';
import { lazyPlayerKeys } from '@lectern/api';
import {
  CERTIFICATE_WORKER_ENV,
  certificateRenderSettings,
  startCertificateWorker,
} from '@lectern/certificates';
import { FIRST_TRACKING_VERSION, derivePlayerKeys, scopedTokens } from '@lectern/learner-runs';
import { parseEncryptionKey } from '@lectern/secrets';
import type { JobWorkerHandle } from '@lectern/jobs';
import type {
  CertificateVerification,
  CompletionDto,
  IdentityDto,
  IssuedCertificateDto,
  OpenRunResult,
} from '@lectern/contracts';
import { makeWorkspace, type TestWorkspace } from '../support/context.js';
import { startCustomApp, outboxOf, type CustomApp, type OutboxRow } from '../support/spine.js';
import { api, expectIssue } from '../support/authoring.js';
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

/**
 * track=1: a SCORM package opens runs through the Player API with the course-bound tracking token baked into
 * it and the LMS's learner (docs/scorm.md). The token is minted here exactly as the export does it,
 * with the API's own player keys.
 */
describe('learner runs: SCORM tracking runs (issue 12, track=1)', function () {
  this.timeout(60_000);
  const runTokenKey = randomBytes(32).toString('hex');
  let app: CustomApp;
  let worker: JobWorkerHandle;
  let player: ReturnType<typeof playerApi>;
  let keys: ReturnType<ReturnType<typeof lazyPlayerKeys>>;
  before(async () => {
    // /verify lookups of the whole run share one budget per address; this file is not about the limit.
    app = await startCustomApp({ VERIFY_LOOKUPS_PER_MINUTE: '1000', RUN_TOKEN_KEY: runTokenKey });
    const settings = certificateRenderSettings(parseEnv(CERTIFICATE_WORKER_ENV, {}));
    worker = await startCertificateWorker(app.rt, { ...settings, concurrency: 2 });
    player = playerApi(app.url);
    keys = lazyPlayerKeys(app.rt.cfg)();
  });
  after(async () => {
    await worker?.stop();
    await app?.close();
  });
  const em = () => app.rt.orm.em.fork();

  async function setup() {
    const ws = await makeWorkspace(em(), 'scale', 'Acme Academy');
    const courseId = await publishedCourse(app.base, ws.key);
    const token = await keys.tracking.sign({ courseId, workspaceId: ws.id, version: FIRST_TRACKING_VERSION });
    return { ws, courseId, token, req: api(app.base, ws.key) };
  }
  const open = (body: Record<string, unknown>) => player<OpenRunResult>('POST', '/runs', { body });
  /** An open that must succeed (201 first time, 200 on a resume). */
  const opened = async (body: Record<string, unknown>, status: 200 | 201 = 201) => {
    const res = await open(body);
    expect(res.status, res.text).to.equal(status);
    return res.body.data;
  };
  /** Answers both graded blocks right and reaches the last screen: a finished run scoring 100. */
  async function finish(run: OpenRunResult) {
    const res = await player('POST', `/runs/${run.completion.id}/events`, {
      token: run.runToken,
      body: {
        batchId: 'finish',
        events: quizFinishEvents(),
      },
    });
    expect(res.status, res.text).to.equal(200);
  }
  const SERIAL = /LC-[2-9A-HJKMNP-Z]{4}-[2-9A-HJKMNP-Z]{4}-[2-9A-HJKMNP-Z]{4}/;
  /** The run's certificate PDF (issued on the first download) and the serial printed on it. */
  async function certificate(run: OpenRunResult): Promise<{ pdf: Buffer; text: string; serial: string }> {
    const url = `${app.url}/player/v1/runs/${run.completion.id}/certificate`;
    const res = await fetch(url, { headers: { authorization: `Bearer ${run.runToken}` } });
    const pdf = Buffer.from(await res.arrayBuffer());
    expect(res.status, pdf.toString('utf8').slice(0, 300)).to.equal(200);
    await checkContract(url, 'GET', res.status, res.headers.get('content-type'), null);
    const text = await pdfText(pdf);
    const serial = SERIAL.exec(text)?.[0];
    expect(serial, text).to.be.a('string');
    return { pdf, text, serial: serial! };
  }
  async function verifyJson(serial: string): Promise<CertificateVerification> {
    const url = `${app.url}/verify/${serial}`;
    const res = await fetch(url, { headers: { accept: 'application/json' } });
    const body = (await res.json()) as { data: CertificateVerification };
    expect(res.status).to.equal(200);
    await checkContract(url, 'GET', res.status, res.headers.get('content-type'), body);
    return body.data;
  }
  async function verifyHtml(serial: string): Promise<string> {
    const res = await fetch(`${app.url}/verify/${serial}`, { headers: { accept: 'text/html' } });
    expect(res.status).to.equal(200);
    return res.text();
  }
  /** The Open Badges credential of a certificate: the payload of its JWS. */
  async function credentialOf(serial: string): Promise<Record<string, unknown>> {
    const res = await fetch(`${app.url}/verify/${serial}/credential.jwt`);
    expect(res.status).to.equal(200);
    const jws = await res.text();
    return JSON.parse(Buffer.from(jws.split('.')[1], 'base64url').toString('utf8')) as Record<
      string,
      unknown
    >;
  }
  /** What an asserted run's certificate states (pdftotext keeps it on one line). */
  const ASSERTED = "The learner's identity was asserted by an LMS, not verified.";
  const eventsOf = async (ws: TestWorkspace, type?: string): Promise<OutboxRow[]> =>
    (await outboxOf(em(), ws.id)).filter((e) => type === undefined || e.type === type);
  const rowsOf = async (courseId: string) =>
    boundQuery<{ id: string }>(em(), 'select id from completions where course_id = ?', [courseId]);

  it('opens a scorm run for the LMS learner: identity by externalId, events and course.completed with source scorm', async () => {
    const { ws, courseId, token, req } = await setup();
    const first = await open({
      courseId,
      tracking: { token, learnerId: 'lms-42', learnerName: 'Lovelace, Ada' },
    });
    expect(first.status, first.text).to.equal(201);
    const run = first.body.data;
    // The learner view, as for every run: no answer keys.
    expect(JSON.stringify(run.course)).to.not.include('"correct"');
    const again = await open({ courseId, tracking: { token, learnerId: 'lms-42' } });
    expect(again.status).to.equal(200);
    expect(again.body.data.completion.id).to.equal(run.completion.id);

    const identities = (
      await req<{ id: string; externalId: string; name: string | null }[]>('GET', '/identities')
    ).body.data;
    expect(identities).to.have.length(1);
    // A later open without a name keeps the name the LMS gave before.
    expect(identities[0]).to.include({ externalId: 'lms-42', name: 'Lovelace, Ada' });

    const sent = await player<{ result?: { score: number | null; passed: boolean | null } }>(
      'POST',
      `/runs/${run.completion.id}/events`,
      {
        token: run.runToken,
        body: {
          batchId: 'b1',
          events: quizFinishEvents({ q2: false }),
        },
      },
    );
    expect(sent.status, sent.text).to.equal(200);
    expect(sent.body.data.result).to.deep.include({ score: 50, passed: null });

    const rec = (await req<CompletionDto>('GET', `/completions/${run.completion.id}`)).body.data;
    expect(rec).to.include({
      source: 'scorm',
      status: 'completed',
      identityId: identities[0].id,
      identityExternalId: 'lms-42',
      score: 50,
    });
    const listed = (await req<CompletionDto[]>('GET', '/completions')).body.data;
    expect(listed.map((c) => [c.id, c.source])).to.deep.equal([[run.completion.id, 'scorm']]);

    const [completed] = await eventsOf(ws, 'course.completed');
    expect(completed.data).to.include({ source: 'scorm', completionId: run.completion.id });
    expect(completed.data.identity).to.include({ externalId: 'lms-42' });
    expect((await eventsOf(ws, 'course.viewed')).length).to.equal(2);
    expect((await eventsOf(ws, 'course.answered')).length).to.equal(2);
    expect(await eventsOf(ws, 'identity.created')).to.have.length(1);
  });

  it('refuses a bad, foreign or other-course token with 401 and records nothing', async () => {
    const { ws, courseId, token } = await setup();
    const otherCourse = await publishedCourse(app.base, ws.key, { title: 'Other' });
    const foreign = await setup();
    const runToken = (await open({ courseId, anonymousId: anonymousId(7) })).body.data.runToken;
    const refused = [
      'not-a-jwt',
      token.slice(0, -3) + (token.endsWith('AAA') ? 'BBB' : 'AAA'),
      await keys.tracking.sign({ courseId: otherCourse, workspaceId: ws.id, version: 1 }),
      await keys.tracking.sign({ courseId, workspaceId: foreign.ws.id, version: 1 }),
      foreign.token,
      // A run token is signed with the same key, under another audience.
      runToken,
    ];
    for (const t of refused) {
      const res = await open({ courseId, tracking: { token: t, learnerId: 'x-1' } });
      expect(res.status, t).to.equal(401);
      expect(res.body.error).to.equal('unauthorized');
    }
    // Only the anonymous run opened above exists; no identity was made.
    expect(await rowsOf(courseId)).to.have.length(1);
    expect(await eventsOf(ws, 'identity.created')).to.deep.equal([]);
  });

  it('tracking with identity or anonymousId, or a malformed tracking object, is a 400 that changes nothing', async () => {
    const { ws, courseId, token } = await setup();
    const ek = await createEmbedKey(app.base, ws.key);
    const identity = await signIdentity(ek, {}, { sub: 'both' });
    const tracking = { token, learnerId: 'lms-1' };
    expectIssue(await open({ courseId, tracking, identity }), ['identity']);
    expectIssue(await open({ courseId, tracking, anonymousId: anonymousId(3) }), ['anonymousId']);
    expectIssue(await open({ courseId, tracking: { token, learnerId: '  ' } }), ['tracking', 'learnerId']);
    expectIssue(await open({ courseId, tracking: { learnerId: 'lms-1' } }), ['tracking', 'token']);
    expectIssue(await open({ courseId, tracking: { token, learnerId: 'x'.repeat(256) } }), [
      'tracking',
      'learnerId',
    ]);
    expect(await rowsOf(courseId)).to.deep.equal([]);
    expect(await eventsOf(ws, 'course.viewed')).to.deep.equal([]);
  });

  it('the attack of issue 20: a package cannot rename, claim or lock out the signed learners (of its own course or another)', async () => {
    const { ws, courseId: tracked, token, req } = await setup();
    const other = await publishedCourse(app.base, ws.key, { title: 'Forklift basics' });
    const ek = await createEmbedKey(app.base, ws.key);
    const signed = async (sub: string, claims: Record<string, unknown> = {}) =>
      signIdentity(ek, claims, { sub });

    // victim-42 is the workspace's signed learner, with a certificate of the other course.
    const victimRun = await opened({
      courseId: other,
      identity: await signed('victim-42', { name: 'Victor Victim', email: 'victor@example.test' }),
    });
    await finish(victimRun);
    const victimCert = await certificate(victimRun);
    expect(victimCert.text).to.include('Victor Victim');
    const verifiedBefore = await verifyJson(victimCert.serial);
    expect(verifiedBefore).to.include({
      learnerName: 'Victor Victim',
      source: 'embed',
      learnerIdentity: 'verified',
    });
    const victim = (await req<IdentityDto[]>('GET', '/identities?search=victim-42')).body.data;
    expect(victim).to.have.length(1);

    // The attack: the tracked package names victim-42 and a new name. The open is the LMS learner's own.
    const attack = await opened({
      courseId: tracked,
      tracking: { token, learnerId: 'victim-42', learnerName: 'Mallory Renamed' },
    });
    const attacked = await req<IdentityDto>('GET', `/identities/${victim[0].id}`);
    expect(attacked.body.data).to.include({
      externalId: 'victim-42',
      name: 'Victor Victim',
      email: 'victor@example.test',
    });
    // Two learners now carry the id: the signed one and the one this course's LMS asserted.
    const both = (await req<IdentityDto[]>('GET', '/identities?search=victim-42')).body.data;
    expect(both.map((i) => [i.name, i.lmsCourseId]).sort()).to.deep.equal([
      ['Mallory Renamed', tracked],
      ['Victor Victim', null],
    ]);
    const [attackRow] = (await req<CompletionDto[]>('GET', `/completions?courseId=${tracked}`)).body.data;
    expect(attackRow).to.include({ id: attack.completion.id, source: 'scorm' });
    expect(attackRow.identityId).to.not.equal(victim[0].id);
    // The victim's certificate, its PDF and /verify are unchanged.
    const again = await certificate(victimRun);
    expect(again.serial).to.equal(victimCert.serial);
    expect(again.pdf.equals(victimCert.pdf)).to.equal(true);
    expect(await verifyJson(victimCert.serial)).to.deep.equal(verifiedBefore);
    expect(await verifyHtml(victimCert.serial))
      .to.include('Victor Victim')
      .and.not.include('Mallory');

    // The signed victim opens the tracked course too: their own run (201), not a 409, not the LMS learner's run.
    const victimTracked = await opened({ courseId: tracked, identity: await signed('victim-42') });
    expect(victimTracked.completion.id).to.not.equal(attack.completion.id);

    // future-learner-7 asserted first, then signed: the signed open is served (201), with a learner of its own.
    const early = await opened({
      courseId: tracked,
      tracking: { token, learnerId: 'future-learner-7', learnerName: 'Eve Early' },
    });
    const late = await opened({
      courseId: tracked,
      identity: await signed('future-learner-7', { name: 'Frank Future' }),
    });
    expect(late.completion.id).to.not.equal(early.completion.id);
    // The API's upsert of the id finds the signed learner (200), never the asserted one.
    const upsert = await req<IdentityDto>('POST', '/identities', { externalId: 'future-learner-7' });
    expect(upsert.status, upsert.text).to.equal(200);
    expect(upsert.body.data.name).to.equal('Frank Future');
    const runs = (await req<CompletionDto[]>('GET', `/completions?courseId=${tracked}`)).body.data;
    expect(runs.map((c) => [c.identityExternalId, c.source]).sort()).to.deep.equal([
      ['future-learner-7', 'embed'],
      ['future-learner-7', 'scorm'],
      ['victim-42', 'embed'],
      ['victim-42', 'scorm'],
    ]);
    expect(new Set(runs.map((c) => c.identityId)).size).to.equal(4);
    expect(await eventsOf(ws, 'identity.created')).to.have.length(4);
  });

  it("an LMS learner of one course is not the same learner in another course's package", async () => {
    const { ws, courseId, token } = await setup();
    const second = await publishedCourse(app.base, ws.key, { title: 'Second' });
    const secondToken = await keys.tracking.sign({ courseId: second, workspaceId: ws.id, version: 1 });
    const a = await opened({ courseId, tracking: { token, learnerId: 'lms-7', learnerName: 'Ada' } });
    await opened({
      courseId: second,
      tracking: { token: secondToken, learnerId: 'lms-7', learnerName: 'Renamed By Second' },
    });
    const [row] = await boundQuery<{ name: string }>(
      em(),
      `select i.name from completions c join identities i on i.id = c.identity_id where c.id = ?`,
      [a.completion.id],
    );
    expect(row.name).to.equal('Ada');
    expect(await eventsOf(ws, 'identity.created')).to.have.length(2);
  });

  it('a certificate of an asserted learner says so on the PDF, /verify (HTML, JSON) and the records; a signed one reads as before', async () => {
    const { ws, courseId, token, req } = await setup();
    const ek = await createEmbedKey(app.base, ws.key);
    const asserted = await opened({
      courseId,
      tracking: { token, learnerId: 'lms-ada', learnerName: 'Ada Lovelace' },
    });
    await finish(asserted);
    const lms = await certificate(asserted);
    expect(lms.text).to.include('Ada Lovelace').and.include(ASSERTED);
    expect(await verifyJson(lms.serial)).to.include({
      valid: true,
      learnerName: 'Ada Lovelace',
      source: 'scorm',
      learnerIdentity: 'asserted',
    });
    expect(await verifyHtml(lms.serial))
      .to.include('Asserted by an LMS, not verified')
      .and.include('asserted by an LMS, not verified.');
    expect(await credentialOf(lms.serial)).to.include({ description: ASSERTED });

    const signedRun = await opened({
      courseId,
      identity: await signIdentity(ek, { name: 'Grace Hopper' }, { sub: 'grace' }),
    });
    await finish(signedRun);
    const own = await certificate(signedRun);
    expect(own.text).to.include('Grace Hopper').and.not.include('LMS');
    expect(await verifyJson(own.serial)).to.include({ source: 'embed', learnerIdentity: 'verified' });
    expect(await verifyHtml(own.serial)).to.not.include('LMS');
    expect(await credentialOf(own.serial)).to.not.have.property('description');

    const records = (await req<IssuedCertificateDto[]>('GET', `/issued-certificates?courseId=${courseId}`))
      .body.data;
    expect(records.map((r) => [r.serial, r.source]).sort()).to.deep.equal(
      [
        [lms.serial, 'scorm'],
        [own.serial, 'embed'],
      ].sort(),
    );
    const one = await req<IssuedCertificateDto>('GET', `/issued-certificates/${lms.serial}`);
    expect(one.body.data).to.include({ source: 'scorm', identityExternalId: 'lms-ada' });
  });

  it("rotating the course's tracking secret retires every package exported before; later exports work", async () => {
    const { ws, courseId, token, req } = await setup();
    const key = derivePlayerKeys(parseEncryptionKey(runTokenKey, 'RUN_TOKEN_KEY'), { derived: false });
    // A package exported before tokens carried a secret version: it counts as the first version.
    const legacy = (
      await scopedTokens(() => key.runTokenKey, {
        audience: 'lectern:scorm-tracking',
        refused: 'Tracking token refused',
        notOurs: 'not ours',
      }).sign(courseId, ws.id)
    ).token;
    const run = await opened({ courseId, tracking: { token, learnerId: 'lms-1', learnerName: 'Ada' } });
    await opened({ courseId, tracking: { token: legacy, learnerId: 'lms-1' } }, 200);

    const rotated = await req<{ courseId: string; version: number; rotatedAt: string }>(
      'POST',
      `/courses/${courseId}/tracking-secret/rotate`,
    );
    expect(rotated.status, rotated.text).to.equal(200);
    expect(rotated.body.data).to.include({ courseId, version: 2 });
    expect(Date.parse(rotated.body.data.rotatedAt)).to.be.a('number').and.not.NaN;

    const viewsBefore = (await eventsOf(ws, 'course.viewed')).length;
    for (const old of [token, legacy]) {
      for (const learnerId of ['lms-1', 'lms-new']) {
        const res = await open({ courseId, tracking: { token: old, learnerId } });
        expect(res.status, res.text).to.equal(401);
        expect(res.body.error).to.equal('unauthorized');
        expect(res.body.message).to.include('rotated');
      }
    }
    expect((await eventsOf(ws, 'course.viewed')).length).to.equal(viewsBefore);
    // A package exported now carries the new version: it resumes the LMS learner's run.
    const fresh = await keys.tracking.sign({ courseId, workspaceId: ws.id, version: 2 });
    const resumed = await opened({ courseId, tracking: { token: fresh, learnerId: 'lms-1' } }, 200);
    expect(resumed.completion.id).to.equal(run.completion.id);
    // Signed learners and the course itself are untouched by a rotation.
    const course = await req<{ updatedAt: string; status: string }>('GET', `/courses/${courseId}`);
    expect(course.body.data.status).to.equal('published');

    // Rotating again retires the version-2 packages as well.
    const twice = await req<{ version: number }>('POST', `/courses/${courseId}/tracking-secret/rotate`);
    expect(twice.body.data.version).to.equal(3);
    expect((await open({ courseId, tracking: { token: fresh, learnerId: 'lms-1' } })).status).to.equal(401);
  });

  it("rotation: 404 for another workspace's course or none, 403 with a read-only key, 401 without a key", async () => {
    const { ws, courseId, token } = await setup();
    const foreign = await makeWorkspace(em(), 'scale', 'Other');
    const path = `/courses/${courseId}/tracking-secret/rotate`;
    for (const [res, status, error] of [
      [await api(app.base, foreign.key)('POST', path), 404, 'not_found'],
      [await api(app.base, ws.key)('POST', '/courses/crs_nope/tracking-secret/rotate'), 404, 'not_found'],
      [await api(app.base, ws.readKey)('POST', path), 403, 'insufficient_scope'],
      [await api(app.base, 'lk_nope')('POST', path), 401, 'unauthorized'],
    ] as const) {
      expect(res.status, res.text).to.equal(status);
      expect(res.body.error).to.equal(error);
    }
    // Nothing was rotated: the course's packages still report.
    await opened({ courseId, tracking: { token, learnerId: 'lms-1' } });
    const [row] = await boundQuery<{ tracking_version: number }>(
      em(),
      'select tracking_version from courses where id = ?',
      [courseId],
    );
    expect(row.tracking_version).to.equal(1);
  });
});
