/**
 * Third-party HTML → the nearest blocks (docs/scorm.md "What salvage keeps"): headings → `heading`,
 * paragraphs and loose text → `text`, lists → `markdown` lists, two-column tables → `spec_table` and wider ones
 * → `markdown` tables, blockquotes → `quote`, `<pre>` → `code`, radio/checkbox groups in a `<fieldset>` or
 * `<form>` → `quiz_single_choice` / `quiz_multiple_choice`. Scripts, media and embedded objects are dropped
 * with a warning. Parsed with htmlparser2 (forgiving, like a browser, and it never runs anything).
 */
import { Parser } from 'htmlparser2';
import { DomHandler, Element, Text, type ChildNode } from 'domhandler';
import type { ScormImportWarning } from '@lectern/contracts';
import { refused } from './zip-guard.js';

/** A block before its id is given. */
export type DraftBlock = Record<string, unknown> & { type: string };

export interface HtmlBlocks {
  title: string | null;
  blocks: DraftBlock[];
  warnings: ScormImportWarning[];
  /** The page held more than `maxBlocks` blocks or `HTML_CAPS.maxElements` elements: the rest is left out. */
  truncated: boolean;
}

export const HTML_CAPS = {
  /**
   * Element nesting of one page. Browsers stop nesting there too (Blink's HTML parser caps the tree at 512
   * levels); authoring tools stay under 50. It also bounds every recursive walk below.
   */
  maxDepth: 512,
  /** Elements of one page parsed; past it the page is cut (a 4 MiB page of `<p>x</p>` holds 520,000). */
  maxElements: 250_000,
  /** Inline marks (bold, italic, links) nested inside one another that are still written as Markdown. */
  maxMarkDepth: 4,
} as const;

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

const MARKS = new Set(['strong', 'b', 'em', 'i', 'a']);

/**
 * The visible text of a node, inline marks kept as the `text` block's Markdown subset (bold, italic, links).
 * Marks nested deeper than `HTML_CAPS.maxMarkDepth` keep their text only: each written mark squashes its whole
 * inner text, so 500 nested marks would cost 500 passes over it.
 */
function inlineText(node: ChildNode, marks = true, markDepth = 0): string {
  if (node instanceof Text) return node.data;
  if (!(node instanceof Element)) return '';
  const name = node.name.toLowerCase();
  if (SKIP.has(name) || MEDIA.has(name)) return '';
  if (name === 'br') return '\n';
  const marking = marks && MARKS.has(name) && markDepth < HTML_CAPS.maxMarkDepth;
  const inner = node.children.map((c) => inlineText(c, marks, markDepth + (marking ? 1 : 0))).join('');
  if (!marking) return inner;
  const text = squash(inner);
  if (text === '') return inner;
  if (name === 'strong' || name === 'b') return `**${text}**`;
  if (name === 'em' || name === 'i') return `*${text}*`;
  const href = node.attribs.href ?? '';
  return /^https?:\/\//i.test(href) ? `[${text}](${href})` : inner;
}

const textOf = (node: ChildNode, marks = true) =>
  inlineText(node, marks).split('\n').map(squash).filter(Boolean).join('\n');

const elements = (node: Element, name?: string) =>
  node.children.filter((c): c is Element => c instanceof Element && (!name || c.name.toLowerCase() === name));

