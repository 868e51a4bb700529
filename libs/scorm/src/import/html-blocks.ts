/**
 * Third-party HTML → the nearest blocks (docs/scorm.md "What salvage keeps"): headings → `heading`,
 * paragraphs and loose text → `text`, lists → `markdown` lists, two-column tables → `spec_table` and wider ones
 * → `markdown` tables, blockquotes → `quote`, `<pre>` → `code`, radio/checkbox groups in a `<fieldset>` or
 * `<form>` → `quiz_single_choice` / `quiz_multiple_choice`. Scripts, media and embedded objects are dropped
 * with a warning. Parsed with htmlparser2 (forgiving, like a browser, and it never runs anything).
 */
import { parseDocument } from 'htmlparser2';
import { Element, Text, type ChildNode } from 'domhandler';
import type { ScormImportWarning } from '@lectern/contracts';

/** A block before its id is given. */
export type DraftBlock = Record<string, unknown> & { type: string };

export interface HtmlBlocks {
  title: string | null;
  blocks: DraftBlock[];
  warnings: ScormImportWarning[];
}

const SKIP = new Set([
  'script',
  'style',
  'noscript',
  'template',
  'head',
  'title',
  'meta',
  'link',
  'button',
  'select',
  'textarea',
  'nav',
]);
const MEDIA = new Set([
  'img',
  'picture',
  'video',
  'audio',
  'object',
  'embed',
  'iframe',
  'svg',
  'canvas',
  'applet',
  'frame',
  'frameset',
]);
const INLINE = new Set([
  'a',
  'abbr',
  'b',
  'bdi',
  'bdo',
  'br',
  'cite',
  'code',
  'data',
  'dfn',
  'em',
  'i',
  'kbd',
  'mark',
  'q',
  's',
  'samp',
  'small',
  'span',
  'strong',
  'sub',
  'sup',
  'time',
  'u',
  'var',
  'wbr',
  'font',
  'label',
]);

const squash = (s: string) => s.replace(/\s+/g, ' ').trim();

/** The visible text of a node, inline marks kept as the `text` block's Markdown subset (bold, italic, links). */
function inlineText(node: ChildNode, marks = true): string {
  if (node instanceof Text) return node.data;
  if (!(node instanceof Element)) return '';
  const name = node.name.toLowerCase();
  if (SKIP.has(name) || MEDIA.has(name)) return '';
  if (name === 'br') return '\n';
  const inner = node.children.map((c) => inlineText(c, marks)).join('');
  if (!marks || squash(inner) === '') return inner;
  if (name === 'strong' || name === 'b') return `**${squash(inner)}**`;
  if (name === 'em' || name === 'i') return `*${squash(inner)}*`;
  if (name === 'a') {
    const href = node.attribs.href ?? '';
    return /^https?:\/\//i.test(href) ? `[${squash(inner)}](${href})` : inner;
  }
  return inner;
}

const textOf = (node: ChildNode, marks = true) =>
  inlineText(node, marks).split('\n').map(squash).filter(Boolean).join('\n');

const elements = (node: Element, name?: string) =>
  node.children.filter((c): c is Element => c instanceof Element && (!name || c.name.toLowerCase() === name));

function findAll(node: Element, test: (e: Element) => boolean, out: Element[] = []): Element[] {
  for (const c of node.children) {
    if (!(c instanceof Element)) continue;
    if (test(c)) out.push(c);
    findAll(c, test, out);
  }
  return out;
}

function listMarkdown(list: Element, depth = 0): string {
  const ordered = list.name.toLowerCase() === 'ol';
  const lines: string[] = [];
  elements(list, 'li').forEach((li, i) => {
    const own = squash(
      li.children
        .filter((c) => !(c instanceof Element && /^(ul|ol)$/i.test(c.name)))
        .map((c) => inlineText(c))
        .join(''),
    );
    lines.push(`${'  '.repeat(depth)}${ordered ? `${i + 1}.` : '-'} ${own}`);
    for (const sub of elements(li).filter((e) => /^(ul|ol)$/i.test(e.name)))
      lines.push(listMarkdown(sub, depth + 1));
  });
  return lines.join('\n');
}

function tableBlock(table: Element): DraftBlock | null {
  const rows = findAll(table, (e) => e.name.toLowerCase() === 'tr')
    .map((tr) =>
      elements(tr)
        .filter((c) => /^(td|th)$/i.test(c.name))
        .map((c) => textOf(c).replaceAll('\n', ' ')),
    )
    .filter((r) => r.some((c) => c !== ''));
  if (rows.length === 0) return null;
  if (rows.every((r) => r.length === 2)) {
    return { type: 'spec_table', rows: rows.map(([label, value], i) => ({ id: `r${i + 1}`, label, value })) };
  }
  const width = Math.max(...rows.map((r) => r.length));
  const cell = (s: string | undefined) => (s ?? '').replaceAll('|', '\\|');
  const line = (r: string[]) => `| ${Array.from({ length: width }, (_, i) => cell(r[i])).join(' | ')} |`;
  return {
    type: 'markdown',
    markdown: [line(rows[0]), `|${' --- |'.repeat(width)}`, ...rows.slice(1).map(line)].join('\n'),
  };
}

