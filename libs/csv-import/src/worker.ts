import { AppError } from '@lectern/errors';
import { createCourse, importTitle, workspaceForImport } from '@lectern/authoring';
import type { CsvImportIssue, CsvImportJobResult } from '@lectern/contracts';
import {
  runJobWorker,
  type ClaimedJob,
  type JobContext,
  type JobWorkerDeps,
  type JobWorkerHandle,
  type JobWorkerOptions,
} from '@lectern/jobs';
import { CsvRowLimitError } from './csv-errors.js';
import { parseCourseCsv } from './parse-course-csv.js';
import type { CsvIssue } from './types.js';

export const CSV_IMPORT_KIND = 'csv.import' as const;
/** Durable consumer name: every csv-worker process shares the queue. */
export const CSV_WORKER_APP = 'csv-worker';
/** The blob of a csv.import job that holds the uploaded file. */
export const CSV_BLOB = 'upload.csv';

/** Parser issue → API issue: SPEC.md's `{code, path, message}` plus `row`, the same in the 201 and the 400. */
export function toImportIssues(issues: readonly CsvIssue[]): CsvImportIssue[] {
  return issues.map((i) => ({ row: i.row, code: i.code, path: ['row', i.row], message: i.message }));
}

/**
 * The `csv.import` handler: the uploaded bytes → a draft course (`sourceKind: csv`).
 * Runs inside the job's transaction, so the course and the job result commit together
 * and a redelivered job never creates a second course. Refusals are AppErrors that are
 * not retried: 400 with the row issues (nothing readable, over 2,000 rows) and 403
 * `plan_required` (Sandbox ceilings, from `createCourse` with the plan read here).
 */
export async function handleCsvImport(
  job: ClaimedJob<typeof CSV_IMPORT_KIND>,
  ctx: JobContext,
): Promise<CsvImportJobResult> {
  const bytes = await ctx.readBlob(CSV_BLOB);
  let parsed: ReturnType<typeof parseCourseCsv>;
  try {
    parsed = parseCourseCsv(bytes);
  } catch (err) {
    if (err instanceof CsvRowLimitError) {
      throw new AppError('invalid_request', err.message, {
        issues: toImportIssues([{ row: err.row, code: 'too_many_rows', message: err.message }]),
        details: { limit: err.limit },
      });
    }
    throw err;
  }
  const issues = toImportIssues(parsed.issues);
  if (parsed.screens.length === 0) {
    throw new AppError('invalid_request', 'The CSV has no readable screen; see issues for each row', {
      issues,
    });
  }

  const ws = await workspaceForImport(ctx.em, job.workspaceId);
  const course = await createCourse(
    ctx.em,
    ws,
    { title: importTitle(job.input.title, parsed.screens[0].title), screens: parsed.screens },
    { sourceKind: 'csv' },
  );
  ctx.log.info(
    { courseId: course.id, rows: parsed.rowCount, screens: parsed.screens.length, issues: issues.length },
    'csv imported',
  );
  return { courseId: course.id, issues };
}

/** The `csv.import` entry of the job registry: one durable consumer on `<prefix>.jobs.csv.import`. */
export const csvImportJob: JobWorkerOptions<typeof CSV_IMPORT_KIND> = {
  kind: CSV_IMPORT_KIND,
  app: CSV_WORKER_APP,
  handler: handleCsvImport,
  concurrency: 4,
  // A 2,000-row file parses and stores in well under a second; 30 s leaves room for a slow database.
  ackWaitMs: 30_000,
  maxDeliver: 5,
};

export interface CsvWorkerOptions {
  concurrency?: number;
}

/** The csv worker alone (tests, benches); `lectern worker csv` runs the same entry through the job registry. */
export function startCsvWorker(deps: JobWorkerDeps, opts: CsvWorkerOptions = {}): Promise<JobWorkerHandle> {
  return runJobWorker(deps, { ...csvImportJob, concurrency: opts.concurrency ?? csvImportJob.concurrency });
}
