import { boundQuery, type EntityManager } from '@lectern/db';
import { invalid, type Issue } from '@lectern/errors';

const TABLES = {
  themeId: { table: 'themes', what: 'theme' },
  certificateId: { table: 'certificate_templates', what: 'certificate template' },
  courseId: { table: 'courses', what: 'course' },
} as const;

export type RefField = keyof typeof TABLES;

/**
 * SPEC.md: a body reference to another workspace's object is a 400
 * `invalid_request` whose issue path names the field (not a 404: the URL's own
 * object exists). A missing object answers the same, so ids of other
 * workspaces cannot be probed. The row is locked `for key share` until the
 * transaction ends, so a concurrent delete cannot slip between check and write.
 */
export async function assertRefsInWorkspace(
  tx: EntityManager,
  workspaceId: string,
  refs: Partial<Record<RefField, string | null | undefined>>,
): Promise<void> {
  const issues: Issue[] = [];
  for (const [field, id] of Object.entries(refs) as [RefField, string | null | undefined][]) {
    if (id === null || id === undefined) continue;
    const { table, what } = TABLES[field];
    const rows = await boundQuery(
      tx,
      `select id from ${table} where id = ? and workspace_id = ? for key share`,
      [id, workspaceId],
    );
    if (rows.length === 0) {
      issues.push({
        code: 'unknown_reference',
        path: [field],
        message: `no ${what} "${id}" in this workspace`,
      });
    }
  }
  if (issues.length) throw invalid(issues.map((i) => i.message).join('; '), issues);
}
