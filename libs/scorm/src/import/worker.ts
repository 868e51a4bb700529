import { AppError, invalid, issuesFromZod } from '@lectern/errors';
import type { EntityManager } from '@lectern/db';
import {
  assertRefsInWorkspace,
  createCourse,
  createTranslation,
  importTitle,
  updateTranslation,
  workspaceForImport,
  type WorkspaceRef,
} from '@lectern/authoring';
import { CreateCourse, Locale, type ScormImportJobResult, type ScormImportWarning } from '@lectern/contracts';
import {
  runJobWorker,
  type ClaimedJob,
  type JobContext,
  type JobWorkerDeps,
  type JobWorkerHandle,
  type JobWorkerOptions,
} from '@lectern/jobs';
import { refused } from './zip-guard.js';
import type { RoundtripCourse } from './import-package.js';
import { planInThread } from './plan-thread.js';

export const SCORM_IMPORT_KIND = 'scorm.import' as const;
/** Durable consumer name of the import kind (`lectern worker scorm` runs it next to the export kind). */
export const SCORM_IMPORT_APP = 'scorm-import';
/** The blob of a scorm.import job that holds the uploaded package. */
export const SCORM_BLOB = 'upload.zip';

/** A reference of the exported course that does not exist here is dropped (with a warning), not a 400. */
async function keptRef(
  em: EntityManager,
  wsId: string,
  field: 'themeId' | 'certificateId',
  id: string | null | undefined,
  warnings: ScormImportWarning[],
): Promise<string | undefined> {
  if (!id) return undefined;
  try {
    await assertRefsInWorkspace(em, wsId, { [field]: id });
    return id;
  } catch (err) {
    if (!(err instanceof AppError) || err.code !== 'invalid_request') throw err;
    const what = field === 'themeId' ? 'theme' : 'certificate template';
    warnings.push({
      code: field === 'themeId' ? 'theme_dropped' : 'certificate_dropped',
      message: `The course used ${what} "${id}", which this workspace does not have; the default is used`,
    });
    return undefined;
  }
}

async function restore(
  em: EntityManager,
  ws: WorkspaceRef,
  course: RoundtripCourse,
  title: string | null,
  warnings: ScormImportWarning[],
) {
  // The same validation as POST /courses: the file is input like any other.
  const { translations, themeId, certificateId, ...fields } = course;
  const parsed = CreateCourse.safeParse({ ...fields, ...(title ? { title } : {}) });
  if (!parsed.success)
    throw invalid('The course in the package is invalid', issuesFromZod(parsed.error.issues, ['course']));
  const created = await createCourse(
    em,
    ws,
    {
      ...parsed.data,
      themeId: await keptRef(em, ws.id, 'themeId', themeId, warnings),
      certificateId: await keptRef(em, ws.id, 'certificateId', certificateId, warnings),
    },
    { sourceKind: 'scorm' },
  );
  for (const [i, t] of (translations ?? []).entries()) {
    const locale = Locale.safeParse(t.locale);
    if (!locale.success)
      throw invalid(
        'A translation in the package is invalid',
        issuesFromZod(locale.error.issues, ['translations', i, 'locale']),
      );
    const row = await createTranslation(em, ws.id, created.id, locale.data);
    if (Object.keys(t.content).length) await updateTranslation(em, ws.id, created.id, row.id, t.content);
  }
  return created;
}

/**
 * The `scorm.import` handler: the uploaded package (a temp file) → a draft course (`sourceKind: scorm`), in the
 * job's transaction. Refusals are non-retryable 400s (zip safety, manifest) or 403s (Sandbox ceilings).
 */
export async function handleScormImport(
  job: ClaimedJob<typeof SCORM_IMPORT_KIND>,
  ctx: JobContext,
): Promise<ScormImportJobResult> {
  const { plan, entries } = await planInThread(ctx.blobFile(SCORM_BLOB), ctx.signal);
  const ws = await workspaceForImport(ctx.em, job.workspaceId);
  const warnings = [...plan.warnings];
  let courseId: string;
  if (plan.kind === 'roundtrip') {
    courseId = (await restore(ctx.em, ws, plan.course, job.input.title, warnings)).id;
  } else {
    if (plan.screens.length === 0) throw refused('no_items', 'The manifest has no item to import');
    const title = importTitle(job.input.title, plan.title) || 'Imported SCORM package';
    courseId = (await createCourse(ctx.em, ws, { title, screens: plan.screens }, { sourceKind: 'scorm' })).id;
  }
  ctx.log.info({ courseId, kind: plan.kind, entries, warnings: warnings.length }, 'scorm imported');
  return { courseId, meta: { kind: plan.kind, warnings } };
}

/** The `scorm.import` entry of the job registry. */
export const scormImportJob: JobWorkerOptions<typeof SCORM_IMPORT_KIND> = {
  kind: SCORM_IMPORT_KIND,
  app: SCORM_IMPORT_APP,
  handler: handleScormImport,
  // Each job holds a temp file of up to 100 MB and a bounded amount of memory; two at once per process.
  concurrency: 2,
  blobsAs: 'file',
  deleteBlobsWhenDone: true,
  // Download and parse of a 100 MB package take seconds; 60 s leaves room for a slow store.
  ackWaitMs: 60_000,
  maxDeliver: 3,
};

/** The import kind alone (tests and benches; `lectern worker scorm` runs it through the registry). */
export function startScormImportWorker(
  deps: JobWorkerDeps,
  opts: { concurrency?: number } = {},
): Promise<JobWorkerHandle> {
  return runJobWorker(deps, {
    ...scormImportJob,
    concurrency: opts.concurrency ?? scormImportJob.concurrency,
  });
}
