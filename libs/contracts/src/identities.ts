import { z } from 'zod';
import { PagingQuery, Timestamp } from './common.js';

export const BULK_MAX = 500;

const optionalText = (max: number) => z.string().max(max).nullable().optional();

export const UpsertIdentity = z
  .object({
    // Stored exactly as sent: it is the caller's key, and "a" and " a" may be two of their learners.
    externalId: z
      .string()
      .max(255)
      .refine((s) => s.trim() !== '', { error: 'must not be empty or only whitespace' }),
    name: optionalText(255),
    email: z
      .union([z.email().max(320), z.literal('')])
      .nullable()
      .optional(),
  })
  .meta({ id: 'UpsertIdentity' });
export type UpsertIdentity = z.infer<typeof UpsertIdentity>;

export const BulkUpsertIdentities = z.object({
  identities: z.array(UpsertIdentity).min(1).max(BULK_MAX),
});

export const BulkDeleteIdentities = z
  .object({
    externalIds: z.array(z.string().min(1)).max(BULK_MAX).optional(),
    ids: z.array(z.string().min(1)).max(BULK_MAX).optional(),
  })
  .refine((b) => (b.externalIds?.length ?? 0) + (b.ids?.length ?? 0) > 0, {
    message: 'give externalIds and/or ids',
    path: [],
  })
  .refine((b) => (b.externalIds?.length ?? 0) + (b.ids?.length ?? 0) <= BULK_MAX, {
    message: `at most ${BULK_MAX} keys per call`,
    path: [],
  });

export const Identity = z
  .object({
    id: z.string(),
    externalId: z.string(),
    name: z.string().nullable(),
    email: z.string().nullable(),
    lmsCourseId: z
      .string()
      .nullable()
      .meta({
        description:
          'Set when an LMS asserted this learner through the tracking token of that course (a SCORM package ' +
          'exported with `track=1`); nothing verified it, and it is not the learner of yours with the same ' +
          '`externalId`. Null for your own learners (this API, signed identity tokens)',
      }),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  })
  .meta({ id: 'Identity' });
export type IdentityDto = z.infer<typeof Identity>;

export const IdentitySearchQuery = PagingQuery.extend({
  search: z
    .string()
    .optional()
    .meta({ description: 'Matches name, email or external id (case-insensitive, literal)' }),
});

export const BulkUpsertResult = z.object({
  created: z.number().int(),
  updated: z.number().int(),
  identities: z.array(Identity),
});

export const BulkDeleteResult = z.object({
  deleted: z.number().int(),
  requested: z.number().int(),
  identities: z.array(z.object({ id: z.string(), externalId: z.string() })),
});