/** Radio/checkbox groups of a form or fieldset → quiz blocks. Correct options carry `data-correct`. */
function quizBlocks(container: Element, root: Element, warn: (w: ScormImportWarning) => void): DraftBlock[] {
  const inputs = findAll(
    container,
    (e) => e.name.toLowerCase() === 'input' && /^(radio|checkbox)$/i.test(e.attribs.type ?? ''),
  );
  const groups = new Map<string, Element[]>();
  for (const input of inputs) {
    const key = `${(input.attribs.type ?? '').toLowerCase()}:${input.attribs.name ?? ''}`;
    groups.set(key, [...(groups.get(key) ?? []), input]);
  }
  const legend = elements(container, 'legend')[0];
  const out: DraftBlock[] = [];
  for (const [key, group] of groups) {
    const multiple = key.startsWith('checkbox:');
    const options = group.map((input, i) => {
      const id = input.attribs.id;
      const label =
        (id && findAll(root, (e) => e.name.toLowerCase() === 'label' && e.attribs.for === id)[0]) ||
        (input.parent instanceof Element && input.parent.name.toLowerCase() === 'label'
          ? input.parent
          : null);
      const text = label ? textOf(label, false) : squash(input.attribs.value ?? '');
      const correct =
        input.attribs['data-correct'] !== undefined && input.attribs['data-correct'] !== 'false';
      return { id: `o${i + 1}`, text, ...(correct ? { correct: true } : {}) };
    });
    const question = legend ? textOf(legend, false) : squash(container.attribs['aria-label'] ?? '');
    if (!options.some((o) => o.correct))
      warn({
        code: 'quiz_answer_unknown',
        message: `The question "${question.slice(0, 80)}" has no marked answer; it is imported ungraded`,
      });
    out.push({ type: multiple ? 'quiz_multiple_choice' : 'quiz_single_choice', question, options });
  }
  return out;
}

/** Maps one HTML document. `path` names it in warnings. */
export function htmlToBlocks(html: string, path: string): HtmlBlocks {
  const doc = parseDocument(html, { decodeEntities: true, lowerCaseTags: true });
  const warnings: ScormImportWarning[] = [];
  const seen = new Set<string>();
  const warn = (w: ScormImportWarning) => {
    if (seen.has(w.code) && w.code !== 'quiz_answer_unknown') return;
    seen.add(w.code);
    warnings.push({ ...w, path });
  };
  const root = new Element('root', {}, doc.children);
  const titleEl = findAll(root, (e) => e.name === 'title')[0];
  const title = titleEl
    ? squash(titleEl.children.map((c) => (c instanceof Text ? c.data : '')).join('')) || null
    : null;
  const body = findAll(root, (e) => e.name === 'body')[0] ?? root;
  const blocks: DraftBlock[] = [];
  let loose = '';
  const flush = () => {
    const t = loose.split('\n').map(squash).filter(Boolean).join('\n');
    if (t) blocks.push({ type: 'text', text: t });
    loose = '';
  };

  const walk = (node: ChildNode) => {
    if (node instanceof Text) {
      loose += node.data;
      return;
    }
    if (!(node instanceof Element)) return;
    const name = node.name.toLowerCase();
    if (name === 'script') {
      warn({ code: 'script_ignored', message: 'Scripts are not imported; interactions they drive are lost' });
      return;
    }
    if (MEDIA.has(name)) {
      warn({ code: 'media_ignored', message: 'Images, audio, video and embedded objects are not imported' });
      return;
    }
    if (SKIP.has(name)) return;
    if (INLINE.has(name)) {
      loose += inlineText(node);
      for (const m of findAll(node, (e) => MEDIA.has(e.name.toLowerCase()))) walk(m);
      return;
    }
    flush();
    const h = /^h([1-6])$/.exec(name);
    if (h) {
      const text = textOf(node, false);
      if (text) blocks.push({ type: 'heading', text, level: Math.min(Number(h[1]), 3) });
    } else if (name === 'p') {
      const text = textOf(node);
      if (text) blocks.push({ type: 'text', text });
      for (const m of findAll(node, (e) => MEDIA.has(e.name.toLowerCase()) || e.name === 'script')) walk(m);
    } else if (name === 'ul' || name === 'ol') {
      const md = listMarkdown(node);
      if (md.trim()) blocks.push({ type: 'markdown', markdown: md });
    } else if (name === 'table') {
      const b = tableBlock(node);
      if (b) blocks.push(b);
    } else if (name === 'blockquote') {
      const text = textOf(node);
      if (text) blocks.push({ type: 'quote', text });
    } else if (name === 'pre') {
      const code = inlineText(node, false).replace(/^\n+|\s+$/g, '');
      if (code) blocks.push({ type: 'code', code });
    } else if (
      (name === 'form' || name === 'fieldset') &&
      findAll(node, (e) => e.name === 'input').length > 0
    ) {
      const fieldsets = findAll(node, (e) => e.name === 'fieldset');
      const containers = name === 'form' && fieldsets.length > 0 ? fieldsets : [node];
      for (const c of containers) blocks.push(...quizBlocks(c, root, warn));
    } else {
      for (const c of node.children) walk(c);
    }
    flush();
  };
  for (const c of body.children) walk(c);
  flush();
  // Scripts in <head> (where SCORM runtimes usually sit) are left behind too.
  if (findAll(root, (e) => e.name === 'script').length)
    warn({ code: 'script_ignored', message: 'Scripts are not imported; interactions they drive are lost' });
  return { title, blocks, warnings };
}
