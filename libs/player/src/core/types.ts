/**
 * Shapes the player receives and sends. They mirror the Player API contract (docs/player-api.md, SPEC.md
 * "Completion"), written out here rather than imported because this code is bundled for the browser: the
 * server libraries carry zod and node:crypto, which must not end up in the learner's download.
 */

export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };

/** A block as the learner view ships it: `id`, `type` and whatever fields its type has (docs/blocks.md). */
export interface PlayerBlock {
  id: string;
  type: string;
  [field: string]: unknown;
}

export interface PlayerScreen {
  id: string;
  title: string;
  blocks: PlayerBlock[];
}

export interface CustomFont {
  family: string;
  url: string;
  weight?: number;
  style?: 'normal' | 'italic';
}

/** Theme as served with the course: its `tokens` and `customFonts` (docs/design-tokens.md). */
export interface PlayerTheme {
  tokens?: Record<string, unknown>;
  customFonts?: CustomFont[];
}

export interface PlayerCourse {
  id: string;
  title: string;
  direction?: 'ltr' | 'rtl';
  locale?: string;
  quizFeedback?: 'immediate' | 'deferred';
  navigation?: 'default' | 'hidden';
  /** `sequential`: screens in order, graded blocks answered before moving past them (absent: `free`). */
  completion?: 'free' | 'sequential';
  passingScore?: number | null;
  contentHash?: string;
  theme?: PlayerTheme | null;
  customFonts?: CustomFont[];
  /** In a SCORM package only (the Player API reviews on the server): whether the review shows right answers. */
  review?: { showCorrectAnswers: boolean };
  screens: PlayerScreen[];
}

export interface CompletionState {
  id: string;
  status: 'in_progress' | 'completed';
  attempt: number | null;
  lastScreenId: string | null;
  progressPercent: number;
  answers?: Record<string, unknown>;
  locale?: string;
  /** Immediate mode: the verdicts already given for the stored answers. */
  feedback?: Feedback[];
  /** A run finished before: its last result (the open answers it, so a resumed end screen knows it). */
  result?: RunResult;
  /** The run's certificate once issued (it stays the learner's whatever a later pass scores). */
  certificate?: IssuedCertificateRef;
}

export interface IssuedCertificateRef {
  serial: string;
  verifyUrl: string;
}

/** One learner event as `POST /player/v1/runs/:completionId/events` takes it. */
export type PlayerEvent =
  | { type: 'screen'; screenId: string }
  | { type: 'answer'; blockId: string; answer: unknown }
  | { type: 'time'; seconds: number };

export interface Feedback {
  blockId: string;
  correct: boolean;
  explanation?: string;
  outcome?: string;
}

export interface RunResult {
  score: number | null;
  passed: boolean | null;
  attempt: number;
  /** The finish's review (docs/player-api.md "Review"); a SCORM package builds the same in the browser. */
  review?: ReviewItem[];
}

export interface ReviewItem {
  blockId: string;
  screenId: string;
  correct: boolean;
  answer?: unknown;
  correctAnswer?: unknown;
  explanation?: string;
  outcome?: string;
}

/** `data` of `GET /player/v1/runs/:id/polls/:blockId`: a poll's votes over every run of the course. */
export interface PollResults {
  blockId: string;
  total: number;
  options: { id: string; votes: number }[];
}

/** `data` of the events answer. */
export interface EventsResponse {
  completion: Partial<CompletionState>;
  feedback?: Feedback[];
  /** Ungraded scenarios answered in the batch: the chosen choice's outcome text. */
  outcomes?: { blockId: string; outcome: string }[];
  result?: RunResult;
}

/** The boot configuration the embed page (or the preview route) writes into the page as JSON. */
export type PlayerConfig =
  | {
      mode: 'run';
      apiBase: string;
      courseId: string;
      identity: string | null;
      lang: string | null;
    }
  | {
      mode: 'preview';
      course: PlayerCourse;
      lang?: string | null;
      apiBase?: string;
    }
  | PlayerScormConfig;

/**
 * The boot configuration of a SCORM package's `index.html` (docs/scorm.md). The course comes whole,
 * answer keys included, because an LMS has no server of ours to grade: the package grades in the browser.
 */
export interface PlayerScormConfig {
  mode: 'scorm';
  scorm: '1.2' | '2004';
  /** The course as stored, localized to the exported locale, answer keys INCLUDED. */
  course: PlayerCourse;
  lang: string | null;
  /** track=1 only: where the Player API is and the course-bound tracking token. null otherwise. */
  track: { apiBase: string; token: string } | null;
}

/** Messages the player posts to the host page (docs/player.md). */
export type HostMessage =
  | { type: 'ready'; courseId: string; screens: number }
  | { type: 'progress'; courseId: string; screenId: string; index: number; percent: number }
  | {
      type: 'completed';
      courseId: string;
      score: number | null;
      passed: boolean | null;
      attempt: number | null;
    }
  | { type: 'resize'; courseId: string; height: number };

/** The `source` every host message carries, so a host can tell the player's messages from others. */
export const HOST_MESSAGE_SOURCE = 'lectern-player';
