/**
 * Feedback on ungraded blocks through the Player API (issue 19): a poll that shows results answers its votes over
 * every run of its course once the learner voted (`GET /player/v1/runs/:id/polls/:blockId`), and an ungraded
 * scenario's chosen outcome comes back in the events answer (`outcomes`), whatever the feedback mode.
 */
import { expect } from 'chai';
import type { OpenRunResult, PollResultsDto } from '@lectern/contracts';
import { makeWorkspace } from '../support/context.js';
import { startCustomApp, type CustomApp } from '../support/spine.js';
import { anonymousId, playerApi, publishedCourse } from '../support/player.js';

interface BatchData {
  outcomes?: { blockId: string; outcome: string }[];
  feedback?: unknown[];
}

const screens = () => [
  {
    id: 's1',
    title: 'Opinions',
    blocks: [
      {
        id: 'poll-open',
        type: 'poll',
        question: 'Have you used an extinguisher?',
        showResults: true,
        options: [
          { id: 'y', text: 'Yes' },
          { id: 'n', text: 'No' },
          { id: 'u', text: 'Not sure' },
        ],
      },
      {
        id: 'poll-closed',
        type: 'poll',
        question: 'Do you like drills?',
        options: [
          { id: 'y', text: 'Yes' },
          { id: 'n', text: 'No' },
        ],
      },
      {
        id: 'branch',
        type: 'scenario',
        situation: 'A colleague asks where the assembly point is.',
        choices: [
          { id: 'show', text: 'Walk them there', outcome: 'They will remember the way.' },
          { id: 'tell', text: 'Tell them', outcome: 'They nod and forget.' },
        ],
      },
      {
        id: 'graded',
        type: 'scenario',
        situation: 'You smell smoke.',
        choices: [
          { id: 'alarm', text: 'Raise the alarm', outcome: 'Everyone gets out.', correct: true },
          { id: 'ignore', text: 'Carry on', outcome: 'The fire spreads.' },
        ],
      },
    ],
  },
  { id: 's2', title: 'End', blocks: [{ id: 't', type: 'text', text: 'Thanks.' }] },
];

describe('player API: poll results and ungraded scenario outcomes (issue 19)', () => {
  let app: CustomApp;
  let player: ReturnType<typeof playerApi>;
  let n = 0;
  before(async () => {
    app = await startCustomApp();
    player = playerApi(app.url);
  });
  after(async () => app?.close());
  const em = () => app.rt.orm.em.fork();

  async function learner(courseId: string) {
    const opened = await player<OpenRunResult>('POST', '/runs', {
      body: { courseId, anonymousId: anonymousId(++n) },
    });
    expect(opened.status, opened.text).to.equal(201);
    const r = opened.body.data;
    const answer = (blockId: string, value: unknown) =>
      player<BatchData>('POST', `/runs/${r.completion.id}/events`, {
        token: r.runToken,
        body: { batchId: `b-${++n}`, events: [{ type: 'answer', blockId, answer: value }] },
      });
    const results = (blockId: string) =>
      player<PollResultsDto>('GET', `/runs/${r.completion.id}/polls/${encodeURIComponent(blockId)}`, {
        token: r.runToken,
      });
    return { run: r, answer, results };
  }

  it('answers the votes of every run of the course once this run voted, for a poll that shows them', async () => {
    const ws = await makeWorkspace(em(), 'scale');
    const courseId = await publishedCourse(app.base, ws.key, { screens: screens() });
    // Another course with the same block ids: its votes are its own.
    const otherId = await publishedCourse(app.base, ws.key, { screens: screens() });
    const other = await learner(otherId);
    expect((await other.answer('poll-open', 'n')).status).to.equal(200);

    const [a, b, c] = [await learner(courseId), await learner(courseId), await learner(courseId)];
    // The learner view carries the setting, so the player knows to ask.
    const poll = a.run.course.screens[0].blocks.find((x) => x.id === 'poll-open') as {
      showResults?: boolean;
    };
    expect(poll.showResults).to.equal(true);

    const before = await c.results('poll-open');
    expect(before.status, before.text).to.equal(403);
    expect(before.body).to.include({ error: 'forbidden', reason: 'not_voted' });

    for (const [who, vote] of [
      [a, 'y'],
      [b, 'y'],
      [c, 'n'],
    ] as const)
      expect((await who.answer('poll-open', vote)).status).to.equal(200);
    const res = await c.results('poll-open');
    expect(res.status, res.text).to.equal(200);
    expect(res.body.data).to.deep.equal({
      blockId: 'poll-open',
      total: 3,
      options: [
        { id: 'y', votes: 2 },
        { id: 'n', votes: 1 },
        { id: 'u', votes: 0 },
      ],
    });
    // A changed vote counts once, for the new option.
    await a.answer('poll-open', 'u');
    expect((await a.results('poll-open')).body.data.options).to.deep.equal([
      { id: 'y', votes: 1 },
      { id: 'n', votes: 1 },
      { id: 'u', votes: 1 },
    ]);
  });

  it('refuses a poll that hides results, another block, an unknown id and a run token of another run', async () => {
    const ws = await makeWorkspace(em(), 'scale');
    const courseId = await publishedCourse(app.base, ws.key, { screens: screens() });
    const a = await learner(courseId);
    await a.answer('poll-closed', 'y');
    const hidden = await a.results('poll-closed');
    expect(hidden.status, hidden.text).to.equal(403);
    expect(hidden.body).to.include({ error: 'forbidden', reason: 'results_hidden' });
    for (const id of ['branch', 'nope']) {
      const missing = await a.results(id);
      expect(missing.status, `${id}: ${missing.text}`).to.equal(404);
      expect(missing.body.error).to.equal('not_found');
    }
    const b = await learner(courseId);
    const crossed = await player('GET', `/runs/${a.run.completion.id}/polls/poll-open`, {
      token: b.run.runToken,
    });
    expect(crossed.status).to.equal(401);
    expect((await player('GET', `/runs/${a.run.completion.id}/polls/poll-open`)).status).to.equal(401);
  });

  it("gives an ungraded scenario's chosen outcome in any feedback mode, and none for a graded one", async () => {
    const ws = await makeWorkspace(em(), 'scale');
    for (const quizFeedback of ['deferred', 'immediate'] as const) {
      const courseId = await publishedCourse(app.base, ws.key, { screens: screens(), quizFeedback });
      const a = await learner(courseId);
      // The learner view withholds the outcomes.
      expect(JSON.stringify(a.run.course)).to.not.include('They will remember');
      const branch = await a.answer('branch', 'show');
      expect(branch.status, branch.text).to.equal(200);
      expect(branch.body.data.outcomes, quizFeedback).to.deep.equal([
        { blockId: 'branch', outcome: 'They will remember the way.' },
      ]);
      const graded = await a.answer('graded', 'ignore');
      expect(graded.body.data.outcomes, quizFeedback).to.equal(undefined);
    }
  });
});
