import { scopedTokens } from './scoped-token.js';

/**
 * SCORM tracking tokens: baked into a package exported with `track=1`, so the package can open runs for this
 * course through the Player API (`source: "scorm"`, the learner keyed by the LMS learner id).
 *
 * An HS256 JWT signed with the same key as run tokens (RUN_TOKEN_KEY or its derivation), with its own
 * audience so a tracking token is never a run token and back: `sub` = the course id, `wid` = the workspace,
 * `aud` = "lectern:scorm-tracking". No `exp`: a package lives in an LMS for years and cannot be re-issued
 * there; rotating RUN_TOKEN_KEY retires every package's tracking at once (docs/scorm.md).
 */
export interface TrackingClaims {
  courseId: string;
  workspaceId: string;
}

export interface TrackingTokens {
  sign(claims: TrackingClaims): Promise<string>;
  /** The claims of a valid tracking token; 401 `unauthorized` saying why otherwise. */
  verify(token: string): Promise<TrackingClaims>;
}

export function trackingTokens(key: () => Uint8Array): TrackingTokens {
  const tokens = scopedTokens(key, {
    audience: 'lectern:scorm-tracking',
    refused: 'Tracking token refused',
    notOurs: 'it is not a valid tracking token of this service',
  });
  return {
    async sign({ courseId, workspaceId }) {
      return (await tokens.sign(courseId, workspaceId)).token;
    },
    async verify(token) {
      const { sub, wid } = await tokens.verify(token);
      return { courseId: sub, workspaceId: wid };
    },
  };
}
