/**
 * The review at the end of a finished run (docs/player.md "Review"): each graded question with right or wrong,
 * the learner's answer, the correct one when the course shows them, the explanation and a scenario's outcome.
 * Everything comes from the server's finishing answer; nothing here knows an answer key.
 */
import { format, type ChromeStrings } from '../core/i18n.js';
import type { PlayerBlock, PlayerCourse, ReviewItem } from '../core/types.js';
import { itemId, recs, str } from './util.js';

/** The words a learner saw for the ids of an answer: option, choice, item and right-hand texts. */
function labels(b: PlayerBlock): Map<string, string> {
  const out = new Map<string, string>();
  for (const key of ['options', 'choices', 'items', 'right', 'left'])
    recs(b[key]).forEach((o, i) => out.set(itemId(o, i), str(o.text)));
  return out;
}

/** An answer in words; '' when it cannot be put in words (a point on an image). */
export function answerText(b: PlayerBlock, answer: unknown, t: ChromeStrings): string {
  const names = labels(b);
  const word = (v: unknown): string =>
    typeof v === 'boolean' ? (v ? t.true : t.false) : typeof v === 'string' ? (names.get(v) ?? v) : '';
  if (Array.isArray(answer)) return answer.map(word).filter(Boolean).join(', ');
  if (typeof answer === 'object' && answer !== null) {
    // A match (left id → right id) reads "left → right"; fill-in blanks read in blank order.
    return Object.entries(answer)
      .map(([k, v]) => (b.type === 'match' ? `${names.get(k) ?? k} → ${word(v)}` : word(v)))
      .filter(Boolean)
      .join(b.type === 'match' ? '; ' : ', ');
  }
  return word(answer);
}

const questionOf = (b: PlayerBlock) =>
  str(b.question) ||
  str(b.statement) ||
  str(b.situation) ||
  str(b.prompt) ||
  str(b.text).replace(/\{\{[^{}]+\}\}/g, '___');

export function Review({
  items,
  course,
  t,
}: {
  items: ReviewItem[];
  course: PlayerCourse;
  t: ChromeStrings;
}) {
  const blocks = new Map(course.screens.flatMap((s) => s.blocks.map((b) => [b.id, b] as const)));
  const shown = items.filter((i) => blocks.has(i.blockId));
  if (shown.length === 0) return null;
  return (
    <section class="lp-review" aria-labelledby="lp-review-title">
      <h2 id="lp-review-title" class="lp-card-title">
        {t.review}
      </h2>
      <ol class="lp-review-list">
        {shown.map((item) => {
          const b = blocks.get(item.blockId)!;
          const given = item.answer === undefined ? '' : answerText(b, item.answer, t);
          const right = item.correctAnswer === undefined ? '' : answerText(b, item.correctAnswer, t);
          return (
            <li key={item.blockId} class="lp-review-item" data-block={item.blockId}>
              <p class="lp-legend">{questionOf(b)}</p>
              <p class={item.correct ? 'lp-good' : 'lp-bad'}>
                <span aria-hidden="true">{item.correct ? '✓ ' : '✗ '}</span>
                {item.correct ? t.correct : t.incorrect}
              </p>
              <p class="lp-review-answer">
                {item.answer === undefined ? t.noAnswer : format(t.yourAnswer, { name: given })}
              </p>
              {right && !item.correct && (
                <p class="lp-review-right">{format(t.rightAnswer, { name: right })}</p>
              )}
              {item.outcome && <p>{item.outcome}</p>}
              {item.explanation && <p class="lp-muted">{item.explanation}</p>}
            </li>
          );
        })}
      </ol>
    </section>
  );
}
