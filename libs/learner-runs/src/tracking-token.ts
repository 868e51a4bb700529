import { scopedTokens } from './scoped-token.js';

/**
 * SCORM tracking tokens: baked into a package exported with `track=1`, so the package can open runs for this
 * course through the Player API (`source: "scorm"`, the learner keyed by the LMS learner id within the course).
 *
 * An HS256 JWT signed with the same key as run tokens (RUN_TOKEN_KEY or its derivation), with its own
 * audience so a tracking token is never a run token and back: `sub` = the course id, `wid` = the workspace,
 * `tv` = the version of the course's tracking secret it was signed under, `aud` = "lectern:scorm-tracking".
 * No `exp`: a package lives in an LMS for years and cannot be re-issued there. Rotating the course's tracking
 * secret (POST /courses/:id/tracking-secret/rotate) retires that course's packages; rotating RUN_TOKEN_KEY
 * retires every package at once (docs/scorm.md).
 */
export interface TrackingClaims {
  courseId: string;
  workspaceId: string;
  /** The course's tracking secret version the token was signed under. */
  version: number;
}

/** Tokens signed before versions existed carry none: they belong to the first version. */
export const FIRST_TRACKING_VERSION = 1;

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
    async sign({ courseId, workspaceId, version }) {
      return (await tokens.sign(courseId, workspaceId, { claims: { tv: version } })).token;
    },
    async verify(token) {
      const { sub, wid, payload } = await tokens.verify(token);
      const tv = payload.tv ?? FIRST_TRACKING_VERSION;
      if (typeof tv !== 'number' || !Number.isInteger(tv))
        throw tokens.refuse('its secret version is malformed');
      return { courseId: sub, workspaceId: wid, version: tv };
    },
  };
}
