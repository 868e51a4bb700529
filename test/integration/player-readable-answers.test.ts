import { expect } from 'chai';
import type { OpenRunResult } from '@lectern/contracts';
import { makeWorkspace } from '../support/context.js';
import { startCustomApp, outboxOf, type CustomApp } from '../support/spine.js';
import { api } from '../support/authoring.js';
import { createEmbedKey, playerApi, publishedCourse, signIdentity } from '../support/player.js';

type Open = OpenRunResult;
interface Item {
  answerId: string;
  id: string | null;
  text: string | null;
}

const SCREENS = [
  {
    id: 's1',
    title: 'Fire classes',
    blocks: [
      {
        id: 'm1',
        type: 'match',
        prompt: 'Match the class to the fuel',
        pairs: [
          { id: 'p1', left: 'Class A', right: 'Solids' },
          { id: 'p2', left: 'Class B', right: 'Liquids' },
        ],
      },
      {
        id: 'r1',
        type: 'ranking',
        question: 'Put the steps in order',
        items: [
          { id: 'i1', text: 'Pull the pin' },
          { id: 'i2', text: 'Aim at the base' },
          { id: 'i3', text: 'Squeeze the handle' },
        ],
      },
    ],
  },
  { id: 's2', title: 'Done', blocks: [{ id: 'bye', type: 'text', text: 'Bye' }] },
];

/**
 * Issue 19 §4 (readable answers) and the course's own fonts on the Player API: match and ranking answers hold the
 * keyed ids of the learner view; GET /completions/:id and course.completed put the course's item ids and texts
 * beside them.
 */
