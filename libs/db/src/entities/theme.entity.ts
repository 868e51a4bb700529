import { EntitySchema } from '@mikro-orm/core';
import { createdAt, jsonb, references, text, updatedAt } from './columns.js';

/** A workspace's look for the player (tokens: libs/contracts design.ts `ThemeTokens`). */
export interface Theme {
  id: string;
  workspaceId: string;
  name: string;
  tokens: Record<string, unknown>;
  customFonts: unknown[];
  createdAt: Date;
  updatedAt: Date;
}

export const ThemeSchema = new EntitySchema<Theme>({
  name: 'Theme',
  tableName: 'themes',
  indexes: [
    {
      name: 'themes_ws_created_idx',
      expression: 'create index themes_ws_created_idx on themes (workspace_id, created_at desc, id desc)',
    },
  ],
  properties: {
    id: { ...text, primary: true },
    workspaceId: { ...references('Workspace', 'workspace_id', 'cascade') },
    name: { ...text },
    tokens: { ...jsonb('{}') },
    customFonts: { ...jsonb('[]'), fieldName: 'custom_fonts' },
    createdAt: { ...createdAt },
    updatedAt: { ...updatedAt },
  },
});
