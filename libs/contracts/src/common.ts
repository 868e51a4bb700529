import { z } from 'zod';

/** ISO 8601 UTC with milliseconds, as every timestamp in the API. */
export const Timestamp = z.string().meta({ format: 'date-time', example: '2026-11-21T09:30:00.000Z' });

export const ErrorBody = z
  .object({
    error: z.string().meta({ description: 'Stable code, safe to branch on' }),
    message: z.string(),
    issues: z
      .array(
        z.object({ code: z.string(), path: z.array(z.union([z.string(), z.number()])), message: z.string() }),
      )
      .optional()
      .meta({ description: 'At most 100; the rest are counted in issuesOmitted' }),
    issuesOmitted: z
      .number()
      .int()
      .optional()
      .meta({ description: 'How many issues past the first 100 were left out' }),
    requiredPlan: z
      .string()
      .optional()
      .meta({ description: 'On 403 plan_required: the plan that unlocks the endpoint or ceiling' }),
    limit: z
      .number()
      .optional()
      .meta({ description: 'On a ceiling or size refusal (403, 413, 400): the limit that was crossed' }),
    jobId: z
      .string()
      .optional()
      .meta({ description: 'On 504 from a synchronous command: the job that is still running' }),
    reason: z
      .enum(['not_finished', 'not_passed', 'anonymous', 'no_name', 'results_hidden', 'not_voted'])
      .optional()
      .meta({
        description:
          'On 403 forbidden from a certificate download: why the run earns no certificate (docs/certificates.md); ' +
          "from a poll's results: the poll does not show them, or this run has not voted (docs/player-api.md)",
      }),
    issuedCertificates: z.number().int().optional().meta({
      description: 'On 409 conflict from DELETE /courses/:id: how many certificates the course has issued',
    }),
  })
  .meta({ id: 'Error' });

export const Pagination = z
  .object({
    limit: z.number().int(),
    offset: z.number().int(),
    total: z.number().int(),
    hasMore: z.boolean(),
  })
  .meta({ id: 'Pagination' });

export const PAGE_DEFAULT = 50;
export const PAGE_MAX = 10_000;

/**
 * SPEC paging: default 50, above the maximum served at the maximum, nonsense falls back to
 * the default (never an error). Offset nonsense falls back to 0.
 */
export function parsePaging(query: Record<string, unknown>): { limit: number; offset: number } {
  const num = (v: unknown): number | null => {
    const s = Array.isArray(v) ? v[0] : v;
    if (typeof s !== 'string' || !/^\s*\d+\s*$/.test(s)) return null;
    const n = Number(s);
    return Number.isSafeInteger(n) ? n : null;
  };
  const rawLimit = num(query.limit);
  const limit = rawLimit === null || rawLimit < 1 ? PAGE_DEFAULT : Math.min(rawLimit, PAGE_MAX);
  const rawOffset = num(query.offset);
  const offset = rawOffset === null ? 0 : rawOffset;
  return { limit, offset };
}

// A repeated parameter arrives as an array; SPEC: nonsense falls back to the default, never a 400.
const pagingParam = z.union([z.string(), z.array(z.string())]).optional();

export const PagingQuery = z.object({
  limit: pagingParam.meta({
    description:
      'Default 50, maximum 10,000 (larger values are served at the maximum; nonsense falls back to 50)',
  }),
  offset: pagingParam.meta({ description: 'Rows to skip; default 0' }),
});

export function paged<T>(rows: T[], total: number, paging: { limit: number; offset: number }) {
  return {
    data: rows,
    pagination: {
      limit: paging.limit,
      offset: paging.offset,
      total,
      hasMore: paging.offset + rows.length < total,
    },
  };
}

export function iso(d: Date | string | null | undefined): string | null {
  if (d === null || d === undefined) return null;
  return (d instanceof Date ? d : new Date(d)).toISOString();
}
