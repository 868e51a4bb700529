/**
 * One renderer per block type (docs/blocks.md). Every renderer reads its fields defensively: a missing or
 * mistyped field renders blank, unknown fields are ignored, and `BlockBoundary` keeps a renderer that
 * throws anyway from blanking the rest of the screen.
 */
import { Component, type ComponentChildren, type FunctionComponent } from 'preact';
import { useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks';
import { format, type ChromeStrings } from '../core/i18n.js';
import type { Feedback, PlayerBlock, PollResults, RunResult } from '../core/types.js';
import { embedSandbox } from '../core/embed.js';
import { Markdown, Paragraphs, itemId, mediaSrc, num, recs, str, strings, type Rec } from './util.js';

export interface BlockCtx {
  t: ChromeStrings;
  quizFeedback: 'immediate' | 'deferred';
  preview: boolean;
  answer(blockId: string): unknown;
  submitted(blockId: string): boolean;
  feedback(blockId: string): Feedback | undefined;
  submit(blockId: string, answer: unknown): void;
  record(blockId: string, answer: unknown): void;
  reopen(blockId: string): void;
  /** A chosen or typed answer not handed in yet (docs/player.md "Drafts"); undefined when there is none. */
  draft(blockId: string): unknown;
  saveDraft(blockId: string, value: unknown): void;
  /** What moving on would hand in for this question (null: nothing). */
  setPending(blockId: string, pending: { graded: boolean; submit: () => void } | null): void;
  next(): void;
  goToScreen(screenId: string): void;
  result: RunResult | null;
  /** The finishing move was sent and the score is on its way. */
  awaitingResult: boolean;
  /** The element level (2–4) of a heading block on this screen (`headingLevels`); absent: as authored. */
  headingLevel?: (blockId: string) => number | undefined;
  /** An ungraded scenario's outcome for the chosen choice, from the server. */
  outcome?: (blockId: string) => string | undefined;
  /** A poll's votes once this learner voted, when the author shows them. */
  pollResults?: (blockId: string) => PollResults | undefined;
  /** The certificate download (browser/certificate.tsx), which the results block shows; absent in tests of blocks. */
  certificate?: () => ComponentChildren;
}

type Props = { b: PlayerBlock; ctx: BlockCtx };

export class BlockBoundary extends Component<
  { label: string; children: ComponentChildren },
  { failed: boolean }
> {
  override state = { failed: false };
  static override getDerivedStateFromError(): { failed: boolean } {
    return { failed: true };
  }
  override componentDidCatch(error: unknown): void {
    console.warn('lectern player: a block could not be rendered', error);
  }
  override render() {
    return this.state.failed ? <p class="lp-block-error">{this.props.label}</p> : this.props.children;
  }
}

// ---------------------------------------------------------------------------------------------- content

/** A heading block's element level as authored: the screen title is the page's h1, so levels 1–3 are h2–h4 and a
 * heading without a level is h2 (one below the title), whatever its visual level. */
const authoredHeading = (b: PlayerBlock): number =>
  typeof b.level === 'number' ? Math.min(3, Math.max(1, Math.round(num(b.level, 2)))) + 1 : 2;

/** The element level of each heading block of a screen: as authored, but never more than one below the heading
 * block before it (h1, the screen title, before the first), so the outline never skips a level. */
export function headingLevels(blocks: PlayerBlock[]): Map<string, number> {
  const out = new Map<string, number>();
  let previous = 1;
  for (const b of blocks)
    if (b.type === 'heading' && str(b.text)) {
      previous = Math.min(authoredHeading(b), previous + 1);
      out.set(b.id, previous);
    }
  return out;
}

function Heading({ b, ctx }: Props) {
  const text = str(b.text);
  if (!text) return null;
  const level = Math.min(3, Math.max(1, Math.round(num(b.level, 2))));
  const Tag = `h${ctx.headingLevel?.(b.id) ?? authoredHeading(b)}` as 'h2';
  return <Tag class={`lp-heading lp-heading-${level}`}>{text}</Tag>;
}

const Text = ({ b, ctx }: Props) => <Paragraphs text={str(b.text)} newTab={ctx.t.opensNewTab} />;

/** The column a block image is shown in at most (`.lp-screen`'s 46rem): what `sizes` tells the browser. */
const IMAGE_SIZES = '(min-width: 46rem) 46rem, 100vw';

/**
 * The labelled placeholder of media that resolves nowhere (the server marks it `unavailable`, or it fails to
 * load): "Image unavailable" in the learner's language, the author's alt text beside it for screen readers.
 */
function Unavailable({ label, alt }: { label: string; alt?: string }) {
  return (
    <div
      class="lp-media-missing lp-media-unavailable"
      role="img"
      aria-label={alt ? `${label}: ${alt}` : label}
    >
      <span aria-hidden="true">{label}</span>
    </div>
  );
}

/**
 * An image as the learner view serves it (docs/player-api.md "Media in the learner view"): the variants as
 * `srcset` with the column's `sizes`, `width`/`height` so the page does not move when it arrives, the
 * placeholder as its background until it has loaded; one that fails to load becomes the labelled placeholder.
 */
function MediaImg({
  src,
  holder,
  alt,
  t,
  lazy = true,
}: {
  src: string;
  holder: Rec;
  alt: string;
  t: ChromeStrings;
  lazy?: boolean;
}) {
  const [state, setState] = useState<'loading' | 'loaded' | 'failed'>('loading');
  useEffect(() => setState('loading'), [src]);
  if (state === 'failed') return <Unavailable label={t.imageUnavailable} alt={alt} />;
  const srcset = str(holder.srcset);
  const width = num(holder.width, 0);
  const height = num(holder.height, 0);
  const placeholder = state === 'loading' ? mediaSrc(holder.placeholder) : null;
  return (
    <img
      src={src}
      srcset={srcset || undefined}
      sizes={srcset ? IMAGE_SIZES : undefined}
      width={width || undefined}
      height={height || undefined}
      alt={alt}
      loading={lazy ? 'lazy' : undefined}
      decoding="async"
      class={placeholder ? 'lp-img-pending' : undefined}
      style={placeholder ? { backgroundImage: `url("${placeholder}")` } : undefined}
      onLoad={() => setState('loaded')}
      onError={() => setState('failed')}
    />
  );
}

/**
 * `holder[field]` as an image: the served image, the labelled placeholder when it resolves nowhere (marked
 * `unavailable`, or a reference the browser cannot load such as an unsigned `media://`), nothing when empty.
 */
function ServedImage({
  holder,
  field,
  alt,
  t,
  lazy,
  box = false,
}: {
  holder: Rec;
  field: string;
  alt: string;
  t: ChromeStrings;
  lazy?: boolean;
  /** Keep an empty box when there is no image at all (a hotspot's clickable area). */
  box?: boolean;
}) {
  const src = mediaSrc(holder[field]);
  if (src) return <MediaImg src={src} holder={holder} alt={alt} t={t} lazy={lazy} />;
  if (holder.unavailable === true || str(holder[field]).trim())
    return <Unavailable label={t.imageUnavailable} alt={alt} />;
  return alt || box ? <div class="lp-media-missing" role="img" aria-label={alt || undefined} /> : null;
}

function Figure({ holder, field, t }: { holder: Rec; field: string; t: ChromeStrings }) {
  const caption = str(holder.caption);
  return (
    <figure class="lp-figure">
      <ServedImage holder={holder} field={field} alt={str(holder.alt)} t={t} />
      {caption && <figcaption>{caption}</figcaption>}
    </figure>
  );
}

const ImageBlock = ({ b, ctx }: Props) => <Figure holder={b} field="url" t={ctx.t} />;

/** A video or audio file that resolves nowhere or fails to load: its labelled placeholder, else the element. */
function usePlayable(b: Rec): { src: string | null; missing: boolean; onError: () => void } {
  const src = mediaSrc(b.url);
  const [failed, setFailed] = useState(false);
  useEffect(() => setFailed(false), [src]);
  const missing = failed || (!src && (b.unavailable === true || str(b.url).trim() !== ''));
  return { src: missing ? null : src, missing, onError: () => setFailed(true) };
}

/** A `<details>` whose summary carries a turning marker and says whether it is open (aria-expanded). */
function Disclosure({
  class: cls,
  summary,
  children,
}: {
  class?: string;
  summary: string;
  children: ComponentChildren;
}) {
  const [open, setOpen] = useState(false);
  return (
    <details class={cls} onToggle={(e) => setOpen(e.currentTarget.open)}>
      <summary aria-expanded={open}>
        <span class="lp-disclosure" aria-hidden="true" />
        {summary}
      </summary>
      {children}
    </details>
  );
}

function Transcript({ text, label }: { text: string; label: string }) {
  if (!text) return null;
  return (
    <Disclosure class="lp-transcript" summary={label}>
      <p>{text}</p>
    </Disclosure>
  );
}

function Video({ b, ctx }: Props) {
  const { src, missing, onError } = usePlayable(b);
  const caption = str(b.caption);
  const tracks = recs(b.tracks).filter((t) => mediaSrc(t.src) && str(t.srclang));
  return (
    <figure class="lp-figure">
      {missing && <Unavailable label={ctx.t.videoUnavailable} alt={caption} />}
      {src && (
        <video
          controls
          preload="metadata"
          src={src}
          poster={mediaSrc(b.poster) ?? undefined}
          width={num(b.width, 0) || undefined}
          height={num(b.height, 0) || undefined}
          aria-label={caption || undefined}
          // A caption file from another origin loads only with CORS, asked for by the media element.
          crossOrigin={tracks.length ? 'anonymous' : undefined}
          onError={onError}
        >
          {tracks.map((t, i) => (
            <track
              key={i}
              src={mediaSrc(t.src) ?? undefined}
              srclang={str(t.srclang)}
              label={str(t.label) || str(t.srclang)}
              kind={t.kind === 'subtitles' ? 'subtitles' : 'captions'}
              default={t.default === true}
            />
          ))}
        </video>
      )}
      {caption && <figcaption>{caption}</figcaption>}
      <Transcript text={str(b.transcript)} label={ctx.t.transcript} />
    </figure>
  );
}

function Audio({ b, ctx }: Props) {
  const { src, missing, onError } = usePlayable(b);
  const caption = str(b.caption);
  return (
    <figure class="lp-figure">
      {missing && <Unavailable label={ctx.t.audioUnavailable} alt={caption} />}
      {src && (
        <audio controls preload="metadata" src={src} aria-label={caption || undefined} onError={onError} />
      )}
      {caption && <figcaption>{caption}</figcaption>}
      <Transcript text={str(b.transcript)} label={ctx.t.transcript} />
    </figure>
  );
}

function Embed({ b }: Props) {
  const url = str(b.url);
  if (!/^https?:\/\//i.test(url)) return null;
  const height = Math.min(2000, Math.max(50, Math.round(num(b.height, 400))));
  return (
    <iframe
      class="lp-embed"
      src={url}
      title={str(b.title) || url}
      height={height}
      loading="lazy"
      sandbox={embedSandbox(url, location.origin)}
      referrerpolicy="strict-origin-when-cross-origin"
      allow="fullscreen"
    />
  );
}

function ButtonBlock({ b, ctx }: Props) {
  const label = str(b.label);
  if (!label) return null;
  const action = str(b.action) || 'next';
  if (action === 'url') {
    const url = str(b.url);
    if (!/^https?:\/\//i.test(url)) return null;
    return (
      <p>
        <a class="lp-btn lp-btn-primary" href={url} target="_blank" rel="noopener noreferrer">
          {label}
          <span class="lp-sr"> {ctx.t.opensNewTab}</span>
        </a>
      </p>
    );
  }
  const onClick = () => (action === 'screen' ? ctx.goToScreen(str(b.screenId)) : ctx.next());
  return (
    <p>
      <button type="button" class="lp-btn lp-btn-primary" onClick={onClick}>
        {label}
      </button>
    </p>
  );
}

const Divider = () => <hr class="lp-divider" />;

function Spacer({ b }: Props) {
  const size = ['small', 'medium', 'large'].includes(str(b.size)) ? str(b.size) : 'medium';
  return <div class={`lp-spacer lp-spacer-${size}`} aria-hidden="true" />;
}

function Flashcard({ b, ctx }: Props) {
  const [flipped, setFlipped] = useState(false);
  const front = str(b.front);
  const back = str(b.back);
  return (
    <div class="lp-flashcard" data-flipped={flipped ? 'true' : 'false'}>
      <button
        type="button"
        class="lp-flashcard-card"
        aria-pressed={flipped}
        onClick={() => setFlipped(!flipped)}
      >
        <span class="lp-sr">{ctx.t.flip}: </span>
        <span class="lp-flashcard-face" aria-live="polite">
          {flipped ? back : front}
        </span>
        <span class="lp-flashcard-flip" aria-hidden="true">
          <span class="lp-flashcard-icon">↻</span> {ctx.t.flip}
        </span>
      </button>
    </div>
  );
}

/**
 * Stack and slideshow: one item at a time with "Previous/Next card" (or slide) and a live "n of N". The buttons
 * name what they move, so neither reads as a bare "Next" beside the screen's Continue. When a press reaches an end
 * its button becomes disabled: focus moves to the other button instead of dropping to the page.
 */
function Pager({
  count,
  labels,
  t,
  render,
}: {
  count: number;
  labels: { previous: string; next: string };
  t: ChromeStrings;
  render: (i: number) => ComponentChildren;
}) {
  const [i, setI] = useState(0);
  const prevRef = useRef<HTMLButtonElement>(null);
  const nextRef = useRef<HTMLButtonElement>(null);
  if (count === 0) return null;
  const at = Math.min(i, count - 1);
  const go = (to: number) => {
    setI(to);
    if (to === 0) nextRef.current?.focus();
    else if (to === count - 1) prevRef.current?.focus();
  };
  return (
    <div class="lp-pager" data-noswipe>
      <div class="lp-pager-item">{render(at)}</div>
      {count > 1 && (
        <div class="lp-pager-nav">
          <button ref={prevRef} type="button" class="lp-btn" onClick={() => go(at - 1)} disabled={at === 0}>
            {labels.previous}
          </button>
          <span aria-live="polite" class="lp-muted">
            {format(t.itemOf, { n: at + 1, total: count })}
          </span>
          <button
            ref={nextRef}
            type="button"
            class="lp-btn"
            onClick={() => go(at + 1)}
            disabled={at === count - 1}
          >
            {labels.next}
          </button>
        </div>
      )}
    </div>
  );
}

function Stack({ b, ctx }: Props) {
  const cards = recs(b.cards).slice(0, 10);
  return (
    <Pager
      count={cards.length}
      labels={{ previous: ctx.t.previousCard, next: ctx.t.nextCard }}
      t={ctx.t}
      render={(i) => (
        <div class="lp-card">
          {str(cards[i].title) && <h2 class="lp-card-title">{str(cards[i].title)}</h2>}
          {str(cards[i].text) && <p>{str(cards[i].text)}</p>}
        </div>
      )}
    />
  );
}

function Slideshow({ b, ctx }: Props) {
  const slides = recs(b.slides);
  return (
    <Pager
      count={slides.length}
      labels={{ previous: ctx.t.previousSlide, next: ctx.t.nextSlide }}
      t={ctx.t}
      render={(i) => <Figure holder={slides[i]} field="image" t={ctx.t} />}
    />
  );
}

function Steps({ b }: Props) {
  const items = recs(b.items);
  if (items.length === 0) return null;
  return (
    <ol class="lp-steps">
      {items.map((it, i) => (
        <li key={itemId(it, i)}>
          {str(it.title) && <strong class="lp-item-title">{str(it.title)}</strong>}
          {str(it.text) && <p>{str(it.text)}</p>}
        </li>
      ))}
    </ol>
  );
}

function Timeline({ b }: Props) {
  const items = recs(b.items);
  if (items.length === 0) return null;
  return (
    <ol class="lp-timeline">
      {items.map((it, i) => (
        <li key={itemId(it, i)}>
          {str(it.date) && <span class="lp-timeline-date">{str(it.date)}</span>}
          {str(it.title) && <strong class="lp-item-title">{str(it.title)}</strong>}
          {str(it.text) && <p>{str(it.text)}</p>}
        </li>
      ))}
    </ol>
  );
}

function Accordion({ b }: Props) {
  const items = recs(b.items);
  return (
    <div class="lp-accordion">
      {items.map((it, i) => (
        <Disclosure key={itemId(it, i)} summary={str(it.title)}>
          <p>{str(it.text)}</p>
        </Disclosure>
      ))}
    </div>
  );
}

const TONE_ICONS: Record<string, string> = { info: 'i', tip: '★', warning: '!', success: '✓' };

function Callout({ b }: Props) {
  const tone = str(b.tone) in TONE_ICONS ? str(b.tone) : 'info';
  const title = str(b.title);
  const text = str(b.text);
  if (!title && !text) return null;
  return (
    <aside class={`lp-callout lp-callout-${tone}`} role="note">
      <span class="lp-callout-icon" aria-hidden="true">
        {TONE_ICONS[tone]}
      </span>
      <div>
        {title && <strong class="lp-item-title">{title}</strong>}
        {text && <p>{text}</p>}
      </div>
    </aside>
  );
}

function Code({ b }: Props) {
  const code = str(b.code);
  const lang = str(b.language).replace(/[^\w+-]/g, '');
  if (!code) return null;
  return (
    <figure class="lp-figure lp-code">
      {/* Focusable so keyboard users can scroll a long line (WCAG 2.1.1). */}
      <pre tabIndex={0} dir="ltr">
        <code class={lang ? `language-${lang}` : undefined}>{code}</code>
      </pre>
      {str(b.caption) && <figcaption>{str(b.caption)}</figcaption>}
    </figure>
  );
}

function Checklist({ b, ctx }: Props) {
  const items = recs(b.items);
  const stored = ctx.answer(b.id);
  const ticked = new Set(
    Array.isArray(stored) ? stored.filter((x): x is string => typeof x === 'string') : [],
  );
  const toggle = (id: string) => {
    const next = new Set(ticked);
    if (next.has(id)) next.delete(id);
    else next.add(id);
    ctx.record(b.id, [...next]);
  };
  return (
    <ul class="lp-checklist">
      {items.map((it, i) => {
        const id = itemId(it, i);
        return (
          <li key={id}>
            <label class="lp-choice">
              <input type="checkbox" checked={ticked.has(id)} onChange={() => toggle(id)} />
              <span>{str(it.text)}</span>
            </label>
          </li>
        );
      })}
    </ul>
  );
}

function Compare({ b }: Props) {
  const side = (v: unknown) => {
    const s = (typeof v === 'object' && v !== null ? v : {}) as Rec;
    return (
      <section class="lp-compare-side">
        {str(s.title) && <h2 class="lp-card-title">{str(s.title)}</h2>}
        <ul>
          {strings(s.points).map((p) => (
            <li>{p}</li>
          ))}
        </ul>
      </section>
    );
  };
  return (
    <div class="lp-compare">
      {side(b.left)}
      {side(b.right)}
    </div>
  );
}

function Quote({ b }: Props) {
  const text = str(b.text);
  if (!text) return null;
  const author = str(b.author);
  const source = str(b.source);
  return (
    <figure class="lp-quote">
      <blockquote>
        <p>{text}</p>
      </blockquote>
      {(author || source) && (
        <figcaption>
          {author}
          {author && source ? ', ' : ''}
          {source && <cite>{source}</cite>}
        </figcaption>
      )}
    </figure>
  );
}

function SpecTable({ b }: Props) {
  const rows = recs(b.rows);
  if (rows.length === 0) return null;
  return (
    <table class="lp-spec">
      <tbody>
        {rows.map((r, i) => (
          <tr key={itemId(r, i)}>
            <th scope="row">{str(r.label)}</th>
            <td>{str(r.value)}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

const KIND_ICONS: Record<string, string> = {
  link: '↗',
  document: '▤',
  download: '↓',
  video: '▶',
  audio: '♪',
};

function Resource({ b, ctx }: Props) {
  const url = str(b.url);
  const title = str(b.title);
  if (!title) return null;
  const kind = str(b.kind) in KIND_ICONS ? str(b.kind) : 'link';
  const body = (
    <>
      <span class="lp-resource-icon" aria-hidden="true">
        {KIND_ICONS[kind]}
      </span>
      <span>
        <strong class="lp-item-title">{title}</strong>
        {str(b.description) && <span class="lp-muted lp-block-line">{str(b.description)}</span>}
      </span>
    </>
  );
  return /^https?:\/\//i.test(url) ? (
    <a
      class="lp-resource"
      href={url}
      target="_blank"
      rel="noopener noreferrer"
      download={kind === 'download' ? '' : undefined}
    >
      {body}
      <span class="lp-sr"> {ctx.t.opensNewTab}</span>
    </a>
  ) : (
    <div class="lp-resource">{body}</div>
  );
}

function Glossary({ b }: Props) {
  const terms = recs(b.terms);
  if (terms.length === 0) return null;
  return (
    <dl class="lp-glossary">
      {terms.map((t, i) => (
        <div key={itemId(t, i)}>
          <dt>{str(t.term)}</dt>
          <dd>{str(t.definition)}</dd>
        </div>
      ))}
    </dl>
  );
}

function clock(seconds: number): string {
  const s = Math.max(0, Math.floor(seconds));
  const h = Math.floor(s / 3600);
  const mm = String(Math.floor((s % 3600) / 60)).padStart(h > 0 ? 2 : 1, '0');
  const ss = String(s % 60).padStart(2, '0');
  return h > 0 ? `${h}:${mm}:${ss}` : `${mm}:${ss}`;
}

function VideoChapters({ b, ctx }: Props) {
  const ref = useRef<HTMLVideoElement>(null);
  const { src, missing, onError } = usePlayable(b);
  const chapters = recs(b.chapters);
  const seek = (time: number) => {
    const v = ref.current;
    if (!v) return;
    v.currentTime = time;
    void v.play().catch(() => undefined);
  };
  return (
    <figure class="lp-figure lp-chapters">
      {missing && <Unavailable label={ctx.t.videoUnavailable} />}
      {src && <video ref={ref} controls preload="metadata" src={src} onError={onError} />}
      {chapters.length > 0 && (
        <nav aria-label={ctx.t.chapters}>
          <ol>
            {chapters.map((c, i) => (
              <li key={itemId(c, i)}>
                <button type="button" class="lp-link-btn" onClick={() => seek(num(c.time, 0))}>
                  <span class="lp-chapter-time">{clock(num(c.time, 0))}</span> {str(c.title)}
                </button>
              </li>
            ))}
          </ol>
        </nav>
      )}
    </figure>
  );
}

function Milestone({ b }: Props) {
  const title = str(b.title);
  const text = str(b.text);
  if (!title && !text) return null;
  return (
    <div class="lp-milestone">
      <span class="lp-milestone-icon" aria-hidden="true">
        ✦
      </span>
      {title && <p class="lp-milestone-title">{title}</p>}
      {text && <p>{text}</p>}
    </div>
  );
}

const MarkdownBlock = ({ b, ctx }: Props) => <Markdown source={str(b.markdown)} newTab={ctx.t.opensNewTab} />;

function Results({ b, ctx }: Props) {
  const { t, result } = ctx;
  const title = str(b.title);
  const showScore = b.showScore === true;
  const showPassed = b.showPassed === true;
  let status: ComponentChildren = null;
  if (ctx.preview) status = <p class="lp-muted">{t.preview}</p>;
  else if (result === null) status = ctx.awaitingResult ? <p class="lp-muted">{t.calculating}</p> : null;
  else if (result.score === null) status = showScore || showPassed ? <p>{t.notScored}</p> : null;
  else
    status = (
      <>
        {showScore && <p class="lp-results-score">{format(t.score, { n: Math.round(result.score) })}</p>}
        {showPassed && result.passed !== null && (
          <p class={result.passed ? 'lp-good' : 'lp-bad'}>{result.passed ? t.passed : t.notPassed}</p>
        )}
      </>
    );
  return (
    <section class="lp-results" aria-live="polite">
      {title && <h2 class="lp-card-title">{title}</h2>}
      {str(b.text) && <p>{str(b.text)}</p>}
      {status}
      {ctx.certificate?.()}
    </section>
  );
}

// ---------------------------------------------------------------------------------------------- answers

/** The live region under a question: feedback (immediate), "saved" (deferred), and "Try again". */
function Verdict({
  b,
  ctx,
  graded = true,
  box,
}: Props & { graded?: boolean; box?: { current: HTMLDivElement | null } }) {
  const { t } = ctx;
  const done = ctx.submitted(b.id);
  const fb = ctx.feedback(b.id);
  let content: ComponentChildren = null;
  if (done && graded && fb) {
    const note = fb.explanation || fb.outcome;
    content = (
      <>
        <p class={fb.correct ? 'lp-good' : 'lp-bad'}>
          <span aria-hidden="true">{fb.correct ? '✓ ' : '✗ '}</span>
          {fb.correct ? t.correct : t.incorrect}
        </p>
        {note && <p>{note}</p>}
        {!fb.correct && (
          <button type="button" class="lp-btn lp-try-again" onClick={() => ctx.reopen(b.id)}>
            {t.tryAgain}
          </button>
        )}
      </>
    );
  } else if (done) {
    const outcome = ctx.outcome?.(b.id);
    const tally = graded ? undefined : ctx.pollResults?.(b.id);
    content = (
      <>
        {/* An outcome comes only for an ungraded scenario: it is the whole reply (no result waits at the end). */}
        {outcome ? (
          <p class="lp-outcome">{outcome}</p>
        ) : (
          <p>
            {graded && ctx.quizFeedback === 'deferred' ? t.resultsAtEnd : graded ? t.answerSaved : t.thanks}
          </p>
        )}
        {tally && <PollTally b={b} tally={tally} t={t} />}
      </>
    );
  }
  return (
    // Focusable from script only: a handed-in answer moves the focus here (Question), never to the page.
    <div class="lp-verdict lp-reply" role="status" aria-live="polite" tabIndex={-1} ref={box}>
      {content}
    </div>
  );
}

/** A poll's results after the vote: each option's share of the votes, as text and as a bar. */
function PollTally({ b, tally, t }: { b: PlayerBlock; tally: PollResults; t: ChromeStrings }) {
  const texts = new Map(optionsOf(b.options).map((o) => [o.id, o.text]));
  const share = (votes: number) => (tally.total > 0 ? Math.round((votes / tally.total) * 100) : 0);
  return (
    <div class="lp-poll-results">
      <p class="lp-muted">{format(t.pollResults, { total: tally.total })}</p>
      <ul>
        {tally.options.map((o) => (
          <li key={o.id}>
            <span class="lp-poll-option">
              <span>{texts.get(o.id) ?? o.id}</span>
              <strong>{share(o.votes)}%</strong>
            </span>
            <span class="lp-poll-bar" aria-hidden="true">
              <span style={{ inlineSize: `${share(o.votes)}%` }} />
            </span>
          </li>
        ))}
      </ul>
    </div>
  );
}

/** Once immediate feedback is in, the question is closed until "Try again". */
const locked = (b: PlayerBlock, ctx: BlockCtx) => ctx.submitted(b.id) && ctx.feedback(b.id) !== undefined;

function Question({
  b,
  ctx,
  legend,
  hint,
  children,
  canSubmit,
  onSubmit,
  graded = true,
  label,
}: Props & {
  legend: string;
  hint?: string;
  children: ComponentChildren;
  canSubmit: boolean;
  onSubmit: () => void;
  graded?: boolean;
  label?: string;
}) {
  const closed = graded && locked(b, ctx);
  const waiting = canSubmit && !closed && !ctx.submitted(b.id);
  const formRef = useRef<HTMLFormElement>(null);
  const verdictRef = useRef<HTMLDivElement>(null);
  const handedIn = useRef(false);
  const wasClosed = useRef(closed);
  // The focus follows the answer: to the verdict once handed in (the Check button may go away), and back to the
  // first control when "Try again" reopens the question, so it never drops to the page body. Layout effects, here
  // and for the other moves of the focus below, so the focus moves in the same task as the update that calls for
  // it, never a frame later with the page body focused meanwhile.
  useLayoutEffect(() => {
    if (handedIn.current && ctx.submitted(b.id)) {
      handedIn.current = false;
      verdictRef.current?.focus();
    } else if (wasClosed.current && !closed && formRef.current?.contains(document.activeElement) !== true) {
      formRef.current
        ?.querySelector<HTMLElement>('fieldset input, fieldset select, fieldset button')
        ?.focus();
    }
    wasClosed.current = closed;
  });
  // Registered on every render, so moving on hands in the answer as it stands now.
  useEffect(() => {
    ctx.setPending(b.id, waiting ? { graded, submit: onSubmit } : null);
    return () => ctx.setPending(b.id, null);
  });
  return (
    <form
      class="lp-question"
      ref={formRef}
      onSubmit={(e) => {
        e.preventDefault();
        if (!canSubmit || closed) return;
        handedIn.current = true;
        onSubmit();
      }}
    >
      <fieldset disabled={closed}>
        {legend && <legend class="lp-legend">{legend}</legend>}
        {hint && <p class="lp-muted lp-hint">{hint}</p>}
        {children}
      </fieldset>
      {!closed && (
        <button type="submit" class="lp-btn lp-btn-primary" disabled={!canSubmit}>
          {label ?? (ctx.quizFeedback === 'immediate' && !ctx.preview ? ctx.t.check : ctx.t.submit)}
        </button>
      )}
      <Verdict b={b} ctx={ctx} graded={graded} box={verdictRef} />
    </form>
  );
}

function useDraft<T>(ctx: BlockCtx, id: string, read: (v: unknown) => T): [T, (v: T) => void] {
  // A kept draft wins over the stored answer; `read` gives either the block's shape, whatever was kept.
  const [draft, setDraft] = useState<T>(() => {
    const kept = ctx.draft(id);
    return read(kept !== undefined ? kept : ctx.answer(id));
  });
  const stored = ctx.answer(id);
  const mounted = useRef(false);
  // A retake clears the stored answer: the draft follows (not on mount, where a kept draft may stand alone).
  useEffect(() => {
    if (mounted.current && stored === undefined) setDraft(read(undefined));
    mounted.current = true;
  }, [stored === undefined]);
  const change = (v: T) => {
    setDraft(v);
    ctx.saveDraft(id, v);
  };
  return [draft, change];
}

const asString = (v: unknown): string => (typeof v === 'string' ? v : '');

function Choices({
  b,
  name,
  options,
  multiple,
  value,
  onChange,
}: {
  b: PlayerBlock;
  name: string;
  options: { id: string; text: string }[];
  multiple: boolean;
  value: string[];
  onChange: (v: string[]) => void;
}) {
  return (
    <div class="lp-choices">
      {options.map((o) => (
        <label class="lp-choice" key={o.id}>
          <input
            type={multiple ? 'checkbox' : 'radio'}
            name={`${b.id}:${name}`}
            value={o.id}
            checked={value.includes(o.id)}
            onChange={() =>
              onChange(
                multiple
                  ? value.includes(o.id)
                    ? value.filter((x) => x !== o.id)
                    : [...value, o.id]
                  : [o.id],
              )
            }
          />
          <span>{o.text}</span>
        </label>
      ))}
    </div>
  );
}

const optionsOf = (v: unknown, key = 'text') =>
  recs(v).map((o, i) => ({ id: itemId(o, i), text: str(o[key]) }));

function SingleChoice({ b, ctx }: Props) {
  const [value, setValue] = useDraft(ctx, b.id, asString);
  return (
    <Question
      b={b}
      ctx={ctx}
      legend={str(b.question)}
      canSubmit={value !== ''}
      onSubmit={() => ctx.submit(b.id, value)}
    >
      <Choices
        b={b}
        name="o"
        options={optionsOf(b.options)}
        multiple={false}
        value={[value]}
        onChange={(v) => setValue(v[0])}
      />
    </Question>
  );
}

function MultipleChoice({ b, ctx }: Props) {
  const [value, setValue] = useDraft(ctx, b.id, (v) =>
    Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [],
  );
  return (
    <Question
      b={b}
      ctx={ctx}
      legend={str(b.question)}
      hint={ctx.t.selectAll}
      canSubmit={value.length > 0}
      onSubmit={() => ctx.submit(b.id, value)}
    >
      <Choices b={b} name="o" options={optionsOf(b.options)} multiple value={value} onChange={setValue} />
    </Question>
  );
}

function TrueFalse({ b, ctx }: Props) {
  const [value, setValue] = useDraft<string>(ctx, b.id, (v) =>
    v === true ? 'true' : v === false ? 'false' : '',
  );
  const options = [
    { id: 'true', text: ctx.t.true },
    { id: 'false', text: ctx.t.false },
  ];
  return (
    <Question
      b={b}
      ctx={ctx}
      legend={str(b.statement)}
      canSubmit={value !== ''}
      onSubmit={() => ctx.submit(b.id, value === 'true')}
    >
      <Choices
        b={b}
        name="tf"
        options={options}
        multiple={false}
        value={[value]}
        onChange={(v) => setValue(v[0])}
      />
    </Question>
  );
}

function Scenario({ b, ctx }: Props) {
  const [value, setValue] = useDraft(ctx, b.id, asString);
  return (
    <Question
      b={b}
      ctx={ctx}
      legend={str(b.situation)}
      canSubmit={value !== ''}
      onSubmit={() => ctx.submit(b.id, value)}
    >
      <Choices
        b={b}
        name="c"
        options={optionsOf(b.choices)}
        multiple={false}
        value={[value]}
        onChange={(v) => setValue(v[0])}
      />
    </Question>
  );
}

function Poll({ b, ctx }: Props) {
  const [value, setValue] = useDraft(ctx, b.id, asString);
  return (
    <Question
      b={b}
      ctx={ctx}
      legend={str(b.question)}
      canSubmit={value !== ''}
      onSubmit={() => ctx.submit(b.id, value)}
      graded={false}
      label={ctx.t.vote}
    >
      <Choices
        b={b}
        name="p"
        options={optionsOf(b.options)}
        multiple={false}
        value={[value]}
        onChange={(v) => setValue(v[0])}
      />
    </Question>
  );
}

function Reflection({ b, ctx }: Props) {
  const [value, setValue] = useDraft(ctx, b.id, asString);
  const id = `lp-${b.id}-text`;
  const saved = ctx.submitted(b.id) && ctx.answer(b.id) === value;
  const waiting = value.trim() !== '' && !saved;
  useEffect(() => {
    ctx.setPending(b.id, waiting ? { graded: false, submit: () => ctx.submit(b.id, value) } : null);
    return () => ctx.setPending(b.id, null);
  });
  return (
    <form
      class="lp-question"
      onSubmit={(e) => {
        e.preventDefault();
        if (value.trim()) ctx.submit(b.id, value);
      }}
    >
      <label class="lp-legend" for={id}>
        {str(b.prompt)}
      </label>
      <textarea
        id={id}
        rows={4}
        placeholder={str(b.placeholder) || undefined}
        value={value}
        onInput={(e) => setValue(e.currentTarget.value)}
      />
      <button type="submit" class="lp-btn lp-btn-primary" disabled={!value.trim() || saved}>
        {ctx.t.save}
      </button>
      <div class="lp-verdict lp-reply" role="status" aria-live="polite">
        {saved && <p>{ctx.t.saved}</p>}
      </div>
    </form>
  );
}

function FillInBlank({ b, ctx }: Props) {
  const text = str(b.text);
  const blanks = recs(b.blanks).map((x, i) => itemId(x, i));
  const [value, setValue] = useDraft<Record<string, string>>(ctx, b.id, (v) => {
    if (typeof v === 'string' && blanks.length === 1) return { [blanks[0]]: v };
    if (Array.isArray(v)) return Object.fromEntries(blanks.map((id, i) => [id, asString(v[i])]));
    if (typeof v === 'object' && v !== null)
      return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, asString(x)]));
    return {};
  });
  // Split on the {{id}} markers; each marker naming a blank becomes a text box in the flow of the sentence.
  const parts = text.split(/(\{\{[^{}]+\}\})/);
  let n = 0;
  const known = new Set(blanks);
  const filled = blanks.length > 0 && blanks.every((id) => (value[id] ?? '').trim() !== '');
  // Each box is named by its sentence, the gaps read as "___", so it is clear which gap it fills.
  const sentence = parts
    .map((part) => (/^\{\{[^{}]+\}\}$/.test(part) ? '___' : part))
    .join('')
    .trim();
  return (
    <Question b={b} ctx={ctx} legend={''} canSubmit={filled} onSubmit={() => ctx.submit(b.id, value)}>
      <p class="lp-fill">
        {parts.map((part) => {
          const m = /^\{\{([^{}]+)\}\}$/.exec(part);
          if (!m || !known.has(m[1].trim())) return part;
          const id = m[1].trim();
          n++;
          return (
            <input
              type="text"
              class="lp-blank"
              aria-label={format(ctx.t.blankOf, { n, name: sentence })}
              autocomplete="off"
              spellcheck={false}
              value={value[id] ?? ''}
              onInput={(e) => setValue({ ...value, [id]: e.currentTarget.value })}
            />
          );
        })}
      </p>
    </Question>
  );
}

function Match({ b, ctx }: Props) {
  const left = optionsOf(b.left);
  const right = optionsOf(b.right);
  const [value, setValue] = useDraft<Record<string, string>>(ctx, b.id, (v) =>
    typeof v === 'object' && v !== null && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v).map(([k, x]) => [k, asString(x)]))
      : {},
  );
  const complete = left.length > 0 && left.every((l) => value[l.id]);
  return (
    <Question
      b={b}
      ctx={ctx}
      legend={str(b.prompt)}
      canSubmit={complete}
      onSubmit={() => ctx.submit(b.id, value)}
    >
      <div class="lp-match">
        {left.map((l) => {
          const id = `lp-${b.id}-${l.id}`;
          return (
            <div class="lp-match-row" key={l.id}>
              <label for={id}>{l.text}</label>
              <select
                id={id}
                value={value[l.id] ?? ''}
                onChange={(e) => setValue({ ...value, [l.id]: e.currentTarget.value })}
              >
                <option value="">{ctx.t.chooseMatch}</option>
                {right.map((r) => (
                  <option value={r.id} key={r.id}>
                    {r.text}
                  </option>
                ))}
              </select>
            </div>
          );
        })}
      </div>
    </Question>
  );
}

function Ranking({ b, ctx }: Props) {
  const items = optionsOf(b.items);
  const [order, setOrder] = useDraft<string[]>(ctx, b.id, (v) => {
    const ids = items.map((i) => i.id);
    const stored = Array.isArray(v)
      ? v.filter((x): x is string => typeof x === 'string' && ids.includes(x))
      : [];
    return [...stored, ...ids.filter((id) => !stored.includes(id))];
  });
  const [said, setSaid] = useState('');
  const listRef = useRef<HTMLOListElement>(null);
  const moved = useRef<{ id: string; button: number } | null>(null);
  // The moved item keeps the focus on its button; at the top or bottom that button is disabled, so the focus goes
  // to the item's other move button instead of dropping to the page (a layout effect: see Question).
  useLayoutEffect(() => {
    const m = moved.current;
    moved.current = null;
    if (!m) return;
    const li = [...(listRef.current?.children ?? [])].find((el) => el.getAttribute('data-item') === m.id);
    li?.querySelectorAll<HTMLButtonElement>('button')[m.button]?.focus();
  });
  const text = (id: string) => items.find((i) => i.id === id)?.text ?? '';
  const move = (from: number, to: number) => {
    const next = [...order];
    const [it] = next.splice(from, 1);
    next.splice(to, 0, it);
    moved.current = { id: it, button: to === 0 ? 1 : to === next.length - 1 ? 0 : to < from ? 0 : 1 };
    setOrder(next);
    setSaid(`${text(it)}: ${format(ctx.t.itemOf, { n: to + 1, total: next.length })}`);
  };
  return (
    <Question
      b={b}
      ctx={ctx}
      legend={str(b.question)}
      canSubmit={order.length > 1}
      onSubmit={() => ctx.submit(b.id, order)}
    >
      <ol class="lp-ranking" ref={listRef}>
        {order.map((id, i) => (
          <li key={id} data-item={id}>
            <span class="lp-ranking-text">{text(id)}</span>
            <span class="lp-ranking-moves">
              <button
                type="button"
                class="lp-icon-btn"
                aria-label={`${ctx.t.moveUp}: ${text(id)}`}
                disabled={i === 0}
                onClick={() => move(i, i - 1)}
              >
                ↑
              </button>
              <button
                type="button"
                class="lp-icon-btn"
                aria-label={`${ctx.t.moveDown}: ${text(id)}`}
                disabled={i === order.length - 1}
                onClick={() => move(i, i + 1)}
              >
                ↓
              </button>
            </span>
          </li>
        ))}
      </ol>
      <p class="lp-sr" aria-live="polite">
        {said}
      </p>
    </Question>
  );
}

function Hotspot({ b, ctx }: Props) {
  const alt = str(b.alt);
  const spots = b.showSpots === true ? recs(b.spots) : [];
  const [value, setValue] = useDraft<unknown>(ctx, b.id, (v) => v ?? null);
  const point = typeof value === 'object' && value !== null ? (value as { x: number; y: number }) : null;
  const [cursor, setCursor] = useState({ x: 0.5, y: 0.5 });
  const pick = (e: MouseEvent) => {
    const box = (e.currentTarget as HTMLElement).getBoundingClientRect();
    if (box.width === 0 || box.height === 0) return;
    const x = Math.min(1, Math.max(0, (e.clientX - box.left) / box.width));
    const y = Math.min(1, Math.max(0, (e.clientY - box.top) / box.height));
    setCursor({ x, y });
    setValue({ x, y });
  };
  const keys = (e: KeyboardEvent) => {
    const step = e.shiftKey ? 0.1 : 0.02;
    const rtl = getComputedStyle(e.currentTarget as Element).direction === 'rtl';
    const d: Record<string, [number, number]> = {
      ArrowLeft: [rtl ? step : -step, 0],
      ArrowRight: [rtl ? -step : step, 0],
      ArrowUp: [0, -step],
      ArrowDown: [0, step],
    };
    if (e.key in d) {
      e.preventDefault();
      const [dx, dy] = d[e.key];
      setCursor({ x: Math.min(1, Math.max(0, cursor.x + dx)), y: Math.min(1, Math.max(0, cursor.y + dy)) });
    } else if (e.key === 'Enter' || e.key === ' ') {
      e.preventDefault();
      setValue({ ...cursor });
    }
  };
  // Between visible spots the arrows follow the reading direction, as the point's arrows above and a radio group
  // do: ArrowRight and ArrowDown go to the next spot in LTR; in RTL ArrowRight goes back to the previous one and
  // ArrowLeft on to the next (wrapping round).
  const spotKeys = (e: KeyboardEvent) => {
    const here = e.currentTarget as HTMLElement;
    const rtl = getComputedStyle(here).direction === 'rtl';
    const by = { ArrowDown: 1, ArrowUp: -1, ArrowRight: rtl ? -1 : 1, ArrowLeft: rtl ? 1 : -1 }[e.key];
    const all = Array.from(here.parentElement?.querySelectorAll<HTMLElement>('.lp-spot') ?? []);
    if (!by || all.length < 2) return;
    e.preventDefault();
    all[(all.indexOf(here) + by + all.length) % all.length].focus();
  };
  const pct = (v: number) => `${Math.round(v * 100)}%`;
  return (
    <Question
      b={b}
      ctx={ctx}
      legend={str(b.question)}
      canSubmit={value !== null}
      onSubmit={() => ctx.submit(b.id, value)}
    >
      <div class="lp-hotspot" data-noswipe>
        <ServedImage holder={b} field="image" alt={alt} t={ctx.t} lazy={false} box />
        {b.showSpots === true ? (
          spots.map((s, i) => {
            const id = itemId(s, i);
            return (
              <button
                type="button"
                key={id}
                class="lp-spot"
                style={{ left: pct(num(s.x, 0)), top: pct(num(s.y, 0)) }}
                aria-pressed={value === id}
                aria-label={str(s.label) || format(ctx.t.itemOf, { n: i + 1, total: spots.length })}
                onClick={() => setValue(id)}
                onKeyDown={spotKeys}
              />
            );
          })
        ) : (
          <div
            class="lp-hotspot-area"
            role="button"
            tabIndex={0}
            aria-label={`${ctx.t.pickPoint} ${pct(cursor.x)}, ${pct(cursor.y)}`}
            onClick={pick}
            onKeyDown={keys}
          >
            <span
              class="lp-hotspot-cursor"
              style={{ left: pct(cursor.x), top: pct(cursor.y) }}
              aria-hidden="true"
            />
            {point && (
              <span
                class="lp-hotspot-mark"
                style={{ left: pct(num(point.x, 0)), top: pct(num(point.y, 0)) }}
                title={ctx.t.yourPoint}
              />
            )}
          </div>
        )}
      </div>
    </Question>
  );
}

function TimedQuestion({ b, ctx }: Props) {
  const seconds = Math.min(600, Math.max(5, Math.round(num(b.seconds, 30))));
  const [value, setValue] = useDraft(ctx, b.id, asString);
  const [endsAt, setEndsAt] = useState<number | null>(null);
  const [left, setLeft] = useState(seconds);
  const done = ctx.submitted(b.id);
  const wasDone = useRef(done);
  // "Try again" reopens the question with a fresh timer, not the one that ran out.
  useEffect(() => {
    if (wasDone.current && !done && endsAt !== null) {
      setLeft(seconds);
      setEndsAt(Date.now() + seconds * 1000);
    }
    wasDone.current = done;
  }, [done]);
  useEffect(() => {
    if (endsAt === null || done) return;
    const tick = () => {
      const remaining = Math.max(0, Math.ceil((endsAt - Date.now()) / 1000));
      setLeft(remaining);
      // Time is up: what was not handed in counts as no answer (docs/blocks.md).
      if (remaining === 0) ctx.submit(b.id, null);
    };
    const handle = window.setInterval(tick, 250);
    return () => window.clearInterval(handle);
  }, [endsAt, done]);
  const running = endsAt !== null && !done;
  // Announced at a few moments only, so a screen reader is not flooded every second.
  const announce = !running
    ? ''
    : left === 0
      ? ctx.t.timeUp
      : left <= 10 || left === Math.ceil(seconds / 2)
        ? format(ctx.t.timeLeft, { n: left })
        : null;
  const lastSaid = useRef('');
  if (announce !== null) lastSaid.current = announce;
  const box = useRef<HTMLDivElement>(null);
  const started = useRef(false);
  // "Start" gives way to the question: the focus goes to its first option, not to the page body.
  useLayoutEffect(() => {
    if (!started.current || endsAt === null) return;
    started.current = false;
    box.current?.querySelector<HTMLElement>('input')?.focus();
  }, [endsAt]);
  if (!done && endsAt === null) {
    return (
      <div class="lp-question lp-timed">
        <p class="lp-legend">{str(b.question)}</p>
        <p class="lp-muted">{format(ctx.t.timeLeft, { n: seconds })}</p>
        <button
          type="button"
          class="lp-btn lp-btn-primary"
          onClick={() => {
            started.current = true;
            setEndsAt(Date.now() + seconds * 1000);
          }}
        >
          {ctx.t.start}
        </button>
      </div>
    );
  }
  return (
    <div class="lp-timed" ref={box}>
      {running && (
        <p class={`lp-timer${left <= 10 ? ' lp-timer-low' : ''}`}>
          <span role="timer" aria-live="off">
            {format(ctx.t.timeLeft, { n: left })}
          </span>
        </p>
      )}
      <p class="lp-sr" aria-live="assertive">
        {lastSaid.current}
      </p>
      {done && ctx.answer(b.id) === null && <p class="lp-bad">{ctx.t.timeUp}</p>}
      <Question
        b={b}
        ctx={ctx}
        legend={str(b.question)}
        canSubmit={value !== '' && running}
        onSubmit={() => ctx.submit(b.id, value)}
      >
        <Choices
          b={b}
          name="o"
          options={optionsOf(b.options)}
          multiple={false}
          value={[value]}
          onChange={(v) => setValue(v[0])}
        />
      </Question>
    </div>
  );
}

// ---------------------------------------------------------------------------------------------- table

export const RENDERERS: Record<string, FunctionComponent<Props>> = {
  heading: Heading,
  text: Text,
  image: ImageBlock,
  video: Video,
  audio: Audio,
  embed: Embed,
  button: ButtonBlock,
  divider: Divider,
  spacer: Spacer,
  quiz_single_choice: SingleChoice,
  quiz_multiple_choice: MultipleChoice,
  quiz_true_false: TrueFalse,
  fill_in_blank: FillInBlank,
  flashcard: Flashcard,
  match: Match,
  hotspot: Hotspot,
  results: Results,
  stack: Stack,
  steps: Steps,
  timeline: Timeline,
  accordion: Accordion,
  slideshow: Slideshow,
  callout: Callout,
  code: Code,
  checklist: Checklist,
  compare: Compare,
  quote: Quote,
  spec_table: SpecTable,
  resource: Resource,
  // Never sent to learners (the learner view drops it); drawn as nothing should one arrive.
  instructor_note: () => null,
  poll: Poll,
  reflection: Reflection,
  ranking: Ranking,
  scenario: Scenario,
  timed_question: TimedQuestion,
  glossary: Glossary,
  video_chapters: VideoChapters,
  milestone: Milestone,
  markdown: MarkdownBlock,
};

export function Block({ b, ctx }: Props) {
  const Render = RENDERERS[b.type];
  if (!Render) return null; // an unknown type draws nothing
  return (
    <div
      class={`lp-block lp-block-${b.type.replace(/_/g, '-')}`}
      data-block-id={b.id}
      data-block-type={b.type}
    >
      <BlockBoundary label={ctx.t.blockError}>
        <Render b={b} ctx={ctx} />
      </BlockBoundary>
    </div>
  );
}
