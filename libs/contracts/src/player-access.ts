import { z } from 'zod';

/**
 * An origin as a browser sends it (`scheme://host[:port]`, lower case, default port dropped, IDNs in punycode),
 * or null when `raw` is not one. With `wildcard`, `https://*.example.com` is accepted too (any subdomain of
 * example.com, not example.com itself). http and https only: the embed page and run opens come from web pages.
 */
export function normaliseOrigin(raw: string, opts: { wildcard?: boolean } = {}): string | null {
  const m = /^(https?):\/\/(\*\.)?([^/?#@\\\s*]+)$/i.exec(raw.trim());
  if (!m || (m[2] && !opts.wildcard)) return null;
  let url: URL;
  try {
    url = new URL(`${m[1]}://${m[3]}`);
  } catch {
    return null;
  }
  if (url.hostname === '' || (m[2] && !url.hostname.includes('.'))) return null;
  return `${url.protocol}//${m[2] ? '*.' : ''}${url.host}`;
}

/** Enough for a company's sites, LMSs and staging hosts; a longer list is a wildcard's job. */
export const MAX_ALLOWED_ORIGINS = 100;

const AllowedOrigin = z
  .string()
  .max(300)
  .transform((v, ctx) => {
    const origin = normaliseOrigin(v, { wildcard: true });
    if (origin === null) {
      ctx.addIssue({
        code: 'custom',
        message:
          'must be an origin: http(s)://host[:port] with no path, or https://*.example.com for every subdomain',
      });
      return z.NEVER;
    }
    return origin;
  })
  .meta({ description: 'An origin (`https://lms.example.com`, `https://*.example.com`)' });

export const PlayerSettings = z
  .object({
    allowedOrigins: z
      .array(z.string())
      .nullable()
      .meta({
        description:
          'Origins allowed to frame the embed page (its Content-Security-Policy frame-ancestors) and to open ' +
          "runs (the request's Origin header; SCORM packages: the LMS's origin). null: any origin.",
      }),
    anonymousRuns: z.boolean().meta({
      description:
        'false: every run open needs a signed identity (or a tracking token); anonymous opens get 401',
    }),
  })
  .meta({ id: 'PlayerSettings' });
export type PlayerSettingsDto = z.infer<typeof PlayerSettings>;

export const UpdatePlayerSettings = z
  .object({
    allowedOrigins: z.array(AllowedOrigin).max(MAX_ALLOWED_ORIGINS).nullable().optional().meta({
      description: 'The whole list, replacing the previous one; null: any origin; absent: unchanged',
    }),
    anonymousRuns: z.boolean().optional(),
  })
  .strict()
  .meta({ id: 'UpdatePlayerSettings' });
export type UpdatePlayerSettings = z.infer<typeof UpdatePlayerSettings>;

export const UsageDay = z
  .object({
    date: z.string().meta({ description: 'UTC day, YYYY-MM-DD' }),
    views: z.number().int(),
  })
  .meta({ id: 'UsageDay' });

export const Usage = z
  .object({
    month: z.string().meta({ description: 'UTC month, YYYY-MM' }),
    views: z.number().int().meta({ description: 'Views counted this month (what billing reads)' }),
    viewsAllowance: z.number().int().meta({ description: "The plan's monthly views" }),
    hardCap: z
      .boolean()
      .meta({ description: 'true: opens past the allowance are refused with 402 (Sandbox)' }),
    days: z
      .array(UsageDay)
      .meta({ description: 'Every day of the month so far, oldest first (0 for a day without views)' }),
  })
  .meta({ id: 'Usage' });
export type UsageDto = z.infer<typeof Usage>;
