import { boundQuery, type EntityManager } from '@lectern/db';
import { AppError } from '@lectern/errors';
import { TITLE_MAX } from '@lectern/contracts';
import type { WorkspaceRef } from './courses.js';

/**
 * The workspace an importer writes a course into, with its plan read at the moment of writing (not when the
 * request came in), so `createCourse` applies the ceilings of the plan the workspace has now.
 */
export async function workspaceForImport(em: EntityManager, id: string): Promise<WorkspaceRef> {
  const [ws] = await boundQuery<WorkspaceRef>(em, 'select id, plan from workspaces where id = ?', [id]);
  if (!ws) throw new AppError('not_found', 'Workspace not found');
  return ws;
}

/** Title of an imported course: the `title` query, else the one the file carries, cut to the title limit. */
export function importTitle(requested: string | null, fromFile: string): string {
  if (requested !== null && requested.trim() !== '') return requested.trim();
  return [...fromFile.trim()].slice(0, TITLE_MAX).join('').trim();
}
