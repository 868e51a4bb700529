import { z } from 'zod';

export const Me = z
  .object({
    workspace_id: z.string(),
    workspace_name: z.string(),
    plan: z.string(),
    key_scope: z.enum(['read', 'write']).meta({
      description:
        "the calling key's scope: `read` keys may only GET (the tool server lists only read tools)",
    }),
    generations_used: z
      .number()
      .int()
      .meta({ description: 'AI generations used this calendar month (UTC); failed jobs are not counted' }),
    generations_allowance: z
      .number()
      .int()
      .nullable()
      .meta({ description: "The plan's AI generations per month; null: unlimited (Partner)" }),
    storageBytes: z.number().int().meta({ description: 'media bytes stored (docs/media.md "Quota")' }),
    storageLimitBytes: z
      .number()
      .int()
      .nullable()
      .meta({ description: "the plan's storage line; null: unbounded" }),
  })
  .meta({ id: 'WorkspaceInfo' });
