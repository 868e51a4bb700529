/**
 * Reading a manifest safely. Any DOCTYPE (and so any entity declaration: XXE, billion laughs) is refused before
 * the parser sees the text; fast-xml-parser then runs with entity processing off, and the five predefined
 * entities and character references are decoded in text afterwards (`entities.decodeXML`). With no DOCTYPE
 * there is no other entity to expand.
 */
import { XMLParser, XMLValidator } from 'fast-xml-parser';
import { decodeXML } from 'entities';
import { refused } from './zip-guard.js';

/** Bytes → text: UTF-8 (BOM or not) or UTF-16 with a BOM. */
export function decodeText(bytes: Buffer): string {
  if (bytes[0] === 0xff && bytes[1] === 0xfe) return new TextDecoder('utf-16le').decode(bytes.subarray(2));
  if (bytes[0] === 0xfe && bytes[1] === 0xff) return new TextDecoder('utf-16be').decode(bytes.subarray(2));
  return new TextDecoder('utf-8').decode(bytes).replace(/^\uFEFF/, '');
}

/** A parsed element: attributes under `@_name` (namespace prefixes removed), children by local name, text `#text`. */
export type XmlNode = Record<string, unknown>;

const ARRAYS = new Set([
  'organization',
  'item',
  'resource',
  'file',
  'dependency',
  'schema',
  'schemaversion',
  'string',
  'langstring',
]);

export const XML_CAPS = {
  /**
   * Element nesting of a manifest. A real one nests about 10 levels (LOM metadata, a few levels of items).
   * fast-xml-parser stops at 100 levels too (`maxNestedTags`), but with a plain Error that read as a fault
   * (500, retried): checked first here, it is a refusal.
   */
  maxDepth: 100,
  /** Elements of a manifest: 10,000 entries each listed a few times stay far below. */
  maxElements: 200_000,
} as const;

const parser = new XMLParser({
  ignoreAttributes: false,
  attributeNamePrefix: '@_',
  removeNSPrefix: true,
  processEntities: false,
  htmlEntities: false,
  ignoreDeclaration: true,
  ignorePiTags: true,
  parseTagValue: false,
  parseAttributeValue: false,
  // Not trimmed by the parser: `A &amp; <![CDATA[B]]>` keeps its space; textOf squashes whitespace instead.
  trimValues: false,
  cdataPropName: '#cdata',
  isArray: (name) => ARRAYS.has(name),
  // Above our own cap, which is checked first; the parser's counting starts below the root.
  maxNestedTags: 2 * XML_CAPS.maxDepth,
});

/** Index just past `end` searched from `from`, or the end of the text when it never comes (the validator says why). */
function past(text: string, end: string, from: number): number {
  const at = text.indexOf(end, from);
  return at < 0 ? text.length : at + end.length;
}

/**
 * Refuses a manifest nested deeper than `XML_CAPS.maxDepth` (`too_deep`) or holding more than
 * `XML_CAPS.maxElements` elements (`too_many_nodes`), in one linear pass with no recursion, before any parser
 * builds a tree. Malformed markup is left for the validator.
 */
function checkShape(text: string, entryName: string): void {
  let depth = 0;
  let elements = 0;
  let i = 0;
  for (;;) {
    const lt = text.indexOf('<', i);
    if (lt < 0) return;
    if (text.startsWith('<!--', lt)) i = past(text, '-->', lt + 4);
    else if (text.startsWith('<![CDATA[', lt)) i = past(text, ']]>', lt + 9);
    else if (text[lt + 1] === '?') i = past(text, '?>', lt + 2);
    else if (text[lt + 1] === '!') i = past(text, '>', lt + 2);
    else if (text[lt + 1] === '/') {
      depth--;
      i = past(text, '>', lt + 2);
    } else {
      // A start tag: its end is the first `>` outside a quoted attribute value.
      let j = lt + 1;
      let quote = '';
      for (; j < text.length; j++) {
        const c = text[j];
        if (quote) {
          if (c === quote) quote = '';
        } else if (c === '"' || c === "'") quote = c;
        else if (c === '>') break;
      }
      if (++elements > XML_CAPS.maxElements)
        throw refused(
          'too_many_nodes',
          `${entryName} holds more than ${XML_CAPS.maxElements.toLocaleString('en-US')} elements`,
          entryName,
        );
      if (text[j - 1] !== '/' && ++depth > XML_CAPS.maxDepth)
        throw refused(
          'too_deep',
          `${entryName} nests elements more than ${XML_CAPS.maxDepth} levels deep`,
          entryName,
        );
      i = j + 1;
    }
  }
}

/**
 * Parses an XML entry of the package; refuses DOCTYPE/ENTITY (`xml_doctype`), nesting or size past `XML_CAPS`
 * (`too_deep`, `too_many_nodes`) and text that is not XML (`not_xml`).
 */
export function parseXml(bytes: Buffer, entryName: string): XmlNode {
  const text = decodeText(bytes);
  if (/<!DOCTYPE/i.test(text) || /<!ENTITY/i.test(text))
    throw refused(
      'xml_doctype',
      `${entryName} declares a DOCTYPE or entities; they are refused (XXE, entity expansion)`,
      entryName,
    );
  checkShape(text, entryName);
  const valid = XMLValidator.validate(text);
  if (valid !== true)
    throw refused(
      'not_xml',
      `${entryName} is not well-formed XML (${valid.err.msg}, line ${valid.err.line})`,
      entryName,
    );
  try {
    return parser.parse(text) as XmlNode;
  } catch (err) {
    // The text passed the validator and the caps: whatever the parser still refuses is the input's doing.
    throw refused('not_xml', `${entryName} could not be read as XML (${(err as Error).message})`, entryName);
  }
}

export const asArray = (v: unknown): XmlNode[] =>
  (Array.isArray(v) ? v : v === undefined || v === null ? [] : [v]).filter(
    (x): x is XmlNode => typeof x === 'object' && x !== null,
  );

/** The text of an element (`#text`, or the element itself when it is a plain string), entities decoded. */
export function textOf(v: unknown): string {
  if (typeof v === 'string') return decodeXML(v).replace(/\s+/g, ' ').trim();
  if (Array.isArray(v)) return textOf(v[0]);
  if (v && typeof v === 'object') {
    const node = v as XmlNode;
    if (node['#text'] !== undefined || node['#cdata'] !== undefined) {
      // CDATA is literal: not entity-decoded.
      const cdata = asStrings(node['#cdata']).join('');
      return (
        asStrings(node['#text'])
          .map((t) => decodeXML(t))
          .join('') + cdata
      ).trim();
    }
    // <title><langstring>…</langstring></title> (SCORM 1.2 metadata style)
    for (const k of ['langstring', 'string']) if (node[k] !== undefined) return textOf(node[k]);
  }
  return '';
}

const asStrings = (v: unknown): string[] =>
  (Array.isArray(v) ? v : [v]).filter((x): x is string => typeof x === 'string');

export const attr = (node: XmlNode, name: string): string | undefined => {
  const v = node[`@_${name}`];
  return typeof v === 'string' ? decodeXML(v) : undefined;
};

/** Every string anywhere under `v` (for the generator marker in `<metadata>`). */
export function allStrings(v: unknown, out: string[] = [], depth = 0): string[] {
  if (depth > 32) return out;
  if (typeof v === 'string') out.push(decodeXML(v));
  else if (Array.isArray(v)) for (const x of v) allStrings(x, out, depth + 1);
  else if (v && typeof v === 'object') for (const x of Object.values(v)) allStrings(x, out, depth + 1);
  return out;
}
