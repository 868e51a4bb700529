import { EntitySchema } from '@mikro-orm/core';

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
  properties: {
    id: { type: 'string', primary: true },
    workspaceId: { type: 'string', fieldName: 'workspace_id' },
    name: { type: 'string' },
    tokens: { type: 'json' },
    customFonts: { type: 'json', fieldName: 'custom_fonts' },
    createdAt: { type: 'Date', fieldName: 'created_at', columnType: 'timestamptz' },
    updatedAt: { type: 'Date', fieldName: 'updated_at', columnType: 'timestamptz' },
  },
});
