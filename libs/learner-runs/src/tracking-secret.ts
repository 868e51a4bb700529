import { boundQuery, type EntityManager } from '@lectern/db';
import { notFound } from '@lectern/errors';

/**
 * A course's tracking secret, as a version number: a `track=1` export signs its token under the current version
 * and a tracking open refuses every other one, so rotating (one more version) retires every package exported
 * before while the packages exported after work. The token is signed with the service's key, so the version in
 * it cannot be forged; nothing secret is stored per course.
 */
export interface TrackingSecret {
  courseId: string;
  version: number;
  /** Null: never rotated. */
  rotatedAt: Date | null;
}

interface Row {
  id: string;
  tracking_version: number;
  tracking_rotated_at: Date | null;
}

const toSecret = (r: Row): TrackingSecret => ({
  courseId: r.id,
  version: r.tracking_version,
  rotatedAt: r.tracking_rotated_at ? new Date(r.tracking_rotated_at) : null,
});

/** The current tracking secret of a course of the workspace (drafts too: they export); 404 otherwise. */
export async function trackingSecretOf(
  em: EntityManager,
  workspaceId: string,
  courseId: string,
): Promise<TrackingSecret> {
  const [r] = await boundQuery<Row>(
    em,
    'select id, tracking_version, tracking_rotated_at from courses where id = ? and workspace_id = ?',
    [courseId, workspaceId],
  );
  if (!r) throw notFound('Course');
  return toSecret(r);
}

/**
 * Retires every package of the course exported so far: one statement, so two racing rotations make two
 * versions and neither is lost. 404 for a course of another workspace, like an unknown one.
 */
export async function rotateTrackingSecret(
  em: EntityManager,
  workspaceId: string,
  courseId: string,
  now = new Date(),
): Promise<TrackingSecret> {
  const [r] = await boundQuery<Row>(
    em,
    `update courses set tracking_version = tracking_version + 1, tracking_rotated_at = ?
      where id = ? and workspace_id = ?
      returning id, tracking_version, tracking_rotated_at`,
    [now, courseId, workspaceId],
  );
  if (!r) throw notFound('Course');
  return toSecret(r);
}