describe('Player API: readable match and ranking answers; the course’s own fonts', function () {
  this.timeout(30_000);
  let app: CustomApp;
  let player: ReturnType<typeof playerApi>;
  const em = () => app.rt.orm.em.fork();

  before(async () => {
    app = await startCustomApp();
    player = playerApi(app.url);
  });
  after(async () => {
    await app?.close();
  });

  async function setup(course: Record<string, unknown> = {}) {
    const ws = await makeWorkspace(em(), 'scale');
    const courseId = await publishedCourse(app.base, ws.key, {
      title: 'Fire classes',
      screens: SCREENS,
      ...course,
    });
    const ek = await createEmbedKey(app.base, ws.key);
    const res = await player<Open>('POST', '/runs', {
      body: { courseId, identity: await signIdentity(ek, { name: 'Ada' }, { sub: 'ada' }) },
    });
    expect(res.status, res.text).to.be.oneOf([200, 201]);
    return { ws, courseId, run: res.body.data };
  }
  /** The learner-view ids of the run's course: a match's right sides and a ranking's items, by text. */
  function learnerIds(run: Open) {
    const blocks = run.course.screens[0].blocks as unknown as Record<
      string,
      { id: string; text: string }[]
    >[];
    const byText = (list: { id: string; text: string }[]) => new Map(list.map((x) => [x.text, x.id]));
    return { right: byText(blocks[0].right), items: byText(blocks[1].items) };
  }

  it('GET /completions/:id and course.completed read the keyed ids back to item ids and texts (wrong answers too)', async () => {
    const { ws, run } = await setup();
    const ids = learnerIds(run);
    // The learner view never shows the stored ids of the keyed sides.
    expect([...ids.right.values(), ...ids.items.values()].every((id) => id.startsWith('k_'))).to.equal(true);
    const matchAnswer = { p1: ids.right.get('Liquids')!, p2: ids.right.get('Solids')! };
    const rankingAnswer = [
      ids.items.get('Aim at the base')!,
      ids.items.get('Pull the pin')!,
      ids.items.get('Squeeze the handle')!,
    ];
    const res = await player('POST', `/runs/${run.completion.id}/events`, {
      token: run.runToken,
      body: {
        batchId: 'all',
        events: [
          { type: 'screen', screenId: 's1' },
          { type: 'answer', blockId: 'm1', answer: matchAnswer },
          { type: 'answer', blockId: 'r1', answer: rankingAnswer },
          { type: 'screen', screenId: 's2' },
        ],
      },
    });
    expect(res.status, res.text).to.equal(200);

    const expectedMatch = {
      type: 'match',
      pairs: [
        {
          left: { answerId: 'p1', id: 'p1', text: 'Class A' },
          right: { answerId: matchAnswer.p1, id: 'p2', text: 'Liquids' },
        },
        {
          left: { answerId: 'p2', id: 'p2', text: 'Class B' },
          right: { answerId: matchAnswer.p2, id: 'p1', text: 'Solids' },
        },
      ],
    };
    const expectedRanking = {
      type: 'ranking',
      order: [
        { answerId: rankingAnswer[0], id: 'i2', text: 'Aim at the base' },
        { answerId: rankingAnswer[1], id: 'i1', text: 'Pull the pin' },
        { answerId: rankingAnswer[2], id: 'i3', text: 'Squeeze the handle' },
      ],
    };
    // A read-only key reads it (the route is read-only); the answers stay as sent beside it.
    const got = await api(app.base, ws.readKey)<{
      answers: Record<string, unknown>;
      answerItems: Record<string, unknown>;
    }>('GET', `/completions/${run.completion.id}`);
    expect(got.status, got.text).to.equal(200);
    expect(got.body.data.answers).to.deep.equal({ m1: matchAnswer, r1: rankingAnswer });
    expect(got.body.data.answerItems).to.deep.equal({ m1: expectedMatch, r1: expectedRanking });

    const completed = (await outboxOf(em(), ws.id)).find((e) => e.type === 'course.completed');
    const answers = (
      completed!.data as { answers: { blockId: string; correct: boolean; answerItems?: unknown }[] }
    ).answers;
    expect(answers).to.deep.equal([
      { blockId: 'm1', correct: false, answerItems: expectedMatch },
      { blockId: 'r1', correct: false, answerItems: expectedRanking },
    ]);
  });

  it('ids that name no item (forged, or an item deleted since) read as null; an unanswered block has no entry', async () => {
    const { ws, run } = await setup();
    const res = await player('POST', `/runs/${run.completion.id}/events`, {
      token: run.runToken,
      body: {
        batchId: 'forged',
        events: [
          { type: 'screen', screenId: 's1' },
          { type: 'answer', blockId: 'r1', answer: ['k_00000000000000000000', 'i1', 42] },
          {
            type: 'answer',
            blockId: 'm1',
            answer: [['nope', 'k_ffffffffffffffffffff'], { left: 'p1', right: 'p1' }],
          },
        ],
      },
    });
    expect(res.status, res.text).to.equal(200);
    const got = await api(app.base, ws.key)<{
      answerItems: Record<string, { order?: Item[]; pairs?: { left: Item; right: Item }[] }>;
    }>('GET', `/completions/${run.completion.id}`);
    expect(got.status, got.text).to.equal(200);
    // The stored id `i1` is not what a learner is given: it names nothing.
    expect(got.body.data.answerItems.r1.order).to.deep.equal([
      { answerId: 'k_00000000000000000000', id: null, text: null },
      { answerId: 'i1', id: null, text: null },
    ]);
    expect(got.body.data.answerItems.m1.pairs).to.deep.equal([
      {
        left: { answerId: 'nope', id: null, text: null },
        right: { answerId: 'k_ffffffffffffffffffff', id: null, text: null },
      },
      {
        left: { answerId: 'p1', id: 'p1', text: 'Class A' },
        right: { answerId: 'p1', id: null, text: null },
      },
    ]);

    const fresh = await setup();
    const none = await api(app.base, fresh.ws.key)<{ answerItems: Record<string, unknown> }>(
      'GET',
      `/completions/${fresh.run.completion.id}`,
    );
    expect(none.body.data.answerItems).to.deep.equal({});
  });

  it('the run’s course carries the course’s own customFonts, as the preview does', async () => {
    const customFonts = [
      { family: 'Brand Sans', url: 'https://fonts.example.com/brand.woff2', weight: 700 },
      { family: 'Brand Serif', url: 'https://fonts.example.com/serif.woff2', style: 'italic' },
    ];
    const { run } = await setup({ customFonts });
    expect(run.course.customFonts).to.deep.equal(customFonts);
    const plain = await setup();
    expect(plain.run.course).not.to.have.property('customFonts');
  });
});
