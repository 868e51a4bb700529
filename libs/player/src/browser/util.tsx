/** Small helpers shared by the block renderers: defensive field readers and the text/Markdown renderers. */
import type { ComponentChildren } from 'preact';
import { parseInline, parseMarkdown, parseParagraphs, type Inline, type MdBlock } from '../core/markdown.js';
import { isPackagedFile } from '../core/theme.js';

export type Rec = Record<string, unknown>;

/** A field that should be a string: anything else (missing, wrong type) reads as empty, never throws. */
export const str = (v: unknown): string => (typeof v === 'string' ? v : '');
export const num = (v: unknown, fallback: number): number =>
  typeof v === 'number' && Number.isFinite(v) ? v : fallback;
export const recs = (v: unknown): Rec[] =>
  Array.isArray(v) ? v.filter((x): x is Rec => typeof x === 'object' && x !== null && !Array.isArray(x)) : [];
export const strings = (v: unknown): string[] =>
  Array.isArray(v) ? v.filter((x) => typeof x === 'string') : [];
/** An item's id for keys and answers; items without one fall back to their position. */
export const itemId = (item: Rec, i: number): string =>
  typeof item.id === 'string' && item.id ? item.id : `#${i}`;

/**
 * A media address the browser can load. Stored `media://` identifiers are signed into http(s) URLs by the
 * Player API before they reach the player; a SCORM package's own files are `media/<hash>.<ext>` next to its
 * page; anything that is still not http(s), a data: image/media URL, a path on this origin or a packaged file is
 * not loaded.
 */
export function mediaSrc(v: unknown): string | null {
  const s = str(v).trim();
  if (/^https?:\/\//i.test(s) || /^data:(image|video|audio)\//i.test(s) || /^\/(?!\/)/.test(s)) return s;
  if (isPackagedFile(s)) return s;
  return null;
}

function renderInline(nodes: Inline[], newTab: string): ComponentChildren {
  return nodes.map((n) => {
    switch (n.t) {
      case 'text':
        return n.v;
      case 'strong':
        return <strong>{renderInline(n.c, newTab)}</strong>;
      case 'em':
        return <em>{renderInline(n.c, newTab)}</em>;
      case 'code':
        return <code>{n.v}</code>;
      case 'link':
        return (
          <a href={n.href} target="_blank" rel="noopener noreferrer">
            {renderInline(n.c, newTab)}
            <span class="lp-sr"> {newTab}</span>
          </a>
        );
    }
  });
}

export function InlineText({ text, newTab }: { text: string; newTab: string }) {
  return <>{renderInline(parseInline(text), newTab)}</>;
}

export function Paragraphs({ text, newTab }: { text: string; newTab: string }) {
  return (
    <>
      {parseParagraphs(text).map((p) => (
        <p>{renderInline(p, newTab)}</p>
      ))}
    </>
  );
}

function renderMd(blocks: MdBlock[], newTab: string, heading: (level: number) => number): ComponentChildren {
  return blocks.map((b) => {
    switch (b.t) {
      case 'p':
        return <p>{renderInline(b.c, newTab)}</p>;
      case 'h': {
        const Tag = `h${heading(b.level)}` as 'h2';
        return <Tag>{renderInline(b.c, newTab)}</Tag>;
      }
      case 'ul':
        return (
          <ul>
            {b.items.map((it) => (
              <li>{renderInline(it, newTab)}</li>
            ))}
          </ul>
        );
      case 'ol':
        return (
          <ol start={b.start}>
            {b.items.map((it) => (
              <li>{renderInline(it, newTab)}</li>
            ))}
          </ol>
        );
      case 'pre':
        return (
          <pre tabIndex={0}>
            <code class={b.lang ? `language-${b.lang}` : undefined}>{b.v}</code>
          </pre>
        );
      case 'quote':
        return <blockquote>{renderMd(b.c, newTab, heading)}</blockquote>;
      case 'hr':
        return <hr />;
    }
  });
}

const headingLevels = (blocks: MdBlock[]): number[] =>
  blocks.flatMap((b) => (b.t === 'h' ? [b.level] : b.t === 'quote' ? headingLevels(b.c) : []));

export function Markdown({ source, newTab }: { source: string; newTab: string }) {
  const blocks = parseMarkdown(source);
  // Markdown headings sit under the screen's own heading (h1): the source's top level becomes h2, and no
  // heading goes more than one level below the one before it (`##` then `####` reads h2 then h3).
  const top = Math.min(6, ...headingLevels(blocks));
  let previous = 1;
  const heading = (level: number) => (previous = Math.min(6, level - top + 2, previous + 1));
  return <>{renderMd(blocks, newTab, heading)}</>;
}
