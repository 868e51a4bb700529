/**
 * Learner runs (issue 9): embed keys, completions and attempts (read through /api/v1), and the Player API
 * (/player/v1) bodies and answers. Schemas only; the rows are mapped to these shapes by libs/learner-runs.
 * Decisions: docs/player-api.md.
 */
import { z } from 'zod';
import { PagingQuery, Timestamp } from './common.js';
import { ReadableAnswer } from './events.js';
import { CustomFont, ThemeTokens } from './design.js';

export const RUN_SOURCES = ['embed', 'scorm'] as const;
export const COMPLETION_STATUSES = ['in_progress', 'completed'] as const;

// ------------------------------------------------------------------ embed keys

export const CreateEmbedKey = z
  .object({ name: z.string().trim().min(1, { error: 'must not be empty' }).max(200) })
  .meta({ id: 'CreateEmbedKey' });
export type CreateEmbedKey = z.infer<typeof CreateEmbedKey>;

export const EmbedKey = z
  .object({
    id: z.string().meta({ description: 'The `kid` header of identity tokens signed with this key' }),
    name: z.string(),
    createdAt: Timestamp,
  })
  .meta({ id: 'EmbedKey' });
export type EmbedKeyDto = z.infer<typeof EmbedKey>;

export const EmbedKeyCreated = EmbedKey.extend({
  secret: z.string().meta({
    description:
      'Shown once. The HS256 key of identity tokens: the UTF-8 bytes of this whole string, prefix included',
  }),
}).meta({ id: 'EmbedKeyCreated' });
export type EmbedKeyCreatedDto = z.infer<typeof EmbedKeyCreated>;

// ----------------------------------------------------------- completions, attempts

/** Answers keyed by block id; values are whatever the learner sent (booleans, ids, text, objects). */
export const Answers = z.record(z.string(), z.unknown()).meta({ id: 'Answers' });

export const Completion = z
  .object({
    id: z.string(),
    courseId: z.string(),
    identityId: z.string().nullable().meta({ description: 'null for an anonymous run' }),
    identityExternalId: z.string().nullable().meta({ description: 'null for an anonymous run' }),
    status: z.enum(COMPLETION_STATUSES),
    score: z.number().nullable().meta({ description: 'Percent of graded blocks correct; null: none graded' }),
    passed: z
      .boolean()
      .nullable()
      .meta({ description: "Judged now, against the course's current passingScore; null when it has none" }),
    passedAtCompletion: z.boolean().nullable(),
    passingScoreAtCompletion: z.number().nullable(),
    attempt: z.number().int().nullable(),
    contentHash: z.string(),
    source: z.enum(RUN_SOURCES),
    timeSpentSeconds: z.number().int(),
    lastScreenId: z.string().nullable(),
    progressPercent: z.number(),
    locale: z.string(),
    startedAt: Timestamp,
    lastSeenAt: Timestamp,
    completedAt: Timestamp.nullable(),
  })
  .meta({ id: 'Completion' });
export type CompletionDto = z.infer<typeof Completion>;

export const CompletionWithAnswers = Completion.extend({
  answers: Answers,
  answerItems: z.record(z.string(), ReadableAnswer).meta({
    description:
      'By block id, the match and ranking answers with the course item ids and texts beside the keyed ids the learner sent',
  }),
}).meta({
  id: 'CompletionWithAnswers',
});
export type CompletionWithAnswersDto = z.infer<typeof CompletionWithAnswers>;

export const Attempt = z
  .object({
    id: z.string(),
    courseId: z.string(),
    identityId: z.string().nullable(),
    attempt: z.number().int(),
    score: z.number().nullable(),
    passed: z.boolean().nullable().meta({ description: 'The verdict when recorded; never recomputed' }),
    passingScore: z.number().nullable(),
    contentHash: z.string(),
    source: z.enum(RUN_SOURCES),
    locale: z.string(),
    timeSpentSeconds: z.number().int(),
    startedAt: Timestamp,
    completedAt: Timestamp,
    answers: Answers,
  })
  .meta({ id: 'Attempt' });
export type AttemptDto = z.infer<typeof Attempt>;

const oneString = z
  .union([z.string(), z.array(z.string())])
  .transform((v) => (Array.isArray(v) ? v[v.length - 1] : v));

export const CompletionsQuery = PagingQuery.extend({
  courseId: oneString.optional(),
  identityId: oneString.optional(),
  identityExternalId: oneString.optional(),
  status: z
    .enum(COMPLETION_STATUSES, { error: 'must be in_progress or completed' })
    .optional()
    .meta({ description: '`in_progress` or `completed`' }),
  completedAfter: z.iso
    .datetime({ offset: true, error: 'must be an ISO 8601 timestamp, e.g. 2026-11-01T00:00:00Z' })
    .optional()
    .meta({ description: 'Only runs finished after this instant, ordered by completedAt (newest first)' }),
});
export type CompletionsQuery = z.infer<typeof CompletionsQuery>;

// ------------------------------------------------------------------ Player API

