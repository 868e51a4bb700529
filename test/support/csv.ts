import type { EntityManager } from '@lectern/db';
import { boundQuery } from '@lectern/db';
import { call, type Res } from './http.js';

/** RFC 4180 cell: quoted only when it has to be. */
export function cell(value: string, delimiter = ','): string {
  return /["\r\n]/.test(value) || value.includes(delimiter) ? `"${value.replaceAll('"', '""')}"` : value;
}

export function csvText(rows: string[][], delimiter = ',', eol = '\n'): string {
  return rows.map((r) => r.map((c) => cell(c, delimiter)).join(delimiter)).join(eol) + eol;
}

/** `n` readable data rows: a heading and questions, `perScreen` rows per screen. */
export function bigCsv(n: number, perScreen = 20): string {
  const rows: string[][] = [['screen', 'type', 'text', 'options', 'correct', 'explanation']];
  for (let i = 0; i < n; i++) {
    const screen = `Screen ${Math.floor(i / perScreen) + 1}`;
    rows.push(
      i % 2 === 0
        ? [screen, 'text', `Paragraph ${i + 1}: a line of reading material about the topic.`, '', '', '']
        : [screen, 'quiz_single_choice', `Question ${i + 1}?`, 'Alpha|Beta|Gamma', '2', 'Beta is right.'],
    );
  }
  return csvText(rows);
}

export interface ImportIssue {
  row: number;
  code: string;
  path: (string | number)[];
  message: string;
}

export interface ImportBody {
  data: {
    id: string;
    title: string;
    status: string;
    sourceKind: string;
    screens: { id: string; title: string; blocks: Record<string, unknown>[] }[];
  };
  issues: ImportIssue[];
  error?: string;
  message?: string;
  limit?: number;
  jobId?: string;
}

export function importCsv(
  base: string,
  key: string,
  body: string | Buffer,
  opts: { title?: string; contentType?: string | null; headers?: Record<string, string> } = {},
): Promise<Res<ImportBody>> {
  const qs = opts.title === undefined ? '' : `?title=${encodeURIComponent(opts.title)}`;
  const headers: Record<string, string> = { ...(opts.headers ?? {}) };
  if (opts.contentType !== null) headers['content-type'] = opts.contentType ?? 'text/csv';
  return call<ImportBody>(base, 'POST', `/courses/import/csv${qs}`, { key, raw: body, headers });
}

export interface JobRow {
  id: string;
  workspace_id: string;
  kind: string;
  status: string;
  input: Record<string, unknown>;
  result: Record<string, unknown> | null;
  error: Record<string, unknown> | null;
  attempts: number;
  completed_at: Date | null;
}

export async function jobsOf(em: EntityManager, workspaceId: string): Promise<JobRow[]> {
  return boundQuery<JobRow>(em, 'select * from jobs where workspace_id = ? order by created_at, id', [
    workspaceId,
  ]);
}

export async function courseCount(em: EntityManager, workspaceId: string): Promise<number> {
  const [{ n }] = await boundQuery<{ n: number }>(
    em,
    'select count(*)::int as n from courses where workspace_id = ?',
    [workspaceId],
  );
  return n;
}
