import { expect } from 'chai';
import type { OpenRunResult } from '@lectern/contracts';
import { makeWorkspace } from '../support/context.js';
import { startCustomApp, outboxOf, type CustomApp } from '../support/spine.js';
import { api, expectIssue } from '../support/authoring.js';
import { anonymousId, playerApi, publishedCourse, quizFinishEvents } from '../support/player.js';

interface BatchData {
  completion: {
    status: string;
    attempt: number | null;
    progressPercent: number;
    lastScreenId: string | null;
  };
  feedback?: { blockId: string; correct: boolean; explanation?: string; outcome?: string }[];
  result?: { score: number | null; passed: boolean | null; attempt: number; review?: ReviewItem[] };
}

interface ReviewItem {
  blockId: string;
  screenId: string;
  correct: boolean;
  answer?: unknown;
  correctAnswer?: unknown;
  explanation?: string;
  outcome?: string;
}

describe('completion rules: a sequential course is taken in order, on the server too (issue 19)', () => {
  let app: CustomApp;
  let player: ReturnType<typeof playerApi>;
  let n = 0;
  before(async () => {
    app = await startCustomApp();
    player = playerApi(app.url);
  });
  after(async () => app?.close());
  const em = () => app.rt.orm.em.fork();

  async function run(completion?: 'free' | 'sequential', course: Record<string, unknown> = {}) {
    const ws = await makeWorkspace(em(), 'scale');
    const courseId = await publishedCourse(app.base, ws.key, {
      ...(completion ? { completion } : {}),
      ...course,
    });
    const opened = await player<OpenRunResult>('POST', '/runs', {
      body: { courseId, anonymousId: anonymousId(++n) },
    });
    expect(opened.status, opened.text).to.equal(201);
    const r = opened.body.data;
    const send = (events: unknown[], batchId = `b-${++n}`) =>
      player<BatchData>('POST', `/runs/${r.completion.id}/events`, {
        token: r.runToken,
        body: { batchId, events },
      });
    const state = async () => (await send([]))!.body.data.completion;
    const completed = async () => (await outboxOf(em(), ws.id)).filter((e) => e.type === 'course.completed');
    return { ws, courseId, run: r, send, state, completed, req: api(app.base, ws.key) };
  }

  describe('the course setting', () => {
    it('defaults to free, is set and changed by the API, and reaches the player', async () => {
      const ws = await makeWorkspace(em(), 'scale');
      const req = api(app.base, ws.key);
      const free = await req<{ id: string; completion: string }>('POST', '/courses', { title: 'Free' });
      expect(free.status, free.text).to.equal(201);
      expect(free.body.data.completion).to.equal('free');
      const seq = await req<{ id: string; completion: string }>('POST', '/courses', {
        title: 'Seq',
        completion: 'sequential',
      });
      expect(seq.body.data.completion).to.equal('sequential');
      const back = await req<{ completion: string }>('PATCH', `/courses/${seq.body.data.id}`, {
        completion: 'free',
      });
      expect(back.status, back.text).to.equal(200);
      expect(back.body.data.completion).to.equal('free');

      const { run: r } = await run('sequential');
      expect(r.course.completion).to.equal('sequential');
    });

    it('refuses anything but free or sequential with a 400 naming the field, and changes nothing', async () => {
      const ws = await makeWorkspace(em(), 'scale');
      const req = api(app.base, ws.key);
      for (const bad of ['Sequential', 'strict', '', 1, true, null, ['sequential'], { mode: 'sequential' }]) {
        expectIssue(await req('POST', '/courses', { title: 'x', completion: bad }), ['completion']);
      }
      const c = await req<{ id: string }>('POST', '/courses', { title: 'Seq', completion: 'sequential' });
      expectIssue(await req('PATCH', `/courses/${c.body.data.id}`, { completion: 'any' }), ['completion']);
      const after = await req<{ completion: string }>('GET', `/courses/${c.body.data.id}`);
      expect(after.body.data.completion).to.equal('sequential');
      const list = await req<unknown[]>('GET', '/courses');
      expect(list.body.data).to.have.length(1);
    });
  });

  describe('the server enforces the order of a sequential course', () => {
    it('refuses a jump to the last screen: 409 conflict out_of_order, not counted as a finish', async () => {
      const t = await run('sequential');
      const res = await t.send([
        { type: 'screen', screenId: 's1' },
        { type: 'answer', blockId: 'q1', answer: 'a' },
        { type: 'screen', screenId: 's3' },
      ]);
      expect(res.status, res.text).to.equal(409);
      expect(res.body.error).to.equal('conflict');
      expect(res.body.message).to.include('in order');
      expect((res.body as unknown as { reason: string }).reason).to.equal('out_of_order');
      // Nothing of the batch counted: not even its first screen or its answer.
      const s = await t.state();
      expect(s).to.deep.equal({
        status: 'in_progress',
        attempt: null,
        progressPercent: 0,
        lastScreenId: null,
      });
      expect(await t.completed()).to.have.length(0);
      // A jump from the start is refused the same way.
      const direct = await t.send([{ type: 'screen', screenId: 's3' }]);
      expect(direct.status, direct.text).to.equal(409);
      expect(await t.completed()).to.have.length(0);
    });

    it('refuses moving past a screen whose graded block is unanswered (reason unanswered, naming the block)', async () => {
      const t = await run('sequential');
      expect((await t.send([{ type: 'screen', screenId: 's1' }])).status).to.equal(200);
      const res = await t.send([{ type: 'screen', screenId: 's2' }]);
      expect(res.status, res.text).to.equal(409);
      const body = res.body as unknown as { reason: string; blockIds: string[] };
      expect(body.reason).to.equal('unanswered');
      expect(body.blockIds).to.deep.equal(['q1']);
      expect((await t.state()).lastScreenId).to.equal('s1');
      // The answer in the same batch, before the move, counts.
      const ok = await t.send([
        { type: 'answer', blockId: 'q1', answer: 'b' },
        { type: 'screen', screenId: 's2' },
      ]);
      expect(ok.status, ok.text).to.equal(200);
      expect(ok.body.data.completion.lastScreenId).to.equal('s2');
      // A wrong answer is an answer: the order rule is about answering, not about being right. s2's q2 is not.
      const stuck = await t.send([{ type: 'screen', screenId: 's3' }]);
      expect(stuck.status, stuck.text).to.equal(409);
      expect((stuck.body as unknown as { blockIds: string[] }).blockIds).to.deep.equal(['q2']);
      // The ungraded poll of s2 is not required.
      const done = await t.send([
        { type: 'answer', blockId: 'q2', answer: true },
        { type: 'screen', screenId: 's3' },
      ]);
      expect(done.status, done.text).to.equal(200);
      expect(done.body.data.result).to.deep.include({ score: 50, passed: null, attempt: 1 });
      expect(await t.completed()).to.have.length(1);
    });

    it('allows going back to any reached screen, then forward again, and the whole course in one batch', async () => {
      const t = await run('sequential');
      const back = await t.send([
        { type: 'screen', screenId: 's1' },
        { type: 'answer', blockId: 'q1', answer: 'a' },
        { type: 'screen', screenId: 's2' },
        { type: 'screen', screenId: 's1' },
        { type: 'screen', screenId: 's2' },
      ]);
      expect(back.status, back.text).to.equal(200);
      expect(back.body.data.completion.lastScreenId).to.equal('s2');
      const t2 = await run('sequential');
      const all = await t2.send(quizFinishEvents());
      expect(all.status, all.text).to.equal(200);
      expect(all.body.data.result?.score).to.equal(100);
    });

    it('after the finish the learner reviews freely; a retake is in order again', async () => {
      const t = await run('sequential');
      expect((await t.send(quizFinishEvents())).status).to.equal(200);
      const review = await t.send([
        { type: 'screen', screenId: 's1' },
        { type: 'screen', screenId: 's3' },
      ]);
      expect(review.status, review.text).to.equal(200);
      const retake = await player('POST', `/runs/${t.run.completion.id}/retake`, { token: t.run.runToken });
      expect(retake.status, retake.text).to.equal(200);
      const jump = await t.send([{ type: 'screen', screenId: 's3' }]);
      expect(jump.status, jump.text).to.equal(409);
      expect(await t.completed()).to.have.length(1);
    });

    it('a free course still finishes wherever the learner jumps (the documented default)', async () => {
      const t = await run();
      const res = await t.send([{ type: 'screen', screenId: 's3' }]);
      expect(res.status, res.text).to.equal(200);
      expect(res.body.data.result).to.deep.include({ score: 0, passed: null, attempt: 1 });
    });

    it('switching a course to sequential applies to runs under way from their furthest screen', async () => {
      const t = await run('free');
      expect((await t.send([{ type: 'screen', screenId: 's2' }])).status).to.equal(200);
      expect((await t.req('PATCH', `/courses/${t.courseId}`, { completion: 'sequential' })).status).to.equal(
        200,
      );
      // s2 was reached: going back and forth is fine, but s3 needs q1 and q2 answered.
      const res = await t.send([{ type: 'screen', screenId: 's3' }]);
      expect(res.status, res.text).to.equal(409);
      expect((res.body as unknown as { blockIds: string[] }).blockIds).to.deep.equal(['q1', 'q2']);
    });
  });

  describe('the review at the finish, and what it never gives away', () => {
    it('lists every graded question with right/wrong, the answer and the explanation; no correct answers by default', async () => {
      const t = await run();
      const mid = await t.send([
        { type: 'screen', screenId: 's1' },
        { type: 'answer', blockId: 'q1', answer: 'b' },
        { type: 'screen', screenId: 's2' },
      ]);
      expect(mid.status, mid.text).to.equal(200);
      // Before the finish: no review, no verdict, nothing of the answer key.
      expect(mid.body.data).to.not.have.property('result');
      expect(mid.body.data).to.not.have.property('feedback');
      expect(mid.text).to.not.match(/correctAnswer|review|A is right/);
      const batchId = 'finish-1';
      const fin = await t.send([{ type: 'screen', screenId: 's3' }], batchId);
      expect(fin.status, fin.text).to.equal(200);
      expect(fin.body.data.result?.review).to.deep.equal([
        { blockId: 'q1', screenId: 's1', correct: false, answer: 'b', explanation: 'A is right' },
        { blockId: 'q2', screenId: 's2', correct: false },
      ]);
      expect(fin.text).to.not.include('correctAnswer');
      // The same batch again answers the same, and a review-time batch after the finish adds no review.
      const again = await t.send([{ type: 'screen', screenId: 's3' }], batchId);
      expect(again.body.data).to.deep.equal(fin.body.data);
      const later = await t.send([{ type: 'screen', screenId: 's1' }]);
      expect(later.text).to.not.match(/correctAnswer|review/);
      // The course as the player gets it still has no answer keys.
      const opened = await player('POST', '/runs', {
        body: { courseId: t.courseId, anonymousId: anonymousId(++n) },
      });
      expect(opened.text).to.not.match(/"correct"|A is right/);
    });

    it('adds the correct answers only when the author shows them, and only at the finish', async () => {
      const t = await run(undefined, { review: { showCorrectAnswers: true } });
      expect(
        (await t.req<{ review: unknown }>('GET', `/courses/${t.courseId}`)).body.data.review,
      ).to.deep.equal({
        showCorrectAnswers: true,
      });
      const mid = await t.send([
        { type: 'screen', screenId: 's1' },
        { type: 'answer', blockId: 'q1', answer: 'a' },
      ]);
      expect(mid.text).to.not.include('correctAnswer');
      const fin = await t.send([
        { type: 'screen', screenId: 's2' },
        { type: 'answer', blockId: 'q2', answer: false },
        { type: 'screen', screenId: 's3' },
      ]);
      expect(fin.body.data.result?.review).to.deep.equal([
        {
          blockId: 'q1',
          screenId: 's1',
          correct: true,
          answer: 'a',
          correctAnswer: 'a',
          explanation: 'A is right',
        },
        { blockId: 'q2', screenId: 's2', correct: false, answer: false, correctAnswer: true },
      ]);
      // Switched off again: the next finish (after a retake) shows none.
      expect(
        (await t.req('PATCH', `/courses/${t.courseId}`, { review: { showCorrectAnswers: false } })).status,
      ).to.equal(200);
      await player('POST', `/runs/${t.run.completion.id}/retake`, { token: t.run.runToken });
      const second = await t.send(quizFinishEvents());
      expect(second.body.data.result?.attempt).to.equal(2);
      expect(second.text).to.not.include('correctAnswer');
    });

    it('a finished run opened again (a reload, another device) gets the same review; a retake has none', async () => {
      const t = await run(undefined, { review: { showCorrectAnswers: true } });
      const anon = n; // run() opened the run as anonymousId(n)
      const reopen = async () => {
        const res = await player<OpenRunResult>('POST', '/runs', {
          body: { courseId: t.courseId, anonymousId: anonymousId(anon) },
        });
        expect(res.status, res.text).to.equal(200);
        return res.body.data.completion;
      };
      await t.send([
        { type: 'screen', screenId: 's1' },
        { type: 'answer', blockId: 'q1', answer: 'a' },
      ]);
      // While the pass is open: no result, no review, nothing of the answer key.
      const open = await reopen();
      expect(open).to.not.have.property('result');
      const fin = await t.send([{ type: 'screen', screenId: 's3' }]);
      const review = fin.body.data.result?.review;
      expect(review).to.have.length(2);
      const again = await reopen();
      expect(again.result).to.deep.equal({ ...fin.body.data.result, review });
      // A retake opens a new pass: the last result stays (the certificate needs it), its review does not.
      await player('POST', `/runs/${t.run.completion.id}/retake`, { token: t.run.runToken });
      const retaking = await reopen();
      expect(retaking.result).to.include({ attempt: 1 });
      expect(retaking.result).to.not.have.property('review');
      expect(JSON.stringify(retaking)).to.not.include('correctAnswer');
    });

    it('refuses a malformed review setting with a 400 and changes nothing', async () => {
      const ws = await makeWorkspace(em(), 'scale');
      const req = api(app.base, ws.key);
      expectIssue(await req('POST', '/courses', { title: 'x', review: { showCorrectAnswers: 'yes' } }), [
        'review',
        'showCorrectAnswers',
      ]);
      for (const bad of [true, 'all', [], null, { showCorrectAnswers: true, answersToo: true }]) {
        const res = await req('POST', '/courses', { title: 'x', review: bad });
        expect(res.status, res.text).to.equal(400);
        expect(res.body.error).to.equal('invalid_request');
      }
      expect((await req<unknown[]>('GET', '/courses')).body.data).to.have.length(0);
    });

    it('immediate feedback on a scenario carries the chosen outcome; the review does too', async () => {
      const screens = [
        {
          id: 'a',
          title: 'Call',
          blocks: [
            {
              id: 'sc',
              type: 'scenario',
              situation: 'A fire alarm rings.',
              choices: [
                { id: 'go', text: 'Leave', correct: true, outcome: 'You reach the assembly point.' },
                { id: 'stay', text: 'Stay', outcome: 'Smoke fills the room.' },
              ],
            },
          ],
        },
        { id: 'z', title: 'End', blocks: [{ id: 'e', type: 'text', text: 'Bye' }] },
      ];
      const t = await run(undefined, { screens, quizFeedback: 'immediate' });
      const res = await t.send([
        { type: 'screen', screenId: 'a' },
        { type: 'answer', blockId: 'sc', answer: 'stay' },
      ]);
      expect(res.body.data.feedback).to.deep.equal([
        { blockId: 'sc', correct: false, outcome: 'Smoke fills the room.' },
      ]);
      const fin = await t.send([{ type: 'screen', screenId: 'z' }]);
      expect(fin.body.data.result?.review).to.deep.equal([
        { blockId: 'sc', screenId: 'a', correct: false, answer: 'stay', outcome: 'Smoke fills the room.' },
      ]);
    });
  });

  describe('immediate mode: a resumed run gets the verdicts already given', () => {
    it('reopening the run answers its stored graded answers with their verdicts; deferred courses never do', async () => {
      const ws = await makeWorkspace(em(), 'scale');
      const imm = await publishedCourse(app.base, ws.key, { quizFeedback: 'immediate' });
      const def = await publishedCourse(app.base, ws.key);
      for (const [courseId, immediate] of [
        [imm, true],
        [def, false],
      ] as const) {
        const anon = anonymousId(++n);
        const first = await player<OpenRunResult>('POST', '/runs', { body: { courseId, anonymousId: anon } });
        const r = first.body.data;
        expect(r.completion).to.not.have.property('feedback');
        await player('POST', `/runs/${r.completion.id}/events`, {
          token: r.runToken,
          body: {
            batchId: `imm-${n}`,
            events: [
              { type: 'screen', screenId: 's1' },
              { type: 'answer', blockId: 'q1', answer: 'b' },
              { type: 'screen', screenId: 's2' },
              { type: 'answer', blockId: 'p1', answer: 'y' },
            ],
          },
        });
        const again = await player<OpenRunResult>('POST', '/runs', { body: { courseId, anonymousId: anon } });
        expect(again.status, again.text).to.be.oneOf([200, 201]);
        if (immediate)
          expect((again.body.data.completion as { feedback?: unknown }).feedback).to.deep.equal([
            { blockId: 'q1', correct: false, explanation: 'A is right' },
          ]);
        else expect(again.body.data.completion).to.not.have.property('feedback');
      }
    });
  });
});
