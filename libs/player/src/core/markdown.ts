/**
 * Text marks and Markdown as the player shows them, parsed into a small tree that the renderer turns into
 * elements — never into an HTML string, so nothing in course text can inject markup.
 *
 * `text` blocks use `inline` marks: `**bold**`, `*italic*` (or `_italic_`), `` `code` `` and
 * `[label](https://…)`; a blank line starts a new paragraph. `markdown` blocks use `parseMarkdown`, the
 * CommonMark constructs a course needs: ATX headings, paragraphs, bullet and numbered lists, fenced and
 * indented code, block quotes and thematic breaks, with the same inline marks. Raw HTML is shown as text.
 * Links go out only to http(s) and mailto addresses; any other target is shown as plain text.
 */

export type Inline =
  | { t: 'text'; v: string }
  | { t: 'strong'; c: Inline[] }
  | { t: 'em'; c: Inline[] }
  | { t: 'code'; v: string }
  | { t: 'link'; href: string; c: Inline[] };

export type MdBlock =
  | { t: 'p'; c: Inline[] }
  | { t: 'h'; level: number; c: Inline[] }
  | { t: 'ul'; items: Inline[][] }
  | { t: 'ol'; start: number; items: Inline[][] }
  | { t: 'pre'; lang: string; v: string }
  | { t: 'quote'; c: MdBlock[] }
  | { t: 'hr' };

const SAFE_HREF = /^(https?:\/\/|mailto:)/i;

export function safeHref(href: string): string | null {
  const h = href.trim();
  return SAFE_HREF.test(h) ? h : null;
}

/** Inline marks of one paragraph. Unclosed marks are left as the characters typed. */
export function parseInline(src: string): Inline[] {
  const out: Inline[] = [];
  let text = '';
  const flush = () => {
    if (text) out.push({ t: 'text', v: text });
    text = '';
  };
  let i = 0;
  while (i < src.length) {
    const ch = src[i];
    if (ch === '\\' && i + 1 < src.length && /[\\`*_[\]()]/.test(src[i + 1])) {
      text += src[i + 1];
      i += 2;
      continue;
    }
    if (ch === '`') {
      const end = src.indexOf('`', i + 1);
      if (end > i + 1) {
        flush();
        out.push({ t: 'code', v: src.slice(i + 1, end) });
        i = end + 1;
        continue;
      }
    }
    if ((ch === '*' || ch === '_') && src[i + 1] === ch) {
      const end = src.indexOf(ch + ch, i + 2);
      if (end > i + 2) {
        flush();
        out.push({ t: 'strong', c: parseInline(src.slice(i + 2, end)) });
        i = end + 2;
        continue;
      }
    }
    if (ch === '*' || ch === '_') {
      const end = src.indexOf(ch, i + 1);
      if (end > i + 1 && src[i + 1] !== ' ') {
        flush();
        out.push({ t: 'em', c: parseInline(src.slice(i + 1, end)) });
        i = end + 1;
        continue;
      }
    }
    if (ch === '[') {
      const close = src.indexOf('](', i + 1);
      const end = close === -1 ? -1 : src.indexOf(')', close + 2);
      if (close > i && end > close) {
        const label = parseInline(src.slice(i + 1, close));
        const href = safeHref(src.slice(close + 2, end));
        flush();
        if (href === null) out.push(...label);
        else out.push({ t: 'link', href, c: label });
        i = end + 1;
        continue;
      }
    }
    text += ch;
    i++;
  }
  flush();
  return out;
}

/** Prose with inline marks; blank lines separate paragraphs, single newlines are kept as spaces. */
export function parseParagraphs(src: string): Inline[][] {
  return src
    .split(/\n\s*\n/)
    .map((p) => p.trim())
    .filter((p) => p !== '')
    .map((p) => parseInline(p.replace(/\s*\n\s*/g, ' ')));
}

const BULLET = /^\s{0,3}[-*+]\s+(.*)$/;
const ORDERED = /^\s{0,3}(\d{1,9})[.)]\s+(.*)$/;
const HEADING = /^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$/;
const FENCE = /^\s{0,3}(```+|~~~+)\s*([\w+-]*)/;
const RULE = /^\s{0,3}([-*_])(\s*\1){2,}\s*$/;

export function parseMarkdown(src: string): MdBlock[] {
  const lines = src.replace(/\r\n?/g, '\n').split('\n');
  const out: MdBlock[] = [];
  let i = 0;
  while (i < lines.length) {
    const line = lines[i];
    if (line.trim() === '') {
      i++;
      continue;
    }
    const fence = FENCE.exec(line);
    if (fence) {
      const body: string[] = [];
      i++;
      while (i < lines.length && !lines[i].trim().startsWith(fence[1])) body.push(lines[i++]);
      i++;
      out.push({ t: 'pre', lang: fence[2], v: body.join('\n') });
      continue;
    }
    if (/^( {4}|\t)/.test(line)) {
      const body: string[] = [];
      while (i < lines.length && (/^( {4}|\t)/.test(lines[i]) || lines[i].trim() === '')) {
        body.push(lines[i++].replace(/^( {4}|\t)/, ''));
      }
      out.push({ t: 'pre', lang: '', v: body.join('\n').replace(/\n+$/, '') });
      continue;
    }
    const heading = HEADING.exec(line);
    if (heading) {
      out.push({ t: 'h', level: heading[1].length, c: parseInline(heading[2]) });
      i++;
      continue;
    }
    if (RULE.test(line)) {
      out.push({ t: 'hr' });
      i++;
      continue;
    }
    if (/^\s{0,3}>/.test(line)) {
      const body: string[] = [];
      while (i < lines.length && /^\s{0,3}>/.test(lines[i]))
        body.push(lines[i++].replace(/^\s{0,3}>\s?/, ''));
      out.push({ t: 'quote', c: parseMarkdown(body.join('\n')) });
      continue;
    }
    const bullet = BULLET.exec(line);
    const ordered = ORDERED.exec(line);
    if (bullet || ordered) {
      const re = bullet ? BULLET : ORDERED;
      const items: string[] = [];
      while (i < lines.length && lines[i].trim() !== '') {
        const m = re.exec(lines[i]);
        if (m) items.push(m[m.length - 1]);
        else if (items.length > 0) items[items.length - 1] += ' ' + lines[i].trim();
        i++;
      }
      const parsed = items.map(parseInline);
      out.push(
        ordered && !bullet
          ? { t: 'ol', start: Number(ordered[1]), items: parsed }
          : { t: 'ul', items: parsed },
      );
      continue;
    }
    const para: string[] = [];
    while (
      i < lines.length &&
      lines[i].trim() !== '' &&
      !HEADING.test(lines[i]) &&
      !FENCE.test(lines[i]) &&
      !BULLET.test(lines[i]) &&
      !/^\s{0,3}>/.test(lines[i])
    ) {
      para.push(lines[i++].trim());
    }
    out.push({ t: 'p', c: parseInline(para.join(' ')) });
  }
  return out;
}