/** Kept by the player in localStorage; keys an anonymous learner's row. */
export const AnonymousId = z
  .string()
  .regex(/^[A-Za-z0-9_-]{16,64}$/, { error: '16–64 characters of A–Z, a–z, 0–9, _ and -' });

export const OpenRun = z
  .object({
    courseId: z.string().min(1).max(100),
    identity: z
      .string()
      .min(1)
      .max(8192)
      .optional()
      .meta({ description: "Identity token (HS256 JWT) signed by the customer's backend with an embed key" }),
    lang: z.string().min(1).max(35).optional().meta({ description: 'Preferred locale (BCP-47)' }),
    anonymousId: AnonymousId.optional().meta({
      description: 'Required without `identity`: the player-kept id of an anonymous learner',
    }),
    tracking: z
      .object({
        token: z.string().min(1).max(4096).meta({
          description: 'The course-bound tracking token baked into a SCORM package exported with `track=1`',
        }),
        learnerId: z
          .string()
          .max(255)
          .refine((s) => s.trim() !== '', { error: 'must not be empty or only whitespace' })
          .meta({ description: 'The LMS learner id (`cmi.core.student_id` / `cmi.learner_id`)' }),
        learnerName: z
          .string()
          .max(255)
          .optional()
          .meta({ description: 'The LMS learner name (`cmi.core.student_name` / `cmi.learner_name`)' }),
      })
      .optional()
      .meta({
        description:
          'A SCORM package reporting a run (track=1), instead of `identity`/`anonymousId` (both: 400). The run ' +
          'has `source: "scorm"`, its learner the identity whose externalId is `learnerId` among the learners ' +
          "this course's packages asserted: never one of your own (signed or API) learners, nor another course's",
      }),
  })
  .meta({ id: 'OpenRun' });
export type OpenRun = z.infer<typeof OpenRun>;

/** POST /courses/:id/tracking-secret/rotate: the course's tracking secret after the rotation. */
export const TrackingSecret = z
  .object({
    courseId: z.string(),
    version: z.number().int().meta({
      description:
        'Version of the tracking secret: packages exported with `track=1` under an earlier one are refused (401)',
    }),
    rotatedAt: Timestamp.nullable().meta({ description: 'When the secret was last rotated' }),
  })
  .meta({ id: 'TrackingSecret' });
export type TrackingSecret = z.infer<typeof TrackingSecret>;

export const ReviewItem = z.object({
  blockId: z.string(),
  screenId: z.string(),
  correct: z.boolean(),
  answer: z.unknown().optional().meta({ description: "The learner's answer; absent when unanswered" }),
  correctAnswer: z.unknown().optional().meta({
    description:
      'A right answer in the shape the events take; only when the course has `review.showCorrectAnswers` (absent for a hotspot with hidden spots)',
  }),
  explanation: z.string().optional(),
  outcome: z.string().optional(),
});

export const RunCompletion = z
  .object({
    id: z.string(),
    status: z.enum(COMPLETION_STATUSES),
    attempt: z.number().int().nullable(),
    lastScreenId: z.string().nullable(),
    progressPercent: z.number(),
    answers: Answers,
    locale: z.string(),
    result: z
      .object({
        score: z.number().nullable(),
        passed: z.boolean().nullable(),
        attempt: z.number().int(),
        review: z.array(ReviewItem).optional().meta({
          description:
            'The review of the finished pass, as its finishing batch answered it, while that pass is the latest and the course is served as it was judged (same locale and content); absent during a retake',
        }),
      })
      .optional()
      .meta({
        description:
          'A run finished before: the result of its last finish (`passed` as judged then), also during a retake',
      }),
    certificate: z
      .object({
        serial: z.string(),
        verifyUrl: z.string().meta({ description: 'The public verification page of the certificate' }),
      })
      .optional()
      .meta({
        description: "The run's certificate once issued; it stays the run's whatever a later pass scores",
      }),
    feedback: z
      .array(
        z.object({
          blockId: z.string(),
          correct: z.boolean(),
          explanation: z.string().optional(),
          outcome: z.string().optional(),
        }),
      )
      .optional()
      .meta({
        description:
          'Only for a course with quizFeedback `immediate` and a run with answers: the verdicts already given, so a resumed run shows them',
      }),
  })
  .meta({ id: 'RunCompletion' });

/** A block of the learner view: answer keys removed (docs/blocks.md "learner view"). */
const LearnerBlock = z.object({ id: z.string(), type: z.string() }).catchall(z.unknown());
const LearnerScreen = z.object({ id: z.string(), title: z.string(), blocks: z.array(LearnerBlock) });

export const PlayerTheme = z
  .object({ id: z.string(), name: z.string(), tokens: ThemeTokens, customFonts: z.array(CustomFont) })
  .meta({ id: 'PlayerTheme' });

