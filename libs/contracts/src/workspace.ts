import { z } from 'zod';

export const Me = z
  .object({
    workspace_id: z.string(),
    workspace_name: z.string(),
    plan: z.string(),
    storageBytes: z.number().int().meta({ description: 'media bytes stored (docs/media.md "Quota")' }),
    storageLimitBytes: z
      .number()
      .int()
      .nullable()
      .meta({ description: "the plan's storage line; null: unbounded" }),
  })
  .meta({ id: 'WorkspaceInfo' });
