/**
 * Completion rules and answers never lost, in Chromium against the real embed page and Player API: a sequential
 * course locks later screens in Contents and holds the learner on a screen whose graded blocks are unanswered;
 * a chosen answer not handed in is handed in by Continue (deferred) or asked about (immediate); typed
 * reflection and fill-in text survives moving between screens and reloading; Contents marks visited and
 * complete screens.
 */
import { expect } from 'chai';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { CHROME_STRINGS, format, type PlayerAssets } from '@lectern/player';
import { makeWorkspace, startTestApp, type TestApp, type TestWorkspace } from '../support/context.js';
import { waitFor } from '../support/http.js';
import { api } from '../support/authoring.js';
import { createEmbedKey, publishedCourse, quizScreens, signIdentity } from '../support/player.js';
import {
  CHROMIUM,
  OUTPUT_DIR,
  buildPlayerOnce,
  installPageHelpers,
  seriousAxeViolations,
  tabTo,
  waitReady,
  watchErrors,
} from '../support/player-browser.js';

const en = CHROME_STRINGS.en;

interface CompletionRow {
  id: string;
  status: string;
  score: number | null;
  attempt: number | null;
  lastScreenId: string | null;
  answers: Record<string, unknown>;
}

describe('player: completion rules and answers never lost (Chromium)', function () {
  this.timeout(180_000);
  let app: TestApp;
  let browser: Browser;
  let assets: PlayerAssets;
  let ws: TestWorkspace;
  let embedKey: { id: string; secret: string };
  const em = () => app.rt.orm.em.fork();

  before(async () => {
    assets = await buildPlayerOnce();
    app = await startTestApp({ PLAYER_ASSETS_DIR: assets.dir });
    const port = new URL(app.url).port;
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: ['--no-sandbox', `--host-resolver-rules=MAP lectern.test:80 127.0.0.1:${port}`],
    });
    ws = await makeWorkspace(em(), 'scale', 'Completion');
    embedKey = await createEmbedKey(app.base, ws.key);
  });
  after(async () => {
    await browser?.close();
    await app?.close();
  });

  const req = () => api(app.base, ws.key);

  async function learnerContext(): Promise<BrowserContext> {
    const context = await browser.newContext();
    await installPageHelpers(context);
    await context.route('**/favicon.ico', (r) => r.fulfill({ status: 204 }));
    return context;
  }

  const embedUrl = async (courseId: string, sub: string) => {
    const token = await signIdentity(embedKey, { name: 'Grace Hopper' }, { sub });
    return `http://lectern.test/embed/${courseId}?identity=${encodeURIComponent(token)}`;
  };

  async function completionOf(
    courseId: string,
    sub: string,
    ready: (c: CompletionRow) => boolean,
    what: string,
  ) {
    return waitFor(
      async () => {
        const list = await req()<{ id: string }[]>(
          'GET',
          `/completions?courseId=${courseId}&identityExternalId=${sub}`,
        );
        const id = list.body.data[0]?.id;
        if (!id) return null;
        const one = await req()<CompletionRow>('GET', `/completions/${id}`);
        return ready(one.body.data) ? one.body.data : null;
      },
      { what, timeoutMs: 20_000, intervalMs: 250 },
    );
  }

  const heading = (page: Page, name: string) => page.getByRole('heading', { name, level: 1 }).waitFor();
  const cont = (page: Page) => page.locator('.lp-continue').click();
  /** Each Contents entry's state (`locked`, `visited`, `complete`, or `-`), in order, from the dialog. */
  async function contents(page: Page): Promise<string[]> {
    await page.locator('.lp-contents-btn').click();
    const dialog = page.locator('dialog.lp-dialog[open]');
    await dialog.waitFor();
    const states = await dialog
      .locator('.lp-contents > li')
      .evaluateAll((lis) => lis.map((li) => li.getAttribute('data-state') ?? '-'));
    return states;
  }
  const closeContents = (page: Page) => page.locator('dialog.lp-dialog[open] > button.lp-btn').click();

  it('sequential: later screens locked, held until graded blocks are answered, Continue hands in the ticks', async () => {
    const courseId = await publishedCourse(app.base, ws.key, { title: 'In order', completion: 'sequential' });
    const context = await learnerContext();
    const page = await context.newPage();
    const errors = watchErrors(page);
    try {
      await page.goto(await embedUrl(courseId, 'seq'));
      await waitReady(page);
      await heading(page, 'Welcome');
      expect(await contents(page)).to.deep.equal(['visited', 'locked', 'locked']);
      // A locked entry cannot be picked.
      const lockedEntry = page.locator('dialog.lp-dialog[open] .lp-contents > li').nth(2).locator('button');
      expect(await lockedEntry.isDisabled()).to.equal(true);
      expect(await lockedEntry.innerText()).to.include(en.locked);
      expect(await seriousAxeViolations(page)).to.deep.equal([]);
      await closeContents(page);

      // Continue with nothing chosen: held, and told why.
      await cont(page);
      await page.locator('.lp-hold').getByText(en.answerFirst).waitFor();
      await heading(page, 'Welcome');
      expect(await seriousAxeViolations(page)).to.deep.equal([]);

      // Tick the right option, never press Submit: Continue hands it in.
      await page.locator('input[name="q1:o"][value="a"]').check();
      await cont(page);
      await heading(page, 'Middle');
      expect(await page.locator('.lp-hold').innerText()).to.equal('');
      expect(await contents(page)).to.deep.equal(['complete', 'visited', 'locked']);
      await closeContents(page);

      await page.locator('input[name="q2:tf"][value="true"]').check();
      await cont(page);
      await heading(page, 'Done');
      await page.locator('.lp-end').getByText(en.finished).waitFor();
      const done = await completionOf(courseId, 'seq', (c) => c.status === 'completed', 'the finish');
      expect(done.score).to.equal(100);
      expect(done.answers).to.deep.equal({ q1: 'a', q2: true });
      // After the finish, Contents opens every screen for review.
      expect(await contents(page)).to.deep.equal(['complete', 'complete', 'complete']);
      await closeContents(page);
      expect(errors).to.deep.equal([]);
    } finally {
      await context.close();
    }
  });

  it('free course: Contents marks visited and complete; a chosen multiple answer is scored after Continue', async () => {
    const screens = quizScreens();
    screens[0].blocks[1] = {
      id: 'q1',
      type: 'quiz_multiple_choice',
      question: 'Pick both',
      options: [
        { id: 'a', text: 'A', correct: true },
        { id: 'b', text: 'B', correct: true },
        { id: 'c', text: 'C' },
      ],
    } as (typeof screens)[0]['blocks'][1];
    const courseId = await publishedCourse(app.base, ws.key, { title: 'Free', screens });
    const context = await learnerContext();
    const page = await context.newPage();
    try {
      await page.goto(await embedUrl(courseId, 'free'));
      await waitReady(page);
      await heading(page, 'Welcome');
      await page.locator('input[name="q1:o"][value="a"]').check();
      await page.locator('input[name="q1:o"][value="b"]').check();
      await cont(page);
      await heading(page, 'Middle');
      expect(await contents(page)).to.deep.equal(['complete', 'visited', '-']);
      await closeContents(page);
      await page.locator('input[name="q2:tf"][value="true"]').check();
      await cont(page);
      await heading(page, 'Done');
      const done = await completionOf(courseId, 'free', (c) => c.status === 'completed', 'the finish');
      expect(done.score).to.equal(100);
      expect(done.answers.q1).to.have.members(['a', 'b']);
    } finally {
      await context.close();
    }
  });

  it('immediate mode asks before leaving an unchecked answer: check it, or go on without it', async () => {
    const courseId = await publishedCourse(app.base, ws.key, { title: 'Ask', quizFeedback: 'immediate' });
    const context = await learnerContext();
    const page = await context.newPage();
    try {
      await page.goto(await embedUrl(courseId, 'ask'));
      await waitReady(page);
      await heading(page, 'Welcome');
      await page.locator('input[name="q1:o"][value="a"]').check();
      await cont(page);
      const ask = page.locator('dialog.lp-confirm[open]');
      await ask.getByText(en.unsubmitted).waitFor();
      expect(await seriousAxeViolations(page)).to.deep.equal([]);
      await ask.getByRole('button', { name: en.checkNow }).click();
      await page.locator('form:has(input[name="q1:o"]) .lp-good').waitFor();
      await heading(page, 'Welcome');
      await cont(page);
      await heading(page, 'Middle');
      // Leaving without checking: the answer is not handed in.
      await page.locator('input[name="q2:tf"][value="false"]').check();
      await cont(page);
      await page.locator('dialog.lp-confirm[open]').getByRole('button', { name: en.leaveAnyway }).click();
      await heading(page, 'Done');
      // A reload of the run (back on Welcome) shows q1's verdict, the question closed, not reopened.
      await page.reload();
      await waitReady(page);
      await page.locator('.lp-contents-btn').click();
      await page.locator('dialog.lp-dialog[open] .lp-contents > li').nth(0).locator('button').click();
      await heading(page, 'Welcome');
      await page.locator('form:has(input[name="q1:o"]) .lp-good').waitFor();
      expect(await page.locator('input[name="q1:o"][value="a"]').isDisabled()).to.equal(true);
      const done = await completionOf(courseId, 'ask', (c) => c.status === 'completed', 'the finish');
      expect(done.answers).to.deep.equal({ q1: 'a' });
      expect(done.score).to.equal(50);
    } finally {
      await context.close();
    }
  });

  it('typed reflection and fill-in text stay as drafts across screens and a reload, and are not sent', async () => {
    const screens = [
      {
        id: 'w1',
        title: 'Write',
        blocks: [
          { id: 'r1', type: 'reflection', prompt: 'What did you learn?' },
          {
            id: 'f1',
            type: 'fill_in_blank',
            text: 'Fire needs {{b1}} and {{b2}}.',
            blanks: [
              { id: 'b1', answers: ['heat'] },
              { id: 'b2', answers: ['oxygen'] },
            ],
          },
        ],
      },
      { id: 'w2', title: 'Next', blocks: [{ id: 't', type: 'text', text: 'More' }] },
      { id: 'w3', title: 'End', blocks: [{ id: 'e', type: 'text', text: 'Bye' }] },
    ];
    const courseId = await publishedCourse(app.base, ws.key, { title: 'Drafts', screens });
    const context = await learnerContext();
    const page = await context.newPage();
    try {
      await page.goto(await embedUrl(courseId, 'draft'));
      await waitReady(page);
      await heading(page, 'Write');
      await page.locator('textarea').fill('Half a thought');
      await page.locator('.lp-blank').first().fill('heat');
      await page.reload();
      await waitReady(page);
      await heading(page, 'Write');
      expect(await page.locator('textarea').inputValue()).to.equal('Half a thought');
      expect(await page.locator('.lp-blank').first().inputValue()).to.equal('heat');
      expect(await page.locator('.lp-blank').nth(1).inputValue()).to.equal('');
      // Back is a move that hands nothing in; the drafts are there on return.
      await page.locator('.lp-contents-btn').click();
      await page.locator('dialog.lp-dialog[open] .lp-contents > li').nth(1).locator('button').click();
      await heading(page, 'Next');
      await page.locator('.lp-back').click();
      await heading(page, 'Write');
      expect(await page.locator('textarea').inputValue()).to.equal('Half a thought');
      expect(await page.locator('.lp-blank').first().inputValue()).to.equal('heat');
      const run = await completionOf(courseId, 'draft', (c) => c.lastScreenId === 'w1', 'the run back on w1');
      expect(run.answers).to.not.have.property('f1');
    } finally {
      await context.close();
    }
  });

  it('deferred review at the end: right/wrong, the answer, the correct one when shown, the explanation', async () => {
    const courseId = await publishedCourse(app.base, ws.key, {
      title: 'Review',
      review: { showCorrectAnswers: true },
    });
    const context = await learnerContext();
    const page = await context.newPage();
    try {
      await page.goto(await embedUrl(courseId, 'review'));
      await waitReady(page);
      await heading(page, 'Welcome');
      await page.locator('input[name="q1:o"][value="b"]').check();
      await cont(page);
      await heading(page, 'Middle');
      // The poll says Vote, not Check answer.
      expect(await page.locator('form:has(input[name="p1:p"]) button[type="submit"]').innerText()).to.equal(
        en.vote,
      );
      await page.locator('input[name="q2:tf"][value="true"]').check();
      await cont(page);
      await heading(page, 'Done');
      const review = page.locator('.lp-review');
      await review.waitFor();
      const q1 = review.locator('[data-block="q1"]');
      expect(await q1.innerText()).to.include(en.incorrect);
      expect(await q1.innerText()).to.include('Your answer: B');
      expect(await q1.innerText()).to.include('Correct answer: A');
      expect(await q1.innerText()).to.include('A is right');
      const q2 = review.locator('[data-block="q2"]');
      expect(await q2.innerText()).to.include(en.correct);
      expect(await q2.innerText()).to.include(`Your answer: ${en.true}`);
      expect(await q2.innerText()).to.not.include('Correct answer');
      expect(await seriousAxeViolations(page)).to.deep.equal([]);
      // A reload (or another device) of the finished run shows the same review again.
      await page.reload();
      await waitReady(page);
      await heading(page, 'Done');
      const again = page.locator('.lp-review');
      await again.waitFor();
      const q1Again = await again.locator('[data-block="q1"]').innerText();
      for (const part of [en.incorrect, 'Your answer: B', 'Correct answer: A', 'A is right'])
        expect(q1Again).to.include(part);
      expect(await again.locator('[data-block="q2"]').innerText()).to.include(`Your answer: ${en.true}`);
    } finally {
      await context.close();
    }
  });

  it('a timed question’s Try again restarts the timer', async () => {
    const screens = [
      {
        id: 't1',
        title: 'Quick',
        blocks: [
          {
            id: 'tq',
            type: 'timed_question',
            question: 'Fast?',
            seconds: 5,
            options: [
              { id: 'y', text: 'Yes', correct: true },
              { id: 'n', text: 'No' },
            ],
          },
        ],
      },
      { id: 't2', title: 'End', blocks: [{ id: 'e', type: 'text', text: 'Bye' }] },
    ];
    const courseId = await publishedCourse(app.base, ws.key, {
      title: 'Timed',
      screens,
      quizFeedback: 'immediate',
    });
    const context = await learnerContext();
    const page = await context.newPage();
    try {
      await page.goto(await embedUrl(courseId, 'timed'));
      await waitReady(page);
      await heading(page, 'Quick');
      await page.getByRole('button', { name: en.start }).click();
      // Let it run out.
      await page.locator('.lp-timed > .lp-bad').getByText(en.timeUp).waitFor({ timeout: 20_000 });
      await page.getByRole('button', { name: en.tryAgain }).click();
      // A fresh timer: the question is open and can be answered.
      await page.locator('.lp-timer').waitFor();
      await page.locator('input[name="tq:o"][value="y"]').check();
      await page.locator('form:has(input[name="tq:o"]) button[type="submit"]').click();
      await page.locator('form:has(input[name="tq:o"]) .lp-good').waitFor();
    } finally {
      await context.close();
    }
  });
  it('a poll that shows results shows the shares after the vote; an ungraded scenario shows its outcome (keyboard)', async () => {
    mkdirSync(OUTPUT_DIR, { recursive: true });
    const screens = [
      {
        id: 's1',
        title: 'Your view',
        blocks: [
          {
            id: 'poll',
            type: 'poll',
            question: 'Have you used an extinguisher?',
            showResults: true,
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
        ],
      },
      { id: 's2', title: 'End', blocks: [{ id: 't', type: 'text', text: 'Thanks.' }] },
    ];
    const variants = [
      ['stage', 'light'],
      ['stage', 'dark'],
      ['console', 'dark'],
      ['editorial', 'light'],
    ] as const;
    for (const [concept, mode] of variants) {
      const theme = await req()<{ id: string }>('POST', '/themes', {
        name: `${concept} ${mode}`,
        tokens: { concept, mode },
      });
      expect(theme.status, theme.text).to.equal(201);
      const courseId = await publishedCourse(app.base, ws.key, {
        title: 'Polls',
        screens,
        themeId: theme.body.data.id,
      });
      const context = await learnerContext();
      try {
        // Two learners vote: one "Yes" (mouse), then this one "No" by keyboard alone.
        for (const [sub, vote] of [
          [`poll-a-${concept}-${mode}`, 'y'],
          [`poll-b-${concept}-${mode}`, 'n'],
        ] as const) {
          const page = await context.newPage();
          const errors = watchErrors(page);
          await page.goto(await embedUrl(courseId, sub));
          await waitReady(page);
          // Tab enters the radio group on its first option; the arrow keys choose within it.
          await tabTo(page, 'input[name="poll:p"]');
          await page.keyboard.press(vote === 'y' ? 'Space' : 'ArrowDown');
          await tabTo(page, '[data-block-id="poll"] button[type="submit"]');
          await page.keyboard.press('Enter');
          const results = page.locator('[data-block-id="poll"] .lp-poll-results');
          await results.waitFor();
          expect(await page.evaluate('document.activeElement.className')).to.include('lp-verdict');
          if (vote === 'n') {
            expect(await results.innerText()).to.include(format(en.pollResults, { total: 2 }));
            const shares = await results.locator('li strong').allInnerTexts();
            expect(shares).to.deep.equal(['50%', '50%']);
            // The ungraded scenario: its outcome, right after the answer.
            await tabTo(page, 'input[name="branch:c"]');
            await page.keyboard.press('Space');
            await tabTo(page, '[data-block-id="branch"] button[type="submit"]');
            await page.keyboard.press('Enter');
            await page
              .locator('[data-block-id="branch"] .lp-outcome')
              .getByText('They will remember the way.')
              .waitFor();
            const reply = await page.locator('[data-block-id="branch"] .lp-verdict').innerText();
            expect(reply).to.not.include(en.resultsAtEnd);
            await page.screenshot({
              path: path.join(OUTPUT_DIR, `poll-results-${concept}-${mode}.png`),
              fullPage: true,
            });
            expect(await seriousAxeViolations(page), `${concept} ${mode}`).to.deep.equal([]);
          }
          expect(errors).to.deep.equal([]);
          await page.close();
        }
      } finally {
        await context.close();
      }
    }
  });
});
