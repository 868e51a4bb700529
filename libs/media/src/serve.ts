import type { EntityManager } from '@lectern/db';
import type { Storage } from '@lectern/storage';
import { findMedia, mediaIdOf } from './media.js';

/** What `buildLearnerCourse` asks of a media resolver (libs/learner-runs `MediaUrl`), restated to keep libs apart. */
type Resolver = (ref: { url: string; use: string }) => Promise<string>;

/**
 * The `mediaUrl` port of `buildLearnerCourse` for one workspace's course (docs/media.md "Serving"): every
 * `media://<id>` of that workspace becomes a presigned GET valid `ttlSeconds` (one query for all the course's ids,
 * whatever order the resolver is called in). A reference to another workspace's file, a deleted one or a
 * malformed id stays as stored and resolves nowhere; an external URL stays as it is.
 */
export function mediaSigner(
  deps: { em: EntityManager; storage: Pick<Storage, 'presignGet'>; ttlSeconds: number },
  workspaceId: string,
): Resolver {
  const wanted = new Set<string>();
  let lookup: Promise<Map<string, { objectKey: string }>> | null = null;
  return async (ref) => {
    const id = mediaIdOf(ref.url);
    if (id === null) return ref.url;
    if (!id) return ref.url;
    wanted.add(id);
    // Every call of one resolve pass is made before the first await returns: one lookup serves them all.
    await Promise.resolve();
    lookup ??= findMedia(deps.em, workspaceId, [...wanted]);
    const found = (await lookup).get(id);
    if (!found) return ref.url;
    return deps.storage.presignGet(found.objectKey, deps.ttlSeconds);
  };
}
