import type { EntityManager, Media } from '@lectern/db';
import type { Storage } from '@lectern/storage';
import { findMedia, mediaIdOf, posterFrameOf, type MediaVariantRecord } from './media.js';

/** What `buildLearnerCourse` asks of a media resolver (libs/learner-runs `MediaUrl`), restated to keep libs apart. */
export interface Served {
  url: string | null;
  srcset?: string;
  width?: number;
  height?: number;
  placeholder?: string;
  poster?: string;
}
type Resolver = (ref: { url: string; use: string; wantsPoster?: true }) => Promise<string | Served>;

/**
 * The `mediaUrl` port of `buildLearnerCourse` for one workspace's course (docs/media.md "Serving"): every
 * `media://<id>` of that workspace becomes a presigned GET valid `ttlSeconds` (one query for all the course's ids,
 * whatever order the resolver is called in); an image field also gets its processed variants as a `srcset` of
 * presigned addresses, its size and its placeholder; a video whose block has no poster of its own (`wantsPoster`)
 * gets its processed poster frame, presigned, and its frame size, from the same row. A reference to another workspace's file, a deleted one or a
 * malformed id resolves nowhere (`url: null`: the player shows "Image unavailable"); an external URL stays as it is.
 * The Player API and the authors' preview use this one resolver (apps/api/src/app.ts).
 */
export function mediaSigner(
  deps: { em: EntityManager; storage: Pick<Storage, 'presignGet'>; ttlSeconds: number },
  workspaceId: string,
): Resolver {
  const wanted = new Set<string>();
  let lookup: Promise<Map<string, Media>> | null = null;
  const sign = (key: string) => deps.storage.presignGet(key, deps.ttlSeconds);
  return async (ref) => {
    const id = mediaIdOf(ref.url);
    if (id === null) return ref.url;
    if (!id) return { url: null };
    wanted.add(id);
    // Every call of one resolve pass is made before the first await returns: one lookup serves them all.
    await Promise.resolve();
    lookup ??= findMedia(deps.em, workspaceId, [...wanted]);
    const found = (await lookup).get(id);
    if (!found) return { url: null };
    const url = await sign(found.objectKey);
    if (ref.use === 'image' && found.kind === 'image') return { url, ...(await imageExtras(found, sign)) };
    if (ref.wantsPoster && found.kind === 'video') return { url, ...(await posterExtras(found, sign)) };
    return url;
  };
}

/**
 * What the learner view carries beside an image's address once processing found it: `width`/`height` of the
 * upload (after orientation), the placeholder, and a `srcset` of the WebP variants (narrowest first) plus the
 * upload itself when it is wider than every variant (variants are never enlarged).
 */
async function imageExtras(m: Media, sign: (key: string) => Promise<string>): Promise<Omit<Served, 'url'>> {
  const extras: Omit<Served, 'url'> = {};
  if (m.width && m.height) {
    extras.width = m.width;
    extras.height = m.height;
  }
  if (m.placeholder) extras.placeholder = m.placeholder;
  const variants = (m.variants as MediaVariantRecord[])
    .filter((v) => v.role === 'variant' && v.width > 0)
    .sort((a, b) => a.width - b.width);
  if (variants.length > 0) {
    const candidates = await Promise.all(variants.map(async (v) => `${await sign(v.key)} ${v.width}w`));
    const widest = variants[variants.length - 1]!.width;
    if (m.width && m.width > widest) candidates.push(`${await sign(m.objectKey)} ${m.width}w`);
    extras.srcset = candidates.join(', ');
  }
  return extras;
}

/** A video's processed poster frame, presigned, and the video's frame size; nothing before processing made one. */
async function posterExtras(m: Media, sign: (key: string) => Promise<string>): Promise<Omit<Served, 'url'>> {
  const frame = posterFrameOf(m);
  if (!frame) return {};
  return {
    poster: await sign(frame.key),
    ...(m.width && m.height ? { width: m.width, height: m.height } : {}),
  };
}
