import { z } from 'zod';
import { Timestamp } from './common.js';

export const EVENT_TYPES = [
  'course.viewed',
  'course.progress',
  'course.answered',
  'course.completed',
  'course.published',
  'course.unpublished',
  'certificate.issued',
  'identity.created',
] as const;
export const EventType = z.enum(EVENT_TYPES);
export type EventType = z.infer<typeof EventType>;

export const EventIdentity = z
  .object({
    id: z.string(),
    externalId: z.string(),
    name: z.string().nullable(),
    email: z.string().nullable(),
  })
  .nullable();

const CourseRef = z.object({ id: z.string(), title: z.string() });

const ReadableItem = z.object({
  answerId: z
    .string()
    .meta({ description: 'The id as the answer holds it (keyed for ranking items and match right sides)' }),
  id: z
    .string()
    .nullable()
    .meta({ description: "The item's id in the course (a match pair id); null when it names none" }),
  text: z.string().nullable().meta({ description: "The item's text in the course's own language" }),
});

/** A match or ranking answer mapped back to the course's items (docs/player-api.md "Readable answers"). */
export const ReadableAnswer = z
  .discriminatedUnion('type', [
    z.object({
      type: z.literal('match'),
      pairs: z.array(z.object({ left: ReadableItem, right: ReadableItem })),
    }),
    z.object({ type: z.literal('ranking'), order: z.array(ReadableItem) }),
  ])
  .meta({ id: 'ReadableAnswer' });

export const EventPayloads = {
  'course.viewed': z.object({ course: CourseRef, identity: EventIdentity }),
  'course.progress': z.object({
    course: CourseRef.extend({ totalScreens: z.number().int() }),
    screen: z.object({ id: z.string(), title: z.string(), index: z.number().int() }),
    percent: z.number(),
    identity: EventIdentity,
  }),
  'course.answered': z.object({
    course: CourseRef,
    screen: z.object({ id: z.string(), title: z.string() }),
    block: z.object({ id: z.string(), type: z.string() }),
    correct: z.boolean(),
    identity: EventIdentity,
  }),
  'course.completed': z.object({
    course: CourseRef.extend({ contentHash: z.string() }),
    identity: EventIdentity,
    completionId: z.string(),
    attempt: z.number().int(),
    source: z.enum(['embed', 'scorm']),
    score: z.object({ correct: z.number().int(), total: z.number().int(), percent: z.number().nullable() }),
    passed: z.boolean().nullable(),
    passingScore: z.number().nullable(),
    answers: z.array(
      z.object({
        blockId: z.string(),
        correct: z.boolean(),
        /** Match and ranking blocks answered: the answer with the course's item ids and texts. */
        answerItems: ReadableAnswer.optional(),
      }),
    ),
    startedAt: Timestamp,
    completedAt: Timestamp,
    timeSpentSeconds: z.number().int(),
  }),
  'certificate.issued': z.object({
    course: CourseRef,
    identity: EventIdentity,
    serial: z.string(),
    verifyUrl: z.string(),
    score: z.number(),
    issuedAt: Timestamp,
  }),
  'course.published': z.object({ course: CourseRef, embedUrl: z.string() }),
  'course.unpublished': z.object({ course: CourseRef, embedUrl: z.string() }),
  'identity.created': z.object({ identity: EventIdentity }),
} satisfies Record<EventType, z.ZodType>;

export type EventPayload<T extends EventType> = z.infer<(typeof EventPayloads)[T]>;

export const EventEnvelope = z
  .object({
    id: z.string(),
    type: EventType,
    createdAt: Timestamp,
    workspaceId: z.string(),
    data: z.record(z.string(), z.unknown()),
  })
  .meta({ id: 'EventEnvelope' });
export type EventEnvelope = z.infer<typeof EventEnvelope>;
