import { expect } from 'chai';
import { boundQuery } from '@lectern/db';
import { setBilling, setPlan } from '@lectern/admin';
import { usageMonth } from '@lectern/plans';
import type { CompletionDto, CompletionWithAnswersDto, AttemptDto, OpenRunResult } from '@lectern/contracts';
import { makeWorkspace, type TestWorkspace } from '../support/context.js';
import { startCustomApp, outboxOf, type CustomApp, type OutboxRow } from '../support/spine.js';
import { api, expectIssue, expectNotFound } from '../support/authoring.js';
import { call } from '../support/http.js';
import {
  anonymousId,
  createEmbedKey,
  playerApi,
  publishedCourse,
  signIdentity,
  unsignedToken,
} from '../support/player.js';

type Open = OpenRunResult;
interface BatchData {
  completion: {
    status: string;
    attempt: number | null;
    progressPercent: number;
    lastScreenId: string | null;
  };
  feedback?: { blockId: string; correct: boolean; explanation?: string }[];
  result?: { score: number | null; passed: boolean | null; attempt: number };
}

describe('learner runs: the Player API, completions and events (issue 9)', () => {
  let app: CustomApp;
  let player: ReturnType<typeof playerApi>;
  before(async () => {
    app = await startCustomApp();
    player = playerApi(app.url);
  });
  after(async () => app?.close());
  const em = () => app.rt.orm.em.fork();

  async function setup(plan: 'sandbox' | 'build' | 'scale' = 'scale', course: Record<string, unknown> = {}) {
    const ws = await makeWorkspace(em(), plan);
    const courseId = await publishedCourse(app.base, ws.key, course);
    const ek = await createEmbedKey(app.base, ws.key);
    return { ws, courseId, ek, req: api(app.base, ws.key) };
  }
  const eventsOf = async (ws: TestWorkspace, type?: string): Promise<OutboxRow[]> =>
    (await outboxOf(em(), ws.id)).filter((e) => type === undefined || e.type === type);
  const views = async (wsId: string) =>
    Number(
      (
        await boundQuery<{ count: string }>(
          em(),
          `select count from usage_counters where workspace_id = ? and month = ? and metric = 'views'`,
          [wsId, usageMonth()],
        )
      )[0]?.count ?? 0,
    );
  const open = (body: Record<string, unknown>) => player<Open>('POST', '/runs', { body });
  const send = (run: Open, batchId: string, events: unknown[]) =>
    player<BatchData>('POST', `/runs/${run.completion.id}/events`, {
      token: run.runToken,
      body: { batchId, events },
    });

  describe('embed keys', () => {
    it('creates (secret once), lists without secrets, deletes with 204; another workspace gets 404', async () => {
      const { ws, ek, req } = await setup();
      expect(ek.id).to.match(/^ek_/);
      expect(ek.secret).to.match(/^esk_[A-Za-z0-9_-]{43}$/);
      const list = await req<{ id: string; name: string; createdAt: string }[]>('GET', '/embed-keys');
      expect(list.status).to.equal(200);
      expect(list.body.data).to.have.length(1);
      expect(list.body.data[0]).to.have.keys('id', 'name', 'createdAt');
      expect(list.text).to.not.include(ek.secret);
      const stored = await boundQuery<{ secret_encrypted: string }>(
        em(),
        'select secret_encrypted from embed_keys where id = ?',
        [ek.id],
      );
      expect(stored[0].secret_encrypted).to.not.include(ek.secret.slice(4));
      const other = await makeWorkspace(em(), 'scale');
      expectNotFound(await api(app.base, other.key)('DELETE', `/embed-keys/${ek.id}`));
      expect(
        (await call(app.base, 'POST', '/embed-keys', { key: ws.readKey, body: { name: 'x' } })).status,
      ).to.equal(403);
      expectIssue(await req('POST', '/embed-keys', { name: '  ' }), ['name']);
      expect((await req('DELETE', `/embed-keys/${ek.id}`)).status).to.equal(204);
      expectNotFound(await req('DELETE', `/embed-keys/${ek.id}`));
      expect((await req<unknown[]>('GET', '/embed-keys')).body.data).to.deep.equal([]);
    });

    it('several keys live at once: a token of either opens the run; deleting one refuses its tokens from then on', async () => {
      const { courseId, ek, req } = await setup();
      const keyB = await createEmbedKeyFor(req);
      const t1 = await signIdentity(ek, {}, { sub: 'rot-1' });
      const t2 = await signIdentity(keyB, {}, { sub: 'rot-2' });
      expect((await open({ courseId, identity: t1 })).status).to.equal(201);
      expect((await open({ courseId, identity: t2 })).status).to.equal(201);
      expect((await req('DELETE', `/embed-keys/${ek.id}`)).status).to.equal(204);
      const refused = await open({ courseId, identity: t1 });
      expect(refused.status).to.equal(401);
      expect(refused.body.error).to.equal('unauthorized');
      expect(refused.body.message).to.match(/deleted/);
      expect((await open({ courseId, identity: t2 })).status).to.equal(200);
    });
  });

  async function createEmbedKeyFor(req: ReturnType<typeof api>) {
    const res = await req<{ id: string; secret: string }>('POST', '/embed-keys', { name: 'second' });
    expect(res.status).to.equal(201);
    return res.body.data;
  }

  describe('identity tokens: every refusal is a 401 saying which, never an anonymous run', () => {
    it('refuses each bad token on POST /runs and on the embed page, and records nothing', async () => {
      const { ws, courseId, ek, req } = await setup();
      const otherCourse = await publishedCourse(app.base, ws.key, { title: 'Other' });
      const foreign = await setup();
      const revoked = await createEmbedKeyFor(req);
      const revokedToken = await signIdentity(revoked);
      expect((await req('DELETE', `/embed-keys/${revoked.id}`)).status).to.equal(204);
      const cases: [string, string, RegExp][] = [
        ['bad signature', await signIdentity({ id: ek.id, secret: 'esk_wrong' }), /signature/],
        ['unknown kid', await signIdentity(ek, {}, { kid: 'ek_nope' }), /kid/],
        ['no kid', await signIdentity(ek, {}, { kid: null }), /kid/],
        ['revoked kid', revokedToken, /deleted/],
        ["another workspace's key", await signIdentity(foreign.ek), /kid/],
        ['expired', await signIdentity(ek, {}, { expiresIn: -3600 }), /expired/],
        ['missing exp', await signIdentity(ek, {}, { expiresIn: null }), /exp claim is missing/],
        ['missing sub', await signIdentity(ek, {}, { sub: null }), /sub claim is missing/],
        ['exp over 30 days', await signIdentity(ek, {}, { expiresIn: 31 * 24 * 3600 }), /30 days/],
        ['alg none', unsignedToken(ek.id), /alg must be HS256/],
        ['alg HS512', await signIdentity(ek, {}, { alg: 'HS512' }), /alg must be HS256/],
        ['another course', await signIdentity(ek, { courseId: otherCourse }), /another course/],
        ['not a JWT', 'hello', /not a JWT/],
      ];
      for (const [what, token, message] of cases) {
        const res = await open({ courseId, identity: token });
        expect(res.status, `${what}: ${res.text}`).to.equal(401);
        expect(res.body.error, what).to.equal('unauthorized');
        expect(res.body.message, what).to.match(message);
        const page = await call(app.url, 'GET', `/embed/${courseId}?identity=${encodeURIComponent(token)}`);
        expect(page.status, `${what} (embed)`).to.equal(401);
        expect(page.headers.get('content-type'), what).to.match(/^text\/html/);
      }
      const rows = await boundQuery(em(), 'select id from completions where course_id = ?', [courseId]);
      expect(rows, 'no run was recorded').to.deep.equal([]);
      expect(await eventsOf(ws, 'course.viewed')).to.deep.equal([]);
      expect(await views(ws.id)).to.equal(0);
      // The same course with a good token works, and a courseId claim for this course is accepted.
      expect((await open({ courseId, identity: await signIdentity(ek, { courseId }) })).status).to.equal(201);
    });
  });

  describe('POST /player/v1/runs', () => {
    it('opens (201) then resumes (200) one row; answers the learner view; counts each open; events field by field', async () => {
      const { ws, courseId, ek } = await setup('scale', { passingScore: 50 });
      const token = await signIdentity(ek, { name: 'Ada', email: 'ada@example.com' }, { sub: 'ada' });
      const first = await open({ courseId, identity: token });
      expect(first.status, first.text).to.equal(201);
      const d = first.body.data;
      expect(d).to.have.keys('runToken', 'completion', 'course');
      expect(d.completion).to.deep.equal({
        id: d.completion.id,
        status: 'in_progress',
        attempt: null,
        lastScreenId: null,
        progressPercent: 0,
        answers: {},
        locale: 'en',
      });
      expect(d.completion.id).to.match(/^cmp_/);
      expect(d.course).to.have.keys(
        'id',
        'title',
        'direction',
        'locale',
        'quizFeedback',
        'navigation',
        'completion',
        'passingScore',
        'contentHash',
        'theme',
        'screens',
      );
      expect(d.course).to.include({
        id: courseId,
        title: 'Safety 101',
        direction: 'ltr',
        locale: 'en',
        passingScore: 50,
      });
      expect(d.course.theme).to.equal(null);
      const text = JSON.stringify(d.course.screens);
      expect(text).to.not.include('correct');
      expect(text).to.not.include('A is right');
      expect(text).to.not.include('secret facilitator text');
      const courseRow = (await api(app.base, ws.key)<{ contentHash: string }>('GET', `/courses/${courseId}`))
        .body.data;
      expect(d.course.contentHash).to.equal(courseRow.contentHash);

      const again = await open({ courseId, identity: token });
      expect(again.status).to.equal(200);
      expect(again.body.data.completion.id).to.equal(d.completion.id);
      expect(await views(ws.id)).to.equal(2);

      const identities = await api(app.base, ws.key)<
        { id: string; externalId: string; name: string; email: string }[]
      >('GET', '/identities');
      expect(identities.body.data).to.have.length(1);
      const learner = identities.body.data[0];
      expect(learner).to.include({ externalId: 'ada', name: 'Ada', email: 'ada@example.com' });
      const identity = { id: learner.id, externalId: 'ada', name: 'Ada', email: 'ada@example.com' };
      const created = await eventsOf(ws, 'identity.created');
      expect(created.map((e) => e.data)).to.deep.equal([{ identity }]);
      const viewed = await eventsOf(ws, 'course.viewed');
      expect(viewed.map((e) => e.data)).to.deep.equal([
        { course: { id: courseId, title: 'Safety 101' }, identity },
        { course: { id: courseId, title: 'Safety 101' }, identity },
      ]);
      const rec = (await api(app.base, ws.key)<CompletionDto>('GET', `/completions/${d.completion.id}`)).body
        .data;
      expect(rec).to.include({
        courseId,
        identityId: learner.id,
        identityExternalId: 'ada',
        status: 'in_progress',
        source: 'embed',
        score: null,
        passed: null,
        attempt: null,
        locale: 'en',
      });
    });

    it('draft, unknown and another workspace’s courses are the same 404 (Player API and embed page)', async () => {
      const { ws, courseId } = await setup();
      const draft = (await api(app.base, ws.key)<{ id: string }>('POST', '/courses', { title: 'Draft' })).body
        .data.id;
      const bodies = new Set<string>();
      const pages = new Set<string>();
      for (const id of [draft, 'crs_nope', courseId.slice(0, -1) + 'x']) {
        const res = await open({ courseId: id, anonymousId: anonymousId() });
        expect(res.status).to.equal(404);
        bodies.add(JSON.stringify(res.body));
        const page = await call(app.url, 'GET', `/embed/${id}`);
        expect(page.status).to.equal(404);
        pages.add(page.text);
      }
      expect(bodies.size).to.equal(1);
      expect(pages.size).to.equal(1);
      await api(app.base, ws.key)('PATCH', `/courses/${courseId}`, { status: 'draft' });
      const unpublished = await call(app.url, 'GET', `/embed/${courseId}`);
      expect(unpublished.status).to.equal(404);
      expect(pages.has(unpublished.text)).to.equal(true);
    });

    it('validates the body: anonymousId shape, required without identity; nothing recorded', async () => {
      const { ws, courseId } = await setup();
      expectIssue(await open({ courseId }), ['anonymousId'], 'required');
      expectIssue(await open({ courseId, anonymousId: 'short' }), ['anonymousId']);
      expectIssue(await open({ courseId, anonymousId: 'x'.repeat(65) }), ['anonymousId']);
      expectIssue(await open({ courseId, anonymousId: 'has spaces in it!!' }), ['anonymousId']);
      expectIssue(await open({ anonymousId: anonymousId() }), ['courseId']);
      expect(await views(ws.id)).to.equal(0);
    });

    it('anonymous runs: keyed by anonymousId, resumed, identity null everywhere', async () => {
      const { ws, courseId } = await setup();
      const a = await open({ courseId, anonymousId: anonymousId(7) });
      expect(a.status).to.equal(201);
      await send(a.body.data, 'b1', [
        { type: 'screen', screenId: 's1' },
        { type: 'answer', blockId: 'q1', answer: 'a' },
      ]);
      const again = await open({ courseId, anonymousId: anonymousId(7) });
      expect(again.status).to.equal(200);
      expect(again.body.data.completion).to.include({ id: a.body.data.completion.id, lastScreenId: 's1' });
      expect(again.body.data.completion.answers).to.deep.equal({ q1: 'a' });
      const other = await open({ courseId, anonymousId: anonymousId(8) });
      expect(other.status).to.equal(201);
      expect(other.body.data.completion.id).to.not.equal(a.body.data.completion.id);
      const learnerEvents = (await outboxOf(em(), ws.id)).filter((e) =>
        ['course.viewed', 'course.progress', 'course.answered', 'course.completed'].includes(e.type),
      );
      expect(learnerEvents.map((e) => e.type)).to.include.members([
        'course.viewed',
        'course.progress',
        'course.answered',
      ]);
      for (const e of learnerEvents) expect(e.data.identity, e.type).to.equal(null);
      expect(await eventsOf(ws, 'identity.created')).to.deep.equal([]);
      const rec = (
        await api(app.base, ws.key)<CompletionDto>('GET', `/completions/${a.body.data.completion.id}`)
      ).body.data;
      expect(rec).to.include({ identityId: null, identityExternalId: null, source: 'embed' });
    });

    it('two concurrent first opens of one learner make one row and one identity.created', async () => {
      const { ws, courseId, ek } = await setup();
      const token = await signIdentity(ek, {}, { sub: 'racer' });
      const results = await Promise.all(Array.from({ length: 8 }, () => open({ courseId, identity: token })));
      const statuses = results.map((r) => r.status).sort();
      expect(statuses).to.deep.equal([200, 200, 200, 200, 200, 200, 200, 201]);
      expect(new Set(results.map((r) => r.body.data.completion.id)).size).to.equal(1);
      expect(await eventsOf(ws, 'identity.created')).to.have.length(1);
      expect(await eventsOf(ws, 'course.viewed')).to.have.length(8);
      const anon = await Promise.all(
        Array.from({ length: 6 }, () => open({ courseId, anonymousId: anonymousId(99) })),
      );
      expect(new Set(anon.map((r) => r.body.data.completion.id)).size).to.equal(1);
      const [{ n }] = await boundQuery<{ n: number }>(
        em(),
        'select count(*)::int as n from completions where course_id = ?',
        [courseId],
      );
      expect(n).to.equal(2);
    });

    it('serves a translation for lang (source otherwise) and grades against the locale served', async () => {
      const { ws, courseId, req } = await setup('scale', {
        screens: [
          {
            id: 's1',
            title: 'Blanks',
            blocks: [
              {
                id: 'f1',
                type: 'fill_in_blank',
                text: 'Say {{x}}',
                blanks: [{ id: 'x', answers: ['hello'] }],
              },
            ],
          },
          { id: 's2', title: 'End', blocks: [] },
        ],
      });
      const tr = await req<{ id: string }>('POST', `/courses/${courseId}/translations`, { locale: 'fr' });
      expect(tr.status).to.equal(201);
      const patch = await req('PATCH', `/courses/${courseId}/translations/${tr.body.data.id}`, {
        content: { title: 'Sécurité 101', 's:s1.title': 'Blancs', 's:s1.b:f1.blanks.x.answers.0': 'bonjour' },
      });
      expect(patch.status, patch.text).to.equal(200);
      const fr = await open({ courseId, anonymousId: anonymousId(1), lang: 'fr-CA' });
      expect(fr.body.data.course).to.include({ title: 'Sécurité 101', locale: 'fr' });
      expect(fr.body.data.completion.locale).to.equal('fr');
      expect(fr.body.data.course.screens[0].title).to.equal('Blancs');
      const src = (await req<{ contentHash: string }>('GET', `/courses/${courseId}`)).body.data.contentHash;
      expect(fr.body.data.course.contentHash).to.not.equal(src);
      const de = await open({ courseId, anonymousId: anonymousId(2), lang: 'de' });
      expect(de.body.data.course).to.include({ title: 'Safety 101', locale: 'en', contentHash: src });
      const done = await send(fr.body.data, 'b1', [
        { type: 'answer', blockId: 'f1', answer: 'bonjour' },
        { type: 'screen', screenId: 's2' },
      ]);
      expect(done.body.data.result).to.deep.include({ score: 100, passed: null, attempt: 1 });
      const [completed] = await eventsOf(ws, 'course.completed');
      expect((completed.data.course as { contentHash: string }).contentHash).to.equal(
        fr.body.data.course.contentHash,
      );
      const rec = (await req<CompletionDto>('GET', `/completions/${fr.body.data.completion.id}`)).body.data;
      expect(rec).to.include({ locale: 'fr', contentHash: fr.body.data.course.contentHash, score: 100 });
    });
  });

  describe('POST /player/v1/runs/:id/events', () => {
    async function identified(course: Record<string, unknown> = {}) {
      const s = await setup('scale', course);
      const token = await signIdentity(s.ek, { name: 'Lin' }, { sub: 'lin' });
      const run = (await open({ courseId: s.courseId, identity: token })).body.data;
      const identityId = (await s.req<{ id: string }[]>('GET', '/identities')).body.data[0].id;
      const identity = { id: identityId, externalId: 'lin', name: 'Lin', email: null };
      return { ...s, run, identity };
    }

    it('screen changes emit course.progress; graded answers course.answered; ungraded and repeats nothing', async () => {
      const { ws, courseId, run, identity } = await identified();
      const res = await send(run, 'b1', [
        { type: 'screen', screenId: 's1' },
        { type: 'screen', screenId: 's1' },
        { type: 'answer', blockId: 'q1', answer: 'b' },
        { type: 'screen', screenId: 's2' },
        { type: 'answer', blockId: 'q2', answer: true },
        { type: 'answer', blockId: 'p1', answer: 'y' },
      ]);
      expect(res.status, res.text).to.equal(200);
      expect(res.body.data).to.deep.equal({
        completion: { status: 'in_progress', attempt: null, progressPercent: 66.67, lastScreenId: 's2' },
      });
      const course = { id: courseId, title: 'Safety 101' };
      expect((await eventsOf(ws, 'course.progress')).map((e) => e.data)).to.deep.equal([
        {
          course: { ...course, totalScreens: 3 },
          screen: { id: 's1', title: 'Welcome', index: 0 },
          percent: 33.33,
          identity,
        },
        {
          course: { ...course, totalScreens: 3 },
          screen: { id: 's2', title: 'Middle', index: 1 },
          percent: 66.67,
          identity,
        },
      ]);
      expect((await eventsOf(ws, 'course.answered')).map((e) => e.data)).to.deep.equal([
        {
          course,
          screen: { id: 's1', title: 'Welcome' },
          block: { id: 'q1', type: 'quiz_single_choice' },
          correct: false,
          identity,
        },
        {
          course,
          screen: { id: 's2', title: 'Middle' },
          block: { id: 'q2', type: 'quiz_true_false' },
          correct: true,
          identity,
        },
      ]);
      const rec = (
        await api(app.base, ws.key)<CompletionWithAnswersDto>('GET', `/completions/${run.completion.id}`)
      ).body.data;
      expect(rec.answers).to.deep.equal({ q1: 'b', q2: true, p1: 'y' });
      expect(rec).to.include({ lastScreenId: 's2', progressPercent: 66.67, status: 'in_progress' });
    });

    it('arriving at the last screen finishes: result, row, Attempt and course.completed with every field, exactly once', async () => {
      const { ws, courseId, run, identity, req } = await identified({ passingScore: 50 });
      await send(run, 'b1', [
        { type: 'screen', screenId: 's1' },
        { type: 'answer', blockId: 'q1', answer: 'a' },
      ]);
      const fin = await send(run, 'b2', [
        { type: 'screen', screenId: 's2' },
        { type: 'answer', blockId: 'q2', answer: false },
        { type: 'screen', screenId: 's3' },
      ]);
      expect(fin.body.data).to.deep.equal({
        completion: { status: 'completed', attempt: 1, progressPercent: 100, lastScreenId: 's3' },
        result: {
          score: 50,
          passed: true,
          attempt: 1,
          review: [
            { blockId: 'q1', screenId: 's1', correct: true, answer: 'a', explanation: 'A is right' },
            { blockId: 'q2', screenId: 's2', correct: false, answer: false },
          ],
        },
      });
      const [done, ...more] = await eventsOf(ws, 'course.completed');
      expect(more).to.deep.equal([]);
      const rec = (await req<CompletionWithAnswersDto>('GET', `/completions/${run.completion.id}`)).body.data;
      expect(done.data).to.deep.equal({
        course: { id: courseId, title: 'Safety 101', contentHash: run.course.contentHash },
        identity,
        completionId: run.completion.id,
        attempt: 1,
        source: 'embed',
        score: { correct: 1, total: 2, percent: 50 },
        passed: true,
        passingScore: 50,
        answers: [
          { blockId: 'q1', correct: true },
          { blockId: 'q2', correct: false },
        ],
        startedAt: rec.startedAt,
        completedAt: rec.completedAt,
        timeSpentSeconds: 0,
      });
      expect(rec).to.include({
        status: 'completed',
        score: 50,
        passed: true,
        passedAtCompletion: true,
        passingScoreAtCompletion: 50,
        attempt: 1,
        contentHash: run.course.contentHash,
        progressPercent: 100,
      });
      const attempts = (await req<AttemptDto[]>('GET', `/completions/${run.completion.id}/attempts`)).body;
      expect(attempts.data).to.have.length(1);
      expect(attempts.data[0]).to.deep.include({
        courseId,
        identityId: identity.id,
        attempt: 1,
        score: 50,
        passed: true,
        passingScore: 50,
        contentHash: run.course.contentHash,
        source: 'embed',
        locale: 'en',
        timeSpentSeconds: 0,
        startedAt: rec.startedAt,
        completedAt: rec.completedAt,
        answers: { q1: 'a', q2: false },
      });
      // Moving around after the finish (reviewing) emits progress but never a second finish; answers are ignored.
      const review = await send(run, 'b3', [
        { type: 'screen', screenId: 's1' },
        { type: 'answer', blockId: 'q1', answer: 'b' },
        { type: 'screen', screenId: 's3' },
      ]);
      expect(review.body.data.result).to.equal(undefined);
      expect(await eventsOf(ws, 'course.completed')).to.have.length(1);
      expect(await eventsOf(ws, 'course.answered')).to.have.length(2);
      expect(
        (await req<CompletionWithAnswersDto>('GET', `/completions/${run.completion.id}`)).body.data.answers,
      ).to.deep.equal({
        q1: 'a',
        q2: false,
      });
    });

    it('a course without graded blocks finishes with score null; without a pass mark passed is null', async () => {
      const { ws, run } = await identified({ screens: [{ id: 'only', title: 'One', blocks: [] }] });
      const fin = await send(run, 'b1', [{ type: 'screen', screenId: 'only' }]);
      expect(fin.body.data.result).to.deep.include({ score: null, passed: null, attempt: 1 });
      const [done] = await eventsOf(ws, 'course.completed');
      expect(done.data).to.include({ passed: null, passingScore: null });
      expect(done.data.score).to.deep.equal({ correct: 0, total: 0, percent: null });
      const rec = (await api(app.base, ws.key)<CompletionDto>('GET', `/completions/${run.completion.id}`))
        .body.data;
      expect(rec).to.include({
        score: null,
        passed: null,
        passedAtCompletion: null,
        passingScoreAtCompletion: null,
      });
    });

    it('immediate quizFeedback returns feedback for the graded answers of the batch', async () => {
      const { run } = await identified({ quizFeedback: 'immediate' });
      const res = await send(run, 'b1', [
        { type: 'answer', blockId: 'q1', answer: 'a' },
        { type: 'answer', blockId: 'q2', answer: false },
        { type: 'answer', blockId: 'p1', answer: 'n' },
      ]);
      expect(res.body.data.feedback).to.deep.equal([
        { blockId: 'q1', correct: true, explanation: 'A is right' },
        { blockId: 'q2', correct: false },
      ]);
      const { run: deferred } = await identified();
      expect(
        (await send(deferred, 'b1', [{ type: 'answer', blockId: 'q1', answer: 'a' }])).body.data,
      ).to.not.have.property('feedback');
    });

    it('time adds up but never beyond the wall time since the previous call', async () => {
      const { ws, run } = await identified();
      const res = await send(run, 'b1', [
        { type: 'time', seconds: 3000 },
        { type: 'time', seconds: 3000 },
      ]);
      expect(res.status).to.equal(200);
      const [row] = await boundQuery<{ time_spent_seconds: number; started_at: Date }>(
        em(),
        'select time_spent_seconds, started_at from completions where id = ?',
        [run.completion.id],
      );
      const wall = Math.ceil((Date.now() - new Date(row.started_at).getTime()) / 1000);
      expect(row.time_spent_seconds).to.be.at.most(wall);
      // With the previous call an hour ago, the hour may be credited.
      await boundQuery(
        em(),
        `update completions set last_event_at = now() - interval '1 hour' where id = ?`,
        [run.completion.id],
      );
      await send(run, 'b2', [{ type: 'time', seconds: 1200 }]);
      const [after] = await boundQuery<{ time_spent_seconds: number }>(
        em(),
        'select time_spent_seconds from completions where id = ?',
        [run.completion.id],
      );
      expect(after.time_spent_seconds).to.equal(row.time_spent_seconds + 1200);
      void ws;
    });

    it('a repeated batchId is acknowledged with the first answer and applied once, even concurrently', async () => {
      const { ws, run } = await identified();
      await boundQuery(
        em(),
        `update completions set last_event_at = now() - interval '1 hour' where id = ?`,
        [run.completion.id],
      );
      const batch = [
        { type: 'screen', screenId: 's1' },
        { type: 'answer', blockId: 'q1', answer: 'a' },
        { type: 'time', seconds: 30 },
      ];
      const first = await send(run, 'dup-1', batch);
      const again = await send(run, 'dup-1', batch);
      expect(again.status).to.equal(200);
      expect(again.body.data).to.deep.equal(first.body.data);
      await boundQuery(
        em(),
        `update completions set last_event_at = now() - interval '1 hour' where id = ?`,
        [run.completion.id],
      );
      const racing = await Promise.all(
        [1, 2, 3, 4].map(() => send(run, 'dup-2', [{ type: 'time', seconds: 10 }])),
      );
      for (const r of racing) expect(r.status, r.text).to.equal(200);
      const [row] = await boundQuery<{ time_spent_seconds: number }>(
        em(),
        'select time_spent_seconds from completions where id = ?',
        [run.completion.id],
      );
      expect(row.time_spent_seconds).to.equal(40);
      expect(await eventsOf(ws, 'course.progress')).to.have.length(1);
      expect(await eventsOf(ws, 'course.answered')).to.have.length(1);
    });

    it('concurrent finishing batches finish once', async () => {
      const { ws, run } = await identified();
      const results = await Promise.all(
        ['f1', 'f2', 'f3', 'f4'].map((id) => send(run, id, [{ type: 'screen', screenId: 's3' }])),
      );
      expect(results.filter((r) => r.body.data.result).length).to.equal(1);
      expect(await eventsOf(ws, 'course.completed')).to.have.length(1);
      const [{ n }] = await boundQuery<{ n: number }>(
        em(),
        'select count(*)::int as n from attempts where completion_id = ?',
        [run.completion.id],
      );
      expect(n).to.equal(1);
    });

    it('many runs at once: batches written in shared statements apply exactly as alone, duplicates once', async () => {
      const { ws, courseId } = await setup('scale');
      const runs: Open[] = [];
      for (let i = 0; i < 24; i++)
        runs.push((await open({ courseId, anonymousId: anonymousId(7_000 + i) })).body.data);
      const ids = runs.map((r) => r.completion.id);
      // Phase 1: every run's first batch at once, and for every other run the same batch id again, racing it
      // (possibly in the same shared statement: a claimed batch id fails that statement, and its batches are
      // then written one by one).
      const first = [
        { type: 'screen', screenId: 's1' },
        { type: 'answer', blockId: 'q1', answer: 'a' },
        { type: 'screen', screenId: 's2' },
        { type: 'answer', blockId: 'q2', answer: true },
        { type: 'answer', blockId: 'p1', answer: 'y' },
      ];
      const phase1 = await Promise.all(
        runs.flatMap((r, i) =>
          i % 2 ? [send(r, 'g1', first), send(r, 'g1', first)] : [send(r, 'g1', first)],
        ),
      );
      for (const res of phase1) {
        expect(res.status, res.text).to.equal(200);
        expect(res.body.data.completion).to.deep.equal({
          status: 'in_progress',
          attempt: null,
          progressPercent: 66.67,
          lastScreenId: 's2',
        });
      }
      // Phase 2: every run finishes at once.
      const phase2 = await Promise.all(runs.map((r) => send(r, 'g2', [{ type: 'screen', screenId: 's3' }])));
      for (const res of phase2) {
        expect(res.status, res.text).to.equal(200);
        expect(res.body.data.result).to.deep.include({ score: 100, passed: null, attempt: 1 });
      }
      const rows = await boundQuery<{
        id: string;
        status: string;
        attempt: number;
        score: string;
        xmin: string;
      }>(em(), `select id, status, attempt, score, xmin::text from completions where id = any (?::text[])`, [
        ids,
      ]);
      expect(rows).to.have.length(runs.length);
      for (const r of rows)
        expect([r.status, r.attempt, Number(r.score)]).to.deep.equal(['completed', 1, 100]);
      // Rows written by one statement share its transaction id: the finishes did share statements.
      expect(new Set(rows.map((r) => r.xmin)).size).to.be.lessThan(runs.length);
      const [counts] = await boundQuery<{ attempts: number; batches: number }>(
        em(),
        `select (select count(*)::int from attempts where completion_id = any (?::text[])) as attempts,
                (select count(*)::int from completion_batches where completion_id = any (?::text[])) as batches`,
        [ids, ids],
      );
      expect(counts).to.deep.equal({ attempts: runs.length, batches: runs.length * 2 });
      // Each run's events, once each.
      const events = await eventsOf(ws);
      const byType = (type: string) => events.filter((e) => e.type === type);
      expect(byType('course.progress')).to.have.length(runs.length * 3);
      expect(byType('course.answered')).to.have.length(runs.length * 2);
      const completed = byType('course.completed');
      expect(completed.map((e) => (e.data as { completionId: string }).completionId).sort()).to.deep.equal(
        [...ids].sort(),
      );
    });

    it("a run whose row another transaction holds locked never holds up other runs' batches", async () => {
      const { courseId } = await setup('scale');
      const [a, b] = [
        (await open({ courseId, anonymousId: anonymousId(8_001) })).body.data,
        (await open({ courseId, anonymousId: anonymousId(8_002) })).body.data,
      ];
      const screen = [{ type: 'screen', screenId: 's2' }];
      let release!: () => void;
      const released = new Promise<void>((r) => (release = r));
      let locked!: () => void;
      const isLocked = new Promise<void>((r) => (locked = r));
      // Another transaction (a retake, a course being deleted…) holds run A's row.
      const holder = em().transactional(async (tx) => {
        await boundQuery(tx, 'select 1 from completions where id = ? for update', [a.completion.id]);
        locked();
        await released;
      });
      await isLocked;
      let aDone = false;
      const aSent = send(a, 'held', screen).then((r) => {
        aDone = true;
        return r;
      });
      // B's batches are answered while A's row is still locked, whether or not they share A's statement.
      for (const id of ['free-1', 'free-2', 'free-3']) {
        const res = await send(b, id, screen);
        expect(res.status, res.text).to.equal(200);
      }
      expect(aDone, "A's batch waits for its own row").to.equal(false);
      release();
      await holder;
      const resA = await aSent;
      expect(resA.status, resA.text).to.equal(200);
      expect(resA.body.data.completion.lastScreenId).to.equal('s2');
    });

    it('refuses unknown screens and blocks with issues, applying nothing of the batch', async () => {
      const { ws, run } = await identified();
      const res = await send(run, 'bad', [
        { type: 'screen', screenId: 's1' },
        { type: 'answer', blockId: 'nope', answer: 1 },
        { type: 'screen', screenId: 'zz' },
        { type: 'answer', blockId: 'note', answer: 'x' },
      ]);
      expectIssue(res, ['events', 1, 'blockId'], 'unknown_block');
      expectIssue(res, ['events', 2, 'screenId'], 'unknown_screen');
      expectIssue(res, ['events', 3, 'blockId'], 'unknown_block');
      expectIssue(await send(run, 'bad2', [{ type: 'nope' }]), ['events', 0, 'type']);
      expectIssue(await send(run, 'bad3', [{ type: 'time', seconds: -1 }]), ['events', 0, 'seconds']);
      expectIssue(await send(run, 'b a d', []), ['batchId']);
      expectIssue(
        await send(
          run,
          'big',
          Array.from({ length: 101 }, () => ({ type: 'time', seconds: 1 })),
        ),
        ['events'],
      );
      expect(await eventsOf(ws, 'course.progress')).to.deep.equal([]);
      // The refused batch id was not consumed.
      expect(
        (await send(run, 'bad', [{ type: 'screen', screenId: 's1' }])).body.data.completion.lastScreenId,
      ).to.equal('s1');
    });

    it('run tokens: required, bound to their run, signed by the server', async () => {
      const a = await identified();
      const b = await identified();
      const path = `/runs/${a.run.completion.id}/events`;
      const body = { batchId: 'x', events: [] };
      const cases: [string, Record<string, string>][] = [
        ['none', {}],
        ['not bearer', { authorization: a.run.runToken }],
        ["another run's", { authorization: `Bearer ${b.run.runToken}` }],
        ['garbage', { authorization: 'Bearer abc.def.ghi' }],
        ['an identity token', { authorization: `Bearer ${await signIdentity(a.ek)}` }],
      ];
      for (const [what, headers] of cases) {
        const res = await player('POST', path, { body, headers });
        expect(res.status, what).to.equal(401);
        expect(res.body.error, what).to.equal('unauthorized');
      }
      expect(
        (
          await player('POST', `/runs/${a.run.completion.id}/retake`, {
            headers: { authorization: `Bearer ${b.run.runToken}` },
          })
        ).status,
      ).to.equal(401);
      expect((await player('POST', path, { body, token: a.run.runToken })).status).to.equal(200);
    });
  });

  describe('retake and pass marks', () => {
    it('retake clears answers and position, keeps the last result until the next finish; attempt 2 appends', async () => {
      const { ws, courseId, ek, req } = await setup('scale', { passingScore: 100 });
      const run = (await open({ courseId, identity: await signIdentity(ek, {}, { sub: 'again' }) })).body
        .data;
      const early = await player('POST', `/runs/${run.completion.id}/retake`, { token: run.runToken });
      expect(early.status).to.equal(409);
      expect(early.body.error).to.equal('conflict');
      await send(run, 'a1', [
        { type: 'answer', blockId: 'q1', answer: 'b' },
        { type: 'screen', screenId: 's3' },
      ]);
      const first = (await req<CompletionWithAnswersDto>('GET', `/completions/${run.completion.id}`)).body
        .data;
      expect(first).to.include({ attempt: 1, score: 0, passedAtCompletion: false });

      const retake = await player<{ completion: unknown }>('POST', `/runs/${run.completion.id}/retake`, {
        token: run.runToken,
      });
      expect(retake.status).to.equal(200);
      expect(retake.body.data.completion).to.deep.equal({
        status: 'completed',
        attempt: 1,
        progressPercent: 0,
        lastScreenId: null,
      });
      const mid = (await req<CompletionWithAnswersDto>('GET', `/completions/${run.completion.id}`)).body.data;
      expect(mid).to.include({
        status: 'completed',
        attempt: 1,
        score: 0,
        passedAtCompletion: false,
        completedAt: first.completedAt,
      });
      expect(mid.answers).to.deep.equal({});
      const resumed = (await open({ courseId, identity: await signIdentity(ek, {}, { sub: 'again' }) })).body
        .data;
      expect(resumed.completion).to.include({ status: 'completed', attempt: 1, lastScreenId: null });

      const fin = await send(run, 'a2', [
        { type: 'answer', blockId: 'q1', answer: 'a' },
        { type: 'answer', blockId: 'q2', answer: true },
        { type: 'screen', screenId: 's3' },
      ]);
      expect(fin.body.data.result).to.deep.include({ score: 100, passed: true, attempt: 2 });
      const second = (await req<CompletionWithAnswersDto>('GET', `/completions/${run.completion.id}`)).body
        .data;
      expect(second).to.include({ attempt: 2, score: 100, passedAtCompletion: true, status: 'completed' });
      const attempts = (await req<AttemptDto[]>('GET', `/completions/${run.completion.id}/attempts`)).body;
      expect(attempts.data.map((a) => [a.attempt, a.score, a.passed])).to.deep.equal([
        [2, 100, true],
        [1, 0, false],
      ]);
      expect(attempts.data[1].answers).to.deep.equal({ q1: 'b' });
      expect(attempts.data[1].completedAt).to.equal(first.completedAt);
      expect(attempts.data[0].startedAt).to.not.equal(attempts.data[1].startedAt);
      const completed = await eventsOf(ws, 'course.completed');
      expect(completed.map((e) => e.data.attempt)).to.deep.equal([1, 2]);
      expect(completed[1].data.startedAt).to.equal(attempts.data[0].startedAt);
      const paged = await req<AttemptDto[]>(
        'GET',
        `/completions/${run.completion.id}/attempts?limit=1&offset=1`,
      );
      expect(paged.body.data.map((a) => a.attempt)).to.deep.equal([1]);
      expect((paged.body as unknown as { pagination: unknown }).pagination).to.deep.equal({
        limit: 1,
        offset: 1,
        total: 2,
        hasMore: false,
      });
    });

    it('changing the pass mark flips passed, never passedAtCompletion', async () => {
      const { courseId, ek, req } = await setup('scale', { passingScore: 40 });
      const run = (await open({ courseId, identity: await signIdentity(ek) })).body.data;
      await send(run, 'b', [
        { type: 'answer', blockId: 'q1', answer: 'a' },
        { type: 'screen', screenId: 's3' },
      ]);
      const get = async () =>
        (await req<CompletionDto>('GET', `/completions/${run.completion.id}`)).body.data;
      expect(await get()).to.include({
        score: 50,
        passed: true,
        passedAtCompletion: true,
        passingScoreAtCompletion: 40,
      });
      await req('PATCH', `/courses/${courseId}`, { passingScore: 80 });
      expect(await get()).to.include({
        passed: false,
        passedAtCompletion: true,
        passingScoreAtCompletion: 40,
      });
      await req('PATCH', `/courses/${courseId}`, { passingScore: null });
      expect(await get()).to.include({ passed: null, passedAtCompletion: true });
      const list = (await req<CompletionDto[]>('GET', `/completions?courseId=${courseId}`)).body.data;
      expect(list[0]).to.include({ passed: null, passedAtCompletion: true });
    });
  });

  describe('GET /completions', () => {
    it('filters, pages, orders (startedAt; completedAt with completedAfter), includes in-progress, never answers', async () => {
      const { ws, courseId, ek, req } = await setup();
      const other = await publishedCourse(app.base, ws.key, { title: 'B' });
      const runs: Open[] = [];
      for (const sub of ['u1', 'u2', 'u3'])
        runs.push((await open({ courseId, identity: await signIdentity(ek, {}, { sub }) })).body.data);
      const anon = (await open({ courseId: other, anonymousId: anonymousId(3) })).body.data;
      await send(runs[1], 'x', [{ type: 'screen', screenId: 's3' }]);
      // runs[1] finished a minute before the cutoff, runs[0] after it.
      await boundQuery(
        em(),
        `update completions set completed_at = completed_at - interval '1 minute' where id = ?`,
        [runs[1].completion.id],
      );
      const before = new Date(Date.now() - 30_000).toISOString();
      await send(runs[0], 'x', [
        { type: 'answer', blockId: 'q1', answer: 'a' },
        { type: 'screen', screenId: 's3' },
      ]);
      const all = await req<CompletionDto[]>('GET', '/completions');
      expect(all.body.data.map((c) => c.id)).to.deep.equal(
        [anon, runs[2], runs[1], runs[0]].map((r) => r.completion.id),
      );
      expect(all.body.data).to.have.length(4);
      for (const c of all.body.data) expect(c).to.not.have.property('answers');
      const byCourse = await req<CompletionDto[]>(
        'GET',
        `/completions?courseId=${courseId}&status=in_progress`,
      );
      expect(byCourse.body.data.map((c) => c.id)).to.deep.equal([runs[2].completion.id]);
      const byExt = await req<CompletionDto[]>('GET', '/completions?identityExternalId=u2');
      expect(byExt.body.data.map((c) => c.identityExternalId)).to.deep.equal(['u2']);
      const byIdentity = await req<CompletionDto[]>(
        'GET',
        `/completions?identityId=${byExt.body.data[0].identityId}`,
      );
      expect(byIdentity.body.data).to.have.length(1);
      const after = await req<CompletionDto[]>(
        'GET',
        `/completions?completedAfter=${encodeURIComponent(before)}`,
      );
      expect(after.body.data.map((c) => c.id)).to.deep.equal([runs[0].completion.id]);
      const done = await req<CompletionDto[]>('GET', '/completions?completedAfter=2000-01-01T00:00:00Z');
      expect(done.body.data.map((c) => c.id)).to.deep.equal([runs[0].completion.id, runs[1].completion.id]);
      const page = await req<CompletionDto[]>('GET', '/completions?limit=2&offset=1');
      expect(page.body.data).to.have.length(2);
      expect((page.body as unknown as { pagination: unknown }).pagination).to.deep.equal({
        limit: 2,
        offset: 1,
        total: 4,
        hasMore: true,
      });
      expectIssue(await req('GET', '/completions?status=done'), ['query', 'status']);
      expectIssue(await req('GET', '/completions?completedAfter=yesterday'), ['query', 'completedAfter']);
      expect((await call(app.base, 'GET', '/completions', { key: ws.readKey })).status).to.equal(200);
    });

    it("another workspace's completion and attempts are 404; its list does not show ours", async () => {
      const { courseId } = await setup();
      const run = (await open({ courseId, anonymousId: anonymousId(5) })).body.data;
      const other = await makeWorkspace(em(), 'scale');
      const req = api(app.base, other.key);
      expectNotFound(await req('GET', `/completions/${run.completion.id}`));
      expectNotFound(await req('GET', `/completions/${run.completion.id}/attempts`));
      expect((await req<unknown[]>('GET', '/completions')).body.data).to.deep.equal([]);
      expect((await req<unknown[]>('GET', `/completions?courseId=${courseId}`)).body.data).to.deep.equal([]);
    });

    it('deleting a course deletes its runs and attempts; deleting an identity deletes its runs', async () => {
      const { courseId, ek, req } = await setup();
      const run = (await open({ courseId, identity: await signIdentity(ek, {}, { sub: 'gone' }) })).body.data;
      await send(run, 'x', [{ type: 'screen', screenId: 's3' }]);
      const identityId = (await req<{ id: string }[]>('GET', '/identities')).body.data[0].id;
      expect((await req('DELETE', `/identities/${identityId}`)).status).to.equal(204);
      expectNotFound(await req('GET', `/completions/${run.completion.id}`));
      expect(
        (await boundQuery(em(), 'select id from attempts where completion_id = ?', [run.completion.id]))
          .length,
      ).to.equal(0);
      // The run token of a deleted run is refused with 404 (the run is gone), never re-creating anything.
      expect((await send(run, 'y', [])).status).to.equal(404);
      const anon = (await open({ courseId, anonymousId: anonymousId(6) })).body.data;
      await send(anon, 'x', [{ type: 'screen', screenId: 's3' }]);
      expect((await req('DELETE', `/courses/${courseId}`)).status).to.equal(204);
      expect(
        (await boundQuery(em(), 'select id from completions where course_id = ?', [courseId])).length,
      ).to.equal(0);
      expect(
        (await boundQuery(em(), 'select id from attempts where course_id = ?', [courseId])).length,
      ).to.equal(0);
    });
  });

  describe('metering and 402', () => {
    const setViews = (wsId: string, count: number) =>
      boundQuery(
        em(),
        `insert into usage_counters (workspace_id, month, metric, count) values (?, ?, 'views', ?)
         on conflict (workspace_id, month, metric) do update set count = excluded.count`,
        [wsId, usageMonth(), count],
      );

    it('Sandbox: the 500th view opens, the 501st is refused (402 Player API and embed page) and counts nothing', async () => {
      const { ws, courseId } = await setup('sandbox');
      const run = (await open({ courseId, anonymousId: anonymousId(1) })).body.data;
      await setViews(ws.id, 499);
      expect((await call(app.url, 'GET', `/embed/${courseId}`)).status).to.equal(200);
      const fiveHundredth = await open({ courseId, anonymousId: anonymousId(2) });
      expect(fiveHundredth.status).to.equal(201);
      expect(await views(ws.id)).to.equal(500);
      const viewed = (await eventsOf(ws, 'course.viewed')).length;
      const refused = await open({ courseId, anonymousId: anonymousId(3) });
      expect(refused.status).to.equal(402);
      expect(refused.body.error).to.equal('plan_required');
      expect(refused.body.message).to.match(/500/);
      expect(await views(ws.id)).to.equal(500);
      expect((await eventsOf(ws, 'course.viewed')).length).to.equal(viewed);
      expect(
        (
          await boundQuery(em(), 'select id from completions where anonymous_id = ? and workspace_id = ?', [
            anonymousId(3),
            ws.id,
          ])
        ).length,
      ).to.equal(0);
      const page = await call(app.url, 'GET', `/embed/${courseId}`);
      expect(page.status).to.equal(402);
      expect(page.text).to.match(/unavailable/i);
      expect(await views(ws.id)).to.equal(500);
      expect((await call(app.base, 'GET', '/completions', { key: ws.key })).status).to.equal(402);
      // A run already open may finish.
      expect((await send(run, 'z', [{ type: 'screen', screenId: 's3' }])).status).to.equal(200);
      await setPlan(em(), ws.id, 'build');
      expect((await open({ courseId, anonymousId: anonymousId(3) })).status).to.equal(201);
      expect(await views(ws.id)).to.equal(501);
    });

    it('Sandbox: concurrent opens at the edge never overshoot the allowance', async () => {
      const { ws, courseId } = await setup('sandbox');
      await setViews(ws.id, 495);
      const res = await Promise.all(
        Array.from({ length: 12 }, (_, i) => open({ courseId, anonymousId: anonymousId(100 + i) })),
      );
      expect(res.filter((r) => r.status === 201)).to.have.length(5);
      expect(res.filter((r) => r.status === 402)).to.have.length(7);
      expect(await views(ws.id)).to.equal(500);
    });

    it('paid plans keep serving and counting past the allowance', async () => {
      const { ws, courseId } = await setup('build');
      await setViews(ws.id, 25_000);
      expect((await open({ courseId, anonymousId: anonymousId(1) })).status).to.equal(201);
      expect(await views(ws.id)).to.equal(25_001);
    });

    it('an invoice past grace refuses the embed page, opens and events with 402; paying restores at once', async () => {
      const { ws, courseId } = await setup('scale');
      const run = (await open({ courseId, anonymousId: anonymousId(1) })).body.data;
      await setBilling(em(), ws.id, { pastDue: true, graceUntil: new Date(Date.now() - 1000) });
      expect((await call(app.url, 'GET', `/embed/${courseId}`)).status).to.equal(402);
      expect((await open({ courseId, anonymousId: anonymousId(2) })).status).to.equal(402);
      expect((await send(run, 'b', [{ type: 'screen', screenId: 's1' }])).status).to.equal(402);
      expect(await views(ws.id)).to.equal(1);
      await setBilling(em(), ws.id, { pastDue: false });
      expect((await call(app.url, 'GET', `/embed/${courseId}`)).status).to.equal(200);
      expect((await open({ courseId, anonymousId: anonymousId(2) })).status).to.equal(201);
    });
  });
});
