import { Readability } from '@mozilla/readability';
import { parseHTML } from 'linkedom';
import { guardedFetch, type OutboundRequestOptions } from '@lectern/outbound';

export const SOURCE_LIMITS = {
  maxBytes: 2 * 1024 * 1024,
  timeoutMs: 15_000,
  maxRedirects: 3,
  /** About 6,000 tokens of text: what the model is given of the source. */
  maxChars: 24_000,
} as const;

export type SourceText = { ok: true; text: string; url: string } | { ok: false; reason: string };

const HTML = new Set(['text/html', 'application/xhtml+xml']);
const TEXT = new Set(['text/plain', 'text/markdown', 'text/x-markdown']);

/**
 * The readable text of `url`, through the outbound library (SSRF policy on every hop, 2 MB cap, timeout,
 * redirect limit): HTML reduced by Readability over linkedom (no browser, no scripts run), plain text and
 * Markdown as they are; anything else is refused. Trimmed to `maxChars`. Never throws.
 */
export async function fetchSourceText(
  url: string,
  opts: Pick<OutboundRequestOptions, 'allowPrivate' | 'isForbidden' | 'lookup'>,
): Promise<SourceText> {
  const res = await guardedFetch(url, {
    ...opts,
    maxBytes: SOURCE_LIMITS.maxBytes,
    timeoutMs: SOURCE_LIMITS.timeoutMs,
    maxRedirects: SOURCE_LIMITS.maxRedirects,
    accept: 'text/html, text/markdown, text/plain;q=0.9',
    userAgent: 'Lectern-Generation',
  });
  if (!res.ok) return { ok: false, reason: res.reason };
  const type = (res.contentType ?? '').split(';')[0]!.trim().toLowerCase();
  const raw = res.body.toString('utf8');
  let text: string;
  if (HTML.has(type)) text = readableText(raw);
  else if (TEXT.has(type)) text = raw;
  else
    return { ok: false, reason: `its content type "${type || 'none'}" is not HTML, plain text or Markdown` };
  text = tidy(text);
  if (!text) return { ok: false, reason: 'it has no readable text' };
  return { ok: true, text: trimTo(text, SOURCE_LIMITS.maxChars), url: res.url };
}

export function readableText(html: string): string {
  // linkedom's document is DOM-shaped; the project has no DOM lib types, so Readability gets it as its own.
  const { document } = parseHTML(html) as unknown as {
    document: ConstructorParameters<typeof Readability>[0] & { body?: { textContent: string | null } };
  };
  const article = new Readability(document).parse();
  if (article?.textContent) return article.textContent;
  return document.body?.textContent ?? '';
}

function tidy(text: string): string {
  return text
    .replace(/\r\n?/g, '\n')
    .replace(/[ \t\f\v]+/g, ' ')
    .replace(/ *\n */g, '\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}

/** At most `max` characters, cut at a paragraph or sentence end where one is near. */
export function trimTo(text: string, max: number): string {
  if (text.length <= max) return text;
  const cut = text.slice(0, max);
  const end = Math.max(cut.lastIndexOf('\n\n'), cut.lastIndexOf('. '));
  return (end > max * 0.8 ? cut.slice(0, end + 1) : cut).trim();
}
