import { ThemeSchema, newId, type EntityManager, type Theme } from '@lectern/db';
import { notFound } from '@lectern/errors';
import type { ThemeInput, ThemePatch } from '@lectern/contracts';

/** Themes (Scale and up; the plan gate sits in front of the routes). Newest first. */
export async function listThemes(em: EntityManager, workspaceId: string): Promise<Theme[]> {
  return em.find(ThemeSchema, { workspaceId }, { orderBy: { createdAt: 'desc', id: 'desc' } });
}

export async function getTheme(em: EntityManager, workspaceId: string, id: string): Promise<Theme> {
  const theme = await em.findOne(ThemeSchema, { id, workspaceId });
  if (!theme) throw notFound('Theme');
  return theme;
}

export async function createTheme(em: EntityManager, workspaceId: string, input: ThemeInput): Promise<Theme> {
  const now = new Date();
  const theme = em.create(ThemeSchema, {
    id: newId('thm'),
    workspaceId,
    name: input.name,
    tokens: input.tokens,
    customFonts: input.customFonts,
    createdAt: now,
    updatedAt: now,
  });
  await em.flush();
  return theme;
}

/** Any subset of the create fields; `tokens`, when sent, replaces the stored tokens. */
export async function updateTheme(
  em: EntityManager,
  workspaceId: string,
  id: string,
  patch: ThemePatch,
): Promise<Theme> {
  const theme = await getTheme(em, workspaceId, id);
  if (patch.name !== undefined) theme.name = patch.name;
  if (patch.tokens !== undefined) theme.tokens = patch.tokens;
  if (patch.customFonts !== undefined) theme.customFonts = patch.customFonts;
  theme.updatedAt = new Date();
  await em.flush();
  return theme;
}

/** Courses using the theme fall back to no theme (`courses.theme_id` is ON DELETE SET NULL). */
export async function deleteTheme(em: EntityManager, workspaceId: string, id: string): Promise<void> {
  const n = await em.nativeDelete(ThemeSchema, { id, workspaceId });
  if (!n) throw notFound('Theme');
}
