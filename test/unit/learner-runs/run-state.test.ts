import { expect } from 'chai';
import type { EventBatch } from '@lectern/contracts';
import { AppError } from '@lectern/errors';
import {
  applyEvents,
  checkEvents,
  creditedSeconds,
  indexCourse,
  judgePass,
  MAX_ANSWER_BYTES,
  type RunSnapshot,
} from '@lectern/learner-runs';

const SECRET = 'answer-key-secret';
const NOW = new Date('2026-11-26T12:00:00.000Z');
const idx = indexCourse([
  { id: 's1', title: 'One', blocks: [{ id: 'q1', type: 'quiz_true_false', statement: 'S1', correct: true }] },
  {
    id: 's2',
    title: 'Two',
    blocks: [
      { id: 'q2', type: 'quiz_true_false', statement: 'S2', correct: false, explanation: 'Because.' },
      { id: 'p', type: 'poll' },
    ],
  },
  { id: 's3', title: 'Three', blocks: [] },
]);
const material = { source: idx, served: idx };

function run(overrides: Partial<RunSnapshot> = {}): RunSnapshot {
  return {
    id: 'cmp_1',
    courseId: 'crs_1',
    source: 'embed',
    status: 'in_progress',
    attempt: null,
    pass: 1,
    passStartedAt: '2026-11-26T11:00:00.000Z',
    passTimeSeconds: 10,
    timeSpentSeconds: 10,
    contentHash: 'hash',
    lastScreenId: null,
    progressPercent: 0,
    answers: {},
    lastEventAt: new Date(NOW.getTime() - 60_000),
    course: { title: 'Course', passingScore: 50, quizFeedback: 'deferred' },
    identity: { id: 'idn_1', externalId: 'u1', name: 'Ada', email: null },
    ...overrides,
  };
}
const batch = (events: EventBatch['events']): EventBatch => ({ batchId: 'b1', events });
const apply = (r: RunSnapshot, events: EventBatch['events']) =>
  applyEvents(r, batch(events), material, { secret: SECRET, now: NOW });

