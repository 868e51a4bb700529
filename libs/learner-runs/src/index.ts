/**
 * Learner runs: embed keys and signed learner identities, run tokens, opening and resuming runs, the event
 * batches of the Player API (progress, answers, time, the finish), completions and attempts, and the player's
 * metering and limits. Decisions: docs/player-api.md.
 */
export type { SecretBox } from './ports.js';
export { runTokens, derivePlayerKeys, type RunTokens, type RunTokenClaims } from './run-token.js';
export { scopedTokens, type ScopedTokens, type ScopedTokenKind } from './scoped-token.js';
export {
  trackingTokens,
  FIRST_TRACKING_VERSION,
  type TrackingTokens,
  type TrackingClaims,
} from './tracking-token.js';
export { trackingSecretOf, rotateTrackingSecret, type TrackingSecret } from './tracking-secret.js';
export {
  createEmbedKey,
  listEmbedKeys,
  revokeEmbedKey,
  verifyIdentityToken,
  embedKeyDto,
  EMBED_SECRET_PREFIX,
  MAX_IDENTITY_LIFETIME_SECONDS,
  type VerifiedLearner,
} from './embed-keys.js';
export {
  openRun,
  checkEmbed,
  findPublishedCourse,
  type OpenRunPorts,
  type OpenClient,
  type PublishedCourse,
} from './open-run.js';
export {
  getPlayerSettings,
  updatePlayerSettings,
  assertOriginAllowed,
  frameAncestors,
  frameAncestorsOf,
  OPEN_ACCESS,
  type PlayerAccess,
} from './player-access.js';
export { getUsage } from './usage.js';
export { applyBatch, retakeRun, type IngestPorts, type RunRef } from './ingest.js';
export {
  applyEvents,
  checkEvents,
  creditedSeconds,
  judgePass,
  MAX_ANSWER_BYTES,
  type RunSnapshot,
  type BatchEvent,
  type RunFinish,
  type BatchOutcome,
  type Verdicts,
} from './run-state.js';
export {
  listCompletions,
  getCompletion,
  listAttempts,
  completionDto,
  attemptDto,
  passedNow,
  eventIdentityOf,
} from './completions.js';
export {
  hitAddressLimit,
  hitAnonymousLimits,
  usageDay,
  countView,
  uncountView,
  assertMayServe,
  assertBillingOk,
  type AnonymousLimits,
  type WorkspaceAccess,
} from './limits.js';
export { pickLocale, indexCourse, screenPercent, type ServedTranslation } from './served.js';
export {
  buildLearnerCourse,
  mediaRefs,
  servedAsStored,
  MEDIA_FIELDS,
  MEDIA_ITEMS,
  LINK_FIELDS,
  SERVED_MEDIA_FIELDS,
  type ServedMedia,
  type LearnerCourse,
  type LearnerCourseOptions,
  type LearnerCourseSource,
  type LearnerTheme,
  type StoredCourse,
  type MediaRef,
  type MediaUrl,
  type MediaUse,
} from './learner-course.js';
export { runForCertificate, type CertificateRun } from './certificate-run.js';
export { pollResults } from './poll-results.js';
