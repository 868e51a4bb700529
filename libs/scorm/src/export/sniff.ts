/**
 * What a fetched file is, by its first bytes: whatever the URL or the Content-Type says, only a file of a kind the
 * field can show goes into a package (an HTML page served as `logo.png` stays remote).
 */

export type FontExt = 'woff2' | 'woff' | 'ttf' | 'otf';
export type ImageExt = 'png' | 'jpg' | 'gif' | 'webp' | 'svg';
/** Played by `<video>`/`<audio>`: either element takes any of them, so a media field accepts the lot. */
export type PlayableExt = 'mp4' | 'm4a' | 'webm' | 'ogg' | 'mp3' | 'wav';
export type MediaClass = 'image' | 'playable';

export function fontKind(bytes: Buffer): FontExt | null {
  if (bytes.length < 4) return null;
  const tag = bytes.subarray(0, 4).toString('latin1');
  if (tag === 'wOF2') return 'woff2';
  if (tag === 'wOFF') return 'woff';
  if (tag === 'OTTO') return 'otf';
  if (tag === 'true' || bytes.readUInt32BE(0) === 0x00010000) return 'ttf';
  return null;
}

/**
 * An SVG root after the prolog an editor may write (BOM, XML declaration, comments, a DOCTYPE without an internal
 * subset). A DOCTYPE with `[` (entity declarations) is not an image we take.
 */
const SVG_START =
  /^\uFEFF?\s*(?:<\?xml[^>]*\?>\s*)?(?:<!--[\s\S]*?-->\s*)*(?:<!DOCTYPE\s+svg[^>[]*>\s*)?(?:<!--[\s\S]*?-->\s*)*<svg[\s>/]/i;

export function imageKind(head: Buffer): ImageExt | null {
  if (head.length >= 8 && head.readUInt32BE(0) === 0x89504e47 && head.readUInt32BE(4) === 0x0d0a1a0a)
    return 'png';
  if (head.length >= 3 && head[0] === 0xff && head[1] === 0xd8 && head[2] === 0xff) return 'jpg';
  const ascii = head.subarray(0, 12).toString('latin1');
  if (ascii.startsWith('GIF87a') || ascii.startsWith('GIF89a')) return 'gif';
  if (ascii.startsWith('RIFF') && ascii.slice(8, 12) === 'WEBP') return 'webp';
  if (SVG_START.test(head.toString('utf8'))) return 'svg';
  return null;
}

export function playableKind(head: Buffer): PlayableExt | null {
  if (head.length < 4) return null;
  const ascii = head.subarray(0, 12).toString('latin1');
  if (ascii.slice(4, 8) === 'ftyp') return /^M4[AB] /.test(ascii.slice(8, 12)) ? 'm4a' : 'mp4';
  if (head.readUInt32BE(0) === 0x1a45dfa3) return 'webm';
  if (ascii.startsWith('OggS')) return 'ogg';
  if (ascii.startsWith('RIFF') && ascii.slice(8, 12) === 'WAVE') return 'wav';
  if (ascii.startsWith('ID3')) return 'mp3';
  // An MPEG audio frame header without ID3 tag: 11 sync bits, then a layer that is not "reserved".
  if (head[0] === 0xff && (head[1] & 0xe0) === 0xe0 && (head[1] & 0x06) !== 0) return 'mp3';
  return null;
}

export function mediaKind(head: Buffer, cls: MediaClass): ImageExt | PlayableExt | null {
  return cls === 'image' ? imageKind(head) : playableKind(head);
}

/**
 * Why an SVG may not go into the package, or null when it may. Inside an `<img>` an SVG runs no script, but a
 * packaged file is also a document of the package's origin, which in many LMSs is the LMS's own: opened
 * directly, its script would run there. A sanitiser is more than this needs: an SVG with anything that can run
 * or pull in script (script elements, event attributes, `javascript:` URLs, foreign HTML, entity declarations,
 * in any case and after numeric character references are decoded) is left remote instead.
 */
export function svgHazard(text: string): string | null {
  const decoded = text.replace(/&#(x[0-9a-f]+|[0-9]+);?/gi, (_, n: string) => {
    const code = n[0] === 'x' || n[0] === 'X' ? parseInt(n.slice(1), 16) : parseInt(n, 10);
    return code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : '';
  });
  const rules: [RegExp, string][] = [
    [/<(?:[\w.-]+:)?script[\s>/]/i, 'a <script> element'],
    [/[\s"'/](?:[\w.-]+:)?on[a-z]+\s*=/i, 'an event handler attribute (on…)'],
    [/j\s*a\s*v\s*a\s*s\s*c\s*r\s*i\s*p\s*t\s*:/i, 'a javascript: URL'],
    [
      /<(?:[\w.-]+:)?(?:foreignObject|iframe|embed|object|handler|listener)[\s>/]/i,
      'embedded HTML or handlers',
    ],
    [/<!ENTITY/i, 'entity declarations'],
  ];
  for (const [re, what] of rules) if (re.test(decoded)) return `an SVG with ${what}`;
  return null;
}