describe('learner runs: run-state rules', () => {
  describe('checkEvents', () => {
    it('accepts screens and blocks of the course', () => {
      expect(() =>
        checkEvents(
          batch([
            { type: 'screen', screenId: 's2' },
            { type: 'answer', blockId: 'p', answer: 'x' },
            { type: 'time', seconds: 3 },
          ]),
          idx,
        ),
      ).not.to.throw();
    });

    it('refuses unknown screens and blocks, missing and oversized answers, each with its path', () => {
      let err: unknown;
      try {
        checkEvents(
          batch([
            { type: 'screen', screenId: 'nope' },
            { type: 'answer', blockId: 'nope', answer: 1 },
            { type: 'answer', blockId: 'q1', answer: undefined },
            { type: 'answer', blockId: 'q1', answer: 'x'.repeat(MAX_ANSWER_BYTES) },
          ]),
          idx,
        );
      } catch (e) {
        err = e;
      }
      expect(err).to.be.instanceOf(AppError);
      const e = err as AppError;
      expect(e.code).to.equal('invalid_request');
      expect(e.issues?.map((i) => [i.code, i.path])).to.deep.equal([
        ['unknown_screen', ['events', 0, 'screenId']],
        ['unknown_block', ['events', 1, 'blockId']],
        ['required', ['events', 2, 'answer']],
        ['too_big', ['events', 3, 'answer']],
      ]);
      expect(e.message).to.equal(
        'The batch names screens or blocks the course does not have; has an answer event without an answer; ' +
          'has an answer that is too large: at most 16 KiB (16384 bytes) of JSON per answer',
      );
    });

    it('an oversized answer alone is refused as too large, naming the limit, not as an unknown block', () => {
      let err: unknown;
      try {
        checkEvents(batch([{ type: 'answer', blockId: 'p', answer: 'x'.repeat(17 * 1024) }]), idx);
      } catch (e) {
        err = e;
      }
      expect(err).to.be.instanceOf(AppError);
      const e = err as AppError;
      expect(e.code).to.equal('invalid_request');
      expect(e.message).to.equal(
        'The batch has an answer that is too large: at most 16 KiB (16384 bytes) of JSON per answer',
      );
      expect(e.message).to.not.match(/does not have/);
      expect(e.issues).to.deep.equal([
        {
          code: 'too_big',
          path: ['events', 0, 'answer'],
          message: 'the answer is 17410 bytes of JSON; an answer may be at most 16 KiB (16384 bytes) of JSON',
        },
      ]);
    });
  });

  it('creditedSeconds: the claimed time, capped by the whole seconds since the previous call, never negative', () => {
    expect(creditedSeconds(30, new Date(NOW.getTime() - 60_000), NOW)).to.equal(30);
    expect(creditedSeconds(90, new Date(NOW.getTime() - 60_000), NOW)).to.equal(60);
    expect(creditedSeconds(5, new Date(NOW.getTime() - 1_500), NOW)).to.equal(2);
    expect(creditedSeconds(5, new Date(NOW.getTime() + 10_000).toISOString(), NOW)).to.equal(0);
  });

  it('judgePass: unanswered is wrong; percent with two decimals; no mark → null; nothing graded passes', () => {
    const v = judgePass(idx, { q1: true, q2: true }, 50, SECRET);
    expect(v.answers).to.deep.equal([
      { blockId: 'q1', correct: true },
      { blockId: 'q2', correct: false },
    ]);
    expect([v.correct, v.percent, v.passed]).to.deep.equal([1, 50, true]);
    expect(judgePass(idx, { q1: false }, 50, SECRET)).to.include({ correct: 0, percent: 0, passed: false });
    expect(judgePass(idx, { q1: true }, null, SECRET).passed).to.equal(null);
    const three = indexCourse([
      {
        id: 's',
        blocks: ['a', 'b', 'c'].map((id) => ({ id, type: 'quiz_true_false', statement: id, correct: true })),
      },
    ]);
    expect(judgePass(three, { a: true }, 34, SECRET)).to.include({ percent: 33.33, passed: false });
    const ungraded = indexCourse([{ id: 's', blocks: [{ id: 'p', type: 'poll' }] }]);
    expect(judgePass(ungraded, {}, 80, SECRET)).to.include({ correct: 0, percent: null, passed: true });
  });

  describe('applyEvents', () => {
    it('a screen moves position and progress with one progress event; the same screen again changes nothing', () => {
      const out = apply(run({ lastScreenId: 's1', progressPercent: 33.33 }), [
        { type: 'screen', screenId: 's1' },
        { type: 'screen', screenId: 's2' },
        { type: 'time', seconds: 20 },
      ]);
      expect(out.events.map((e) => e.type)).to.deep.equal(['course.progress']);
      expect(out.events[0].data).to.deep.include({
        screen: { id: 's2', title: 'Two', index: 1 },
        percent: 66.67,
      });
      expect(out).to.deep.include({
        status: 'in_progress',
        attempt: null,
        progress: 66.67,
        lastScreenId: 's2',
        timeSpentSeconds: 30,
        passTimeSeconds: 30,
        finish: null,
      });
      expect(out.response).to.deep.equal({
        completion: { status: 'in_progress', attempt: null, progressPercent: 66.67, lastScreenId: 's2' },
      });
    });

    it('going back keeps the furthest progress', () => {
      const out = apply(run({ lastScreenId: 's2', progressPercent: 66.67 }), [
        { type: 'screen', screenId: 's1' },
      ]);
      expect([out.progress, out.lastScreenId]).to.deep.equal([66.67, 's1']);
    });

    it('answers are stored; graded ones emit course.answered; immediate feedback carries the explanation', () => {
      const r = run({ course: { title: 'Course', passingScore: null, quizFeedback: 'immediate' } });
      const out = apply(r, [
        { type: 'answer', blockId: 'p', answer: 'yes' },
        { type: 'answer', blockId: 'q1', answer: true },
        { type: 'answer', blockId: 'q2', answer: false },
      ]);
      expect(out.answers).to.deep.equal({ p: 'yes', q1: true, q2: false });
      expect(out.events.map((e) => [e.type, (e.data as { correct?: boolean }).correct])).to.deep.equal([
        ['course.answered', true],
        ['course.answered', true],
      ]);
      expect(out.response.feedback).to.deep.equal([
        { blockId: 'q1', correct: true },
        { blockId: 'q2', correct: true, explanation: 'Because.' },
      ]);
      expect(r.answers).to.deep.equal({}); // the snapshot is not mutated
    });

    it('deferred feedback answers no feedback list', () => {
      const out = apply(run(), [{ type: 'answer', blockId: 'q1', answer: true }]);
      expect(out.response).not.to.have.property('feedback');
    });

    it('reaching the last screen finishes the pass, judged after the whole batch', () => {
      const out = apply(run({ answers: { q1: true } }), [
        { type: 'screen', screenId: 's3' },
        { type: 'answer', blockId: 'q2', answer: true },
        { type: 'time', seconds: 15 },
      ]);
      expect(out.events.map((e) => e.type)).to.deep.equal([
        'course.progress',
        'course.answered',
        'course.completed',
      ]);
      expect(out.events[2].data).to.deep.include({
        completionId: 'cmp_1',
        attempt: 1,
        source: 'embed',
        score: { correct: 1, total: 2, percent: 50 },
        passed: true,
        passingScore: 50,
        startedAt: '2026-11-26T11:00:00.000Z',
        completedAt: NOW.toISOString(),
        timeSpentSeconds: 25,
      });
      expect(out).to.deep.include({ status: 'completed', attempt: 1, progress: 100 });
      expect(out.finish).to.deep.equal({
        attempt: 1,
        score: 50,
        passed: true,
        passingScore: 50,
        startedAt: '2026-11-26T11:00:00.000Z',
      });
      expect(out.response.result).to.deep.include({ score: 50, passed: true, attempt: 1 });
    });

    it('after the finish (pass closed) answers are neither stored nor graded and nothing finishes again', () => {
      const done = run({
        status: 'completed',
        attempt: 1,
        pass: 1,
        progressPercent: 100,
        answers: { q1: true },
      });
      const out = apply(done, [
        { type: 'screen', screenId: 's1' },
        { type: 'answer', blockId: 'q1', answer: false },
        { type: 'screen', screenId: 's3' },
      ]);
      expect(out.answers).to.deep.equal({ q1: true });
      expect(out.events.map((e) => e.type)).to.deep.equal(['course.progress', 'course.progress']);
      expect(out).to.deep.include({ status: 'completed', attempt: 1, progress: 100, finish: null });
      expect(out.response).not.to.have.property('result');
    });

    it('a retaken pass (attempt < pass) finishes as the next attempt', () => {
      const retaken = run({ status: 'completed', attempt: 1, pass: 2, progressPercent: 0 });
      const out = apply(retaken, [{ type: 'screen', screenId: 's3' }]);
      expect(out.finish).to.include({ attempt: 2, score: 0, passed: false });
      expect(out.response.completion).to.deep.equal({
        status: 'completed',
        attempt: 2,
        progressPercent: 100,
        lastScreenId: 's3',
      });
    });

    it('the served translation is graded, the source names the events', () => {
      const served = indexCourse([
        {
          id: 's1',
          title: 'Un',
          blocks: [{ id: 'q1', type: 'quiz_true_false', statement: 'S1', correct: false }],
        },
        { id: 's2', title: 'Deux', blocks: [] },
        { id: 's3', title: 'Trois', blocks: [] },
      ]);
      const out = applyEvents(
        run(),
        batch([
          { type: 'screen', screenId: 's1' },
          { type: 'answer', blockId: 'q1', answer: false },
        ]),
        { source: idx, served },
        { secret: SECRET, now: NOW },
      );
      expect(out.events[0].data).to.deep.include({ screen: { id: 's1', title: 'One', index: 0 } });
      expect(out.events[1].data).to.deep.include({ correct: true, screen: { id: 's1', title: 'One' } });
    });
  });
});
