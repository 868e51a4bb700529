import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import { HEAD_BYTES, fetchToFile, type HostResolver } from '@lectern/outbound';
import { fontKind, imageKind, playableKind, svgHazard, type MediaClass } from './sniff.js';

/** What a URL is fetched as: a font face, or the media class of the block field that holds it. */
export type AssetUse = 'font' | MediaClass;

/** Only absolute http(s) URLs are fetched: data: URLs are inside already, `media://` and paths are not ours to fetch. */
export const isFetchable = (v: unknown): v is string => typeof v === 'string' && /^https?:\/\/\S+$/i.test(v);

export interface PackedFile {
  /** The entry in the package: `fonts/<sha256-16>.<ext>` or `media/<sha256-16>.<ext>`. */
  name: string;
  /** The temp file it is read from when the zip is written. */
  path: string;
  /** Stored as is in the zip: the format is compressed already, deflating it again costs CPU for nothing. */
  store: boolean;
}

const COMPRESSED = new Set([
  'woff2',
  'woff',
  'png',
  'jpg',
  'gif',
  'webp',
  'mp4',
  'm4a',
  'webm',
  'ogg',
  'mp3',
]);

/** What reading one file gave: the same shape as the guarded fetcher's answer (`fetchToFile`). */
export type ReadResult =
  { ok: true; file: string; bytes: number; sha256: string; head: Buffer } | { ok: false; reason: string };

/**
 * Reads a reference that is not fetched over the network (a `media://` file of the course's workspace) into
 * `file`; `{ ok: false }` when it resolves nowhere. The export worker supplies it (the object store).
 */
export type ReadStored = (url: string, file: string) => Promise<ReadResult>;

/** The sha256 and first bytes of a file on disk, as `fetchToFile` reports them for a download. */
export async function digestFile(file: string, bytes: number): Promise<ReadResult> {
  const hash = createHash('sha256');
  const head: Buffer[] = [];
  let headSize = 0;
  for await (const chunk of createReadStream(file)) {
    const c = chunk as Buffer;
    hash.update(c);
    if (headSize < HEAD_BYTES) {
      head.push(c.subarray(0, HEAD_BYTES - headSize));
      headSize += Math.min(c.length, HEAD_BYTES - headSize);
    }
  }
  return { ok: true, file, bytes, sha256: hash.digest('hex'), head: Buffer.concat(head) };
}

export interface PackAssetsOptions {
  allowPrivate: boolean;
  fontMaxBytes: number;
  fontTimeoutMs: number;
  mediaMaxBytes: number;
  mediaTimeoutMs: number;
  /** Every media file of the package together (fonts have their own, smaller cap). */
  packageMediaMaxBytes: number;
  /** A temp directory of this export; the caller removes it. */
  dir: string;
  lookup?: HostResolver;
  /** Reads what is not an http(s) URL (`media://` references); without it those are not packaged. */
  readStored?: ReadStored;
}

/** An SVG is read whole to be checked, so it has a cap of its own far below a video's. */
export const SVG_MAX_BYTES = 5_000_000;
/** Fetches in flight per export: enough to overlap slow hosts, few enough not to flood one. */
const PARALLEL = 4;

const ACCEPT: Record<AssetUse, string> = {
  font: 'font/woff2, font/woff, font/ttf, font/otf, */*',
  image: 'image/png, image/jpeg, image/gif, image/webp, image/svg+xml, */*',
  playable: 'video/mp4, video/webm, audio/mpeg, audio/ogg, audio/wav, audio/mp4, */*',
};
const KIND_WORDS: Record<AssetUse, string> = {
  font: 'a WOFF2, WOFF, TrueType or OpenType font',
  image: 'a PNG, JPEG, GIF, WebP or SVG image',
  playable: 'an MP4, WebM, Ogg, MP3, WAV or M4A file',
};

/**
 * Fetches every distinct URL once (the guarded fetcher: SSRF policy, caps, deadline), checks by its first bytes
 * that it is what the field shows, and names it by its content hash (two URLs with the same bytes make one
 * file). Returns the packaged name per URL; a URL that could not be packaged is absent and has a warning.
 */