/** Descendants of `node` that pass `test`, in document order. Iterative: it runs before any depth is known. */
function findAll(node: Element, test: (e: Element) => boolean): Element[] {
  const out: Element[] = [];
  const stack: ChildNode[] = [];
  for (let i = node.children.length - 1; i >= 0; i--) stack.push(node.children[i]);
  while (stack.length > 0) {
    const c = stack.pop()!;
    if (!(c instanceof Element)) continue;
    if (test(c)) out.push(c);
    for (let i = c.children.length - 1; i >= 0; i--) stack.push(c.children[i]);
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
  const width = rows.reduce((w, r) => Math.max(w, r.length), 0);
  const cell = (s: string | undefined) => (s ?? '').replaceAll('|', '\\|');
  const line = (r: string[]) => `| ${Array.from({ length: width }, (_, i) => cell(r[i])).join(' | ')} |`;
  return {
    type: 'markdown',
    markdown: [line(rows[0]), `|${' --- |'.repeat(width)}`, ...rows.slice(1).map(line)].join('\n'),
  };
}

/** Radio/checkbox groups of a form or fieldset → quiz blocks. Correct options carry `data-correct`. */
function quizBlocks(
  container: Element,
  labelFor: (id: string) => Element | undefined,
  warn: (w: ScormImportWarning) => void,
): DraftBlock[] {
  const inputs = findAll(
    container,
    (e) => e.name.toLowerCase() === 'input' && /^(radio|checkbox)$/i.test(e.attribs.type ?? ''),
  );
  const groups = new Map<string, Element[]>();
  for (const input of inputs) {
    const key = `${(input.attribs.type ?? '').toLowerCase()}:${input.attribs.name ?? ''}`;
    const group = groups.get(key);
    if (group) group.push(input);
    else groups.set(key, [input]);
  }
  const legend = elements(container, 'legend')[0];
  const out: DraftBlock[] = [];
  for (const [key, group] of groups) {
    const multiple = key.startsWith('checkbox:');
    const options = group.map((input, i) => {
      const id = input.attribs.id;
      const label =
        (id && labelFor(id)) ||
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

/** Thrown from the handler to stop parsing a page at its element budget; what was parsed is kept. */
const PAGE_FULL = Symbol('page full');

/**
 * htmlparser2's tree builder with the page caps. Past `maxDepth` the page is refused (`too_deep`), before the
 * parser's own open-element stack grows with it: that stack costs time linear in its height per element, so
 * 150,000 nested `<div>`s took 25 s. Past `maxElements` parsing stops and the page is cut.
 */
class CappedDomHandler extends DomHandler {
  elements = 0;

  constructor(private readonly entry: string) {
    super();
  }

  override onopentag(name: string, attribs: Record<string, string>): void {
    // tagStack holds the document itself, then every open element.
    if (this.tagStack.length > HTML_CAPS.maxDepth)
      throw refused(
        'too_deep',
        `${this.entry} nests elements more than ${HTML_CAPS.maxDepth} levels deep`,
        this.entry,
      );
    if (++this.elements > HTML_CAPS.maxElements) throw PAGE_FULL;
    super.onopentag(name, attribs);
  }
}

function parsePage(html: string, entry: string): { children: ChildNode[]; cut: boolean } {
  const handler = new CappedDomHandler(entry);
  const parser = new Parser(handler, { decodeEntities: true, lowerCaseTags: true });
  try {
    parser.end(html);
  } catch (err) {
    if (err !== PAGE_FULL) throw err;
    return { children: handler.root.children, cut: true };
  }
  return { children: handler.root.children, cut: false };
}

/**
 * Maps one HTML document. `path` names it in warnings. Mapping stops once the page gave more than `maxBlocks`
 * blocks (the caller keeps at most that many); `truncated` then says so.
 */
export function htmlToBlocks(html: string, path: string, opts: { maxBlocks?: number } = {}): HtmlBlocks {
  const maxBlocks = opts.maxBlocks ?? Infinity;
  const page = parsePage(html, path);
  const warnings: ScormImportWarning[] = [];
  const seen = new Set<string>();
  const warn = (w: ScormImportWarning) => {
    if (seen.has(w.code) && w.code !== 'quiz_answer_unknown') return;
    seen.add(w.code);
    warnings.push({ ...w, path });
  };
  const root = new Element('root', {}, page.children);
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

  let labels: Map<string, Element> | undefined;
  const labelFor = (id: string) => {
    if (!labels) {
      labels = new Map();
      for (const l of findAll(root, (e) => e.name.toLowerCase() === 'label' && e.attribs.for !== undefined))
        if (!labels.has(l.attribs.for)) labels.set(l.attribs.for, l);
    }
    return labels.get(id);
  };

  const walk = (node: ChildNode) => {
    if (blocks.length > maxBlocks) return;
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
      for (const c of containers) for (const b of quizBlocks(c, labelFor, warn)) blocks.push(b);
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
  return { title, blocks, warnings, truncated: page.cut || blocks.length > maxBlocks };
}
