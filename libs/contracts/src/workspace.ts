import { z } from 'zod';

export const Me = z
  .object({ workspace_id: z.string(), workspace_name: z.string(), plan: z.string() })
  .meta({ id: 'WorkspaceInfo' });