export async function packAssets(
  refs: { url: string; use: AssetUse }[],
  opts: PackAssetsOptions,
): Promise<{ names: Map<string, string>; files: PackedFile[]; warnings: string[] }> {
  // One fetch per URL; a URL used by two kinds of field takes whichever its bytes are.
  const uses = new Map<string, Set<AssetUse>>();
  for (const r of refs) uses.set(r.url, (uses.get(r.url) ?? new Set()).add(r.use));
  const queue = [...uses.entries()];
  const budget = { remaining: opts.packageMediaMaxBytes };
  const names = new Map<string, string>();
  const files = new Map<string, PackedFile>();
  const warnings = new Map<string, string>();
  let n = 0;

  /** A stored file, under the same caps as a download: its own limit, and the package's media budget. */
  const readStoredWithin = async (url: string, file: string, font: boolean): Promise<ReadResult> => {
    if (!opts.readStored) return { ok: false, reason: 'no store to read it from' };
    const got = await opts.readStored(url, file);
    if (!got.ok) return got;
    const max = font ? opts.fontMaxBytes : opts.mediaMaxBytes;
    const over = got.bytes > max || (!font && got.bytes > budget.remaining);
    if (over) {
      await rm(got.file, { force: true });
      return {
        ok: false,
        reason: got.bytes > max ? `larger than ${max} bytes` : 'over the package media budget',
      };
    }
    if (!font) budget.remaining -= got.bytes;
    return got;
  };

  const one = async (url: string, want: Set<AssetUse>) => {
    const font = want.has('font');
    const file = path.join(opts.dir, `asset-${n++}`);
    const remote = isFetchable(url);
    const got = remote
      ? await fetchToFile(url, {
          allowPrivate: opts.allowPrivate,
          maxBytes: font ? opts.fontMaxBytes : opts.mediaMaxBytes,
          timeoutMs: font ? opts.fontTimeoutMs : opts.mediaTimeoutMs,
          budget: font ? undefined : budget,
          accept: ACCEPT[[...want][0]],
          file,
          lookup: opts.lookup,
        })
      : await readStoredWithin(url, file, font);
    const label = font ? 'font' : 'media';
    const refuse = async (reason: string) => {
      warnings.set(url, `${label} ${url} ${remote ? 'left as a remote URL' : 'not packaged'}: ${reason}`);
      if (got.ok) {
        await rm(got.file, { force: true });
        if (!font) budget.remaining += got.bytes;
      }
    };
    if (!got.ok) return refuse(got.reason);
    const ext =
      (want.has('font') ? fontKind(got.head) : null) ??
      (want.has('image') ? imageKind(got.head) : null) ??
      (want.has('playable') ? playableKind(got.head) : null);
    if (!ext) return refuse(`not ${[...want].map((u) => KIND_WORDS[u]).join(' or ')}`);
    if (ext === 'svg') {
      if (got.bytes > SVG_MAX_BYTES) return refuse(`an SVG larger than ${SVG_MAX_BYTES} bytes`);
      const hazard = svgHazard(await readFile(got.file, 'utf8'));
      if (hazard) return refuse(hazard);
    }
    const name = `${font ? 'fonts' : 'media'}/${got.sha256.slice(0, 16)}.${ext}`;
    names.set(url, name);
    if (files.has(name)) {
      await rm(got.file, { force: true });
      if (!font) budget.remaining += got.bytes;
    } else files.set(name, { name, path: got.file, store: COMPRESSED.has(ext) });
  };

  await Promise.all(
    Array.from({ length: Math.min(PARALLEL, queue.length) }, async () => {
      for (let next = queue.shift(); next; next = queue.shift()) await one(next[0], next[1]);
    }),
  );
  // Warnings in the order the course references the URLs, whatever order the fetches ended in.
  const ordered = [...uses.keys()].flatMap((u) => (warnings.has(u) ? [warnings.get(u)!] : []));
  return { names, files: [...files.values()], warnings: ordered };
}
