/** The player around the blocks: the concept's chrome, the screen, Back/Continue, Contents, the end panel. */
import { useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks';
import { format, type ChromeStrings } from '../core/i18n.js';
import type { ResolvedTheme } from '../core/theme.js';
import { Block, headingLevels, type BlockCtx } from './blocks.js';
import { CertificateDownload } from './certificate.js';
import { Review } from './review.js';
import type { Session, SessionState } from './session.js';

/** A horizontal touch movement at least this long (CSS px), and mostly horizontal, turns the screen. */
const SWIPE_MIN_PX = 60;

function useSession(session: Session): SessionState {
  const [state, setState] = useState(session.state);
  useEffect(() => session.subscribe(() => setState(session.state)), [session]);
  return state;
}

function ContentsList({
  session,
  state,
  t,
  onPick,
}: {
  session: Session;
  state: SessionState;
  t: ChromeStrings;
  onPick: (i: number) => void;
}) {
  return (
    <ol class="lp-contents">
      {state.course.screens.map((s, i) => {
        // Locked: a sequential course's screen the learner cannot open yet. Complete: seen, graded blocks answered.
        const locked = !session.canReach(i);
        const mark = locked
          ? { sign: '🔒', label: t.locked, name: 'locked' }
          : session.complete(i)
            ? { sign: '✓', label: t.screenComplete, name: 'complete' }
            : state.visited[s.id]
              ? { sign: '•', label: t.visited, name: 'visited' }
              : null;
        return (
          <li key={s.id} data-state={mark?.name}>
            <button
              type="button"
              class="lp-contents-item"
              aria-current={i === state.index ? 'step' : undefined}
              disabled={locked}
              onClick={() => onPick(i)}
            >
              <span class="lp-contents-n" aria-hidden="true">
                {i + 1}
              </span>
              <span>{s.title || format(t.screenOf, { n: i + 1, total: state.course.screens.length })}</span>
              {mark && (
                <span class="lp-contents-mark">
                  <span aria-hidden="true">{mark.sign}</span>
                  <span class="lp-sr">({mark.label})</span>
                </span>
              )}
            </button>
          </li>
        );
      })}
    </ol>
  );
}

export function App({ session, theme, t }: { session: Session; theme: ResolvedTheme; t: ChromeStrings }) {
  const state = useSession(session);
  const { course, index } = state;
  const total = course.screens.length;
  const screen = course.screens[Math.min(index, total - 1)];
  const titleRef = useRef<HTMLHeadingElement>(null);
  const dialogRef = useRef<HTMLDialogElement>(null);
  const confirmRef = useRef<HTMLDialogElement>(null);
  const swipe = useRef<{ x: number; y: number } | null>(null);
  const rtl = course.direction === 'rtl';
  const navigation = course.navigation === 'hidden' ? 'hidden' : 'default';

  // Focus follows the learner to the new screen's heading (not on first load: the host page keeps its focus), in the
  // same task as the new screen (a layout effect), never a frame later with the page body focused meanwhile.
  useLayoutEffect(() => {
    if (state.moves === 0) return;
    titleRef.current?.focus({ preventScroll: true });
    window.scrollTo({ top: 0 });
  }, [state.moves]);

  // Immediate mode: a chosen answer not checked asks before the learner leaves the screen.
  useEffect(() => {
    const d = confirmRef.current;
    if (!d) return;
    if (state.confirm !== null && !d.open) d.showModal();
    else if (state.confirm === null && d.open) d.close();
  }, [state.confirm]);

  if (!screen) return <main class="lp-main" />;

  const last = index === total - 1;
  const step = format(t.screenOf, { n: index + 1, total });
  const headings = headingLevels(screen.blocks);
  const ctx: BlockCtx = {
    t,
    quizFeedback: course.quizFeedback === 'immediate' ? 'immediate' : 'deferred',
    preview: state.preview,
    answer: (id) => state.answers[id],
    submitted: (id) => state.submitted[id] === true,
    feedback: (id) => state.feedback[id],
    submit: (id, a) => session.submit(id, a),
    record: (id, a) => session.record(id, a),
    reopen: (id) => session.reopen(id),
    draft: (id) => session.draft(id),
    saveDraft: (id, v) => session.saveDraft(id, v),
    setPending: (id, p) => session.setPending(id, p),
    next: () => session.go(index + 1),
    goToScreen: (id) => session.goToScreen(id),
    result: state.result,
    awaitingResult: state.awaitingResult,
    headingLevel: (id) => headings.get(id),
    outcome: (id) => state.outcomes[id],
    pollResults: (id) => state.polls[id],
    certificate: () => <CertificateDownload session={session} result={state.result} lang={course.locale} />,
  };

  const openContents = () => dialogRef.current?.showModal();
  const pick = (i: number) => {
    dialogRef.current?.close();
    if (i === index) titleRef.current?.focus();
    else session.go(i);
  };

  const onPointerDown = (e: PointerEvent) => {
    const target = e.target as Element;
    if (navigation === 'hidden' || e.pointerType !== 'touch') return;
    if (target.closest('[data-noswipe], input, textarea, select, video, audio, iframe')) return;
    swipe.current = { x: e.clientX, y: e.clientY };
  };
  const onPointerUp = (e: PointerEvent) => {
    const start = swipe.current;
    swipe.current = null;
    if (!start) return;
    const dx = e.clientX - start.x;
    const dy = e.clientY - start.y;
    if (Math.abs(dx) < SWIPE_MIN_PX || Math.abs(dy) > Math.abs(dx) * 0.6) return;
    // Swiping towards the reading start moves on: leftwards in LTR, rightwards in RTL.
    const forward = rtl ? dx > 0 : dx < 0;
    session.go(forward ? index + 1 : index - 1);
  };

  const initial = (course.title.trim()[0] ?? '·').toUpperCase();
  const hasResults = screen.blocks.some((b) => b.type === 'results');

  return (
    <div class="lp-frame">
      <header class="lp-chrome">
        {theme.logoUrl ? (
          <img class="lp-logo" src={theme.logoUrl} alt="" />
        ) : (
          <span class="lp-avatar" aria-hidden="true">
            {initial}
          </span>
        )}
        <div class="lp-chrome-titles">
          <p class="lp-course-title">{course.title}</p>
          <p class="lp-chrome-step">{step}</p>
        </div>
        <progress class="lp-progress" max={100} value={session.percent()} aria-label={t.progress} />
        <button type="button" class="lp-btn lp-contents-btn" aria-haspopup="dialog" onClick={openContents}>
          <span aria-hidden="true" class="lp-contents-icon">
            ☰
          </span>{' '}
          {t.contents}
        </button>
      </header>
      {state.preview && (
        <p class="lp-banner" role="note">
          {t.preview}
        </p>
      )}
      {state.noLms && (
        <p class="lp-banner" role="note">
          {t.noLms}
        </p>
      )}
      <div class="lp-status" role="status" aria-live="polite">
        {state.offline && <p class="lp-banner lp-offline">{t.offline}</p>}
      </div>
      <div class="lp-body">
        {theme.arrangement === 'panel' && (
          <nav class="lp-panel" aria-label={t.contents}>
            <ContentsList session={session} state={state} t={t} onPick={pick} />
          </nav>
        )}
        <main
          class="lp-main"
          onPointerDown={onPointerDown}
          onPointerUp={onPointerUp}
          onPointerCancel={() => (swipe.current = null)}
        >
          <h1 class="lp-screen-title" tabIndex={-1} ref={titleRef}>
            {screen.title || <span class="lp-sr">{step}</span>}
          </h1>
          <div class="lp-blocks">
            {screen.blocks.map((b) => (
              <Block key={b.id} b={b} ctx={ctx} />
            ))}
          </div>
          {last && state.finished && (
            <section class="lp-end" aria-live="polite">
              <p class="lp-end-title">{t.finished}</p>
              {!hasResults && state.result && state.result.score !== null && (
                <p>
                  {format(t.score, { n: Math.round(state.result.score) })}
                  {state.result.passed !== null && ` · ${state.result.passed ? t.passed : t.notPassed}`}
                </p>
              )}
              {state.result?.review && <Review items={state.result.review} course={course} t={t} />}
              <div class="lp-end-actions">
                <button type="button" class="lp-btn" onClick={() => void session.retake()}>
                  {t.retake}
                </button>
                {!hasResults && (
                  <CertificateDownload session={session} result={state.result} lang={course.locale} />
                )}
              </div>
            </section>
          )}
          <div class="lp-hold" role="status" aria-live="polite">
            {state.blocked && <p class="lp-banner">{t.answerFirst}</p>}
          </div>
          {navigation === 'default' && (
            <nav class="lp-nav" aria-label={step}>
              <button
                type="button"
                class="lp-btn lp-back"
                onClick={() => session.go(index - 1)}
                disabled={index === 0}
              >
                <span aria-hidden="true">{rtl ? '→' : '←'} </span>
                {t.back}
              </button>
              {!last && (
                <button
                  type="button"
                  class="lp-btn lp-btn-primary lp-continue"
                  onClick={() => session.go(index + 1)}
                >
                  {t.continue}
                  <span aria-hidden="true"> {rtl ? '←' : '→'}</span>
                </button>
              )}
            </nav>
          )}
        </main>
      </div>
      <dialog class="lp-dialog" ref={dialogRef} aria-labelledby="lp-contents-title">
        <h2 id="lp-contents-title" class="lp-dialog-title">
          {t.contents}
        </h2>
        <ContentsList session={session} state={state} t={t} onPick={pick} />
        <button type="button" class="lp-btn" onClick={() => dialogRef.current?.close()}>
          {t.close}
        </button>
      </dialog>
      <dialog
        class="lp-confirm"
        ref={confirmRef}
        aria-labelledby="lp-confirm-title"
        onClose={() => session.dismissConfirm()}
      >
        <p id="lp-confirm-title" class="lp-dialog-title">
          {t.unsubmitted}
        </p>
        <div class="lp-confirm-actions">
          <button type="button" class="lp-btn lp-btn-primary" onClick={() => session.checkPending()}>
            {t.checkNow}
          </button>
          <button type="button" class="lp-btn" onClick={() => session.leavePending()}>
            {t.leaveAnyway}
          </button>
        </div>
      </dialog>
    </div>
  );
}
