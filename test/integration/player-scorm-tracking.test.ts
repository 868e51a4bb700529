import { expect } from 'chai';
import { boundQuery } from '@lectern/db';
import { lazyPlayerKeys } from '@lectern/api';
import type { CompletionDto, OpenRunResult } from '@lectern/contracts';
import { makeWorkspace, type TestWorkspace } from '../support/context.js';
import { startCustomApp, outboxOf, type CustomApp, type OutboxRow } from '../support/spine.js';
import { api, expectIssue } from '../support/authoring.js';
import { anonymousId, createEmbedKey, playerApi, publishedCourse, signIdentity } from '../support/player.js';

/**
 * track=1: a SCORM package opens runs through the Player API with the course-bound tracking token baked into
 * it and the LMS's learner (docs/scorm.md). The token is minted here exactly as the export does it,
 * with the API's own player keys.
 */
describe('learner runs: SCORM tracking runs (issue 12, track=1)', () => {
  let app: CustomApp;
  let player: ReturnType<typeof playerApi>;
  let keys: ReturnType<ReturnType<typeof lazyPlayerKeys>>;
  before(async () => {
    app = await startCustomApp();
    player = playerApi(app.url);
    keys = lazyPlayerKeys(app.rt.cfg)();
  });
  after(async () => app?.close());
  const em = () => app.rt.orm.em.fork();

  async function setup() {
    const ws = await makeWorkspace(em(), 'scale');
    const courseId = await publishedCourse(app.base, ws.key);
    const token = await keys.tracking.sign({ courseId, workspaceId: ws.id });
    return { ws, courseId, token, req: api(app.base, ws.key) };
  }
  const open = (body: Record<string, unknown>) => player<OpenRunResult>('POST', '/runs', { body });
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
          events: [
            { type: 'screen', screenId: 's1' },
            { type: 'answer', blockId: 'q1', answer: 'a' },
            { type: 'screen', screenId: 's2' },
            { type: 'answer', blockId: 'q2', answer: false },
            { type: 'screen', screenId: 's3' },
          ],
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
      await keys.tracking.sign({ courseId: otherCourse, workspaceId: ws.id }),
      await keys.tracking.sign({ courseId, workspaceId: foreign.ws.id }),
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

  it('an LMS learner id that names a learner with an embed run of the course is a 409, not a takeover', async () => {
    const { ws, courseId, token } = await setup();
    const ek = await createEmbedKey(app.base, ws.key);
    const embed = await open({ courseId, identity: await signIdentity(ek, {}, { sub: 'shared-1' }) });
    expect(embed.status).to.equal(201);
    const clash = await open({ courseId, tracking: { token, learnerId: 'shared-1' } });
    expect(clash.status, clash.text).to.equal(409);
    expect(clash.body.error).to.equal('conflict');
    expect(await rowsOf(courseId)).to.have.length(1);
    expect(await eventsOf(ws, 'course.viewed')).to.have.length(1);
  });
});