export const PlayerCourse = z
  .object({
    id: z.string(),
    title: z.string(),
    direction: z.enum(['ltr', 'rtl']),
    locale: z.string().meta({ description: 'The locale served: the requested translation, else the source' }),
    quizFeedback: z.enum(['deferred', 'immediate']),
    navigation: z.enum(['default', 'hidden']),
    completion: z.enum(['free', 'sequential']).meta({
      description:
        "`sequential`: screens in order, a screen's graded blocks answered before the next (a batch that jumps ahead is refused: 409 `conflict`, reason `out_of_order` or `unanswered`)",
    }),
    passingScore: z.number().nullable(),
    contentHash: z.string().meta({ description: 'Fingerprint of the material served (in this locale)' }),
    theme: PlayerTheme.nullable(),
    customFonts: z
      .array(CustomFont)
      .optional()
      .meta({ description: "The course's own fonts (`customFonts` of the course), as stored" }),
    screens: z.array(LearnerScreen),
  })
  .meta({ id: 'PlayerCourse' });
export type PlayerCourseDto = z.infer<typeof PlayerCourse>;

export const OpenRunResult = z
  .object({
    runToken: z.string().meta({
      description: 'Bearer token for the events and retake calls of this run only; short-lived',
    }),
    completion: RunCompletion,
    course: PlayerCourse,
  })
  .meta({ id: 'OpenRunResult' });
export type OpenRunResult = z.infer<typeof OpenRunResult>;

export const EVENTS_PER_BATCH = 100;
const Id = z.string().min(1).max(200);

export const RunEvent = z.discriminatedUnion('type', [
  z.object({ type: z.literal('screen'), screenId: Id }),
  z.object({ type: z.literal('answer'), blockId: Id, answer: z.unknown() }),
  z.object({ type: z.literal('time'), seconds: z.number().int().min(0).max(86_400) }),
]);
export type RunEvent = z.infer<typeof RunEvent>;

export const EventBatch = z
  .object({
    batchId: z
      .string()
      .regex(/^[A-Za-z0-9_.:-]{1,100}$/, { error: '1–100 characters of A–Z, a–z, 0–9, _ . : -' })
      .meta({
        description: 'Unique per batch of this run; a repeat is acknowledged without being applied twice',
      }),
    events: z.array(RunEvent).max(EVENTS_PER_BATCH),
  })
  .meta({ id: 'EventBatch' });
export type EventBatch = z.infer<typeof EventBatch>;

export const RunState = z
  .object({
    status: z.enum(COMPLETION_STATUSES),
    attempt: z.number().int().nullable(),
    progressPercent: z.number(),
    lastScreenId: z.string().nullable(),
  })
  .meta({ id: 'RunState' });
export type RunStateDto = z.infer<typeof RunState>;

export const AnswerFeedback = z.object({
  blockId: z.string(),
  correct: z.boolean(),
  explanation: z.string().optional(),
  outcome: z.string().optional().meta({ description: 'A scenario: the outcome text of the chosen choice' }),
});

export const RunResult = z.object({
  score: z.number().nullable(),
  passed: z.boolean().nullable(),
  attempt: z.number().int(),
  review: z.array(ReviewItem).optional().meta({
    description:
      'Every graded question of the finished pass in course order: right or wrong, the learner\'s answer, the explanation, and the correct answer when the course shows them (docs/player-api.md "Review")',
  }),
});

export const ScenarioOutcome = z.object({ blockId: z.string(), outcome: z.string() });

export const EventBatchResult = z
  .object({
    completion: RunState,
    feedback: z.array(AnswerFeedback).optional().meta({
      description: 'Only when the course has quizFeedback `immediate`: the graded answers of this batch',
    }),
    outcomes: z.array(ScenarioOutcome).optional().meta({
      description:
        'The ungraded scenarios (no choice marked correct) answered in this batch, in any quizFeedback: the outcome text of the chosen choice, when it has one',
    }),
    result: RunResult.optional().meta({ description: 'Only when this batch finished the run' }),
  })
  .meta({ id: 'EventBatchResult' });
export type EventBatchResultDto = z.infer<typeof EventBatchResult>;

export const RetakeResult = z.object({ completion: RunState }).meta({ id: 'RetakeResult' });

export const PollResults = z
  .object({
    blockId: z.string(),
    total: z
      .number()
      .int()
      .meta({ description: 'Votes cast for the options of this poll, in every run of the course' }),
    options: z
      .array(z.object({ id: z.string(), votes: z.number().int() }))
      .meta({ description: "Each option of the poll in the course's order, with its votes" }),
  })
  .meta({ id: 'PollResults' });
export type PollResultsDto = z.infer<typeof PollResults>;

/** What the embed page hands to the player bundle (JSON in `#lectern-player-config`). */
export const PlayerConfig = z
  .object({
    apiBase: z.string().meta({ description: 'The /player/v1 base URL' }),
    courseId: z.string(),
    identity: z.string().nullable(),
    lang: z.string().nullable(),
    mode: z.literal('run'),
  })
  .meta({ id: 'PlayerConfig' });
export type PlayerConfig = z.infer<typeof PlayerConfig>;
