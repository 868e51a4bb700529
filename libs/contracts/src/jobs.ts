import { MediaProcessJobInput, MediaProcessJobResult } from './media.js';
/**
 * Jobs (DESIGN.md "Synchronous commands", docs/jobs.md "Asynchronous jobs"): the bus message, and
 * for each job kind its mode, the schema of its command, its input and its result.
 * `JOB_SPECS` is the one typed list of every job kind (`JobKind` is its keys):
 * `runSyncJob` and `runJobWorker` (libs/jobs) are typed by it, and the job
 * registry (libs/job-registry) must hold exactly one worker per kind, or it does
 * not compile. docs/jobs.md describes the path.
 */
import { z } from 'zod';
import { Course, TITLE_MAX } from './courses.js';
import { CertificateRenderInput, CertificateRenderResult } from './certificates.js';
import { GenerationJobInput, GenerationJobResult } from './generation.js';

/**
 * What travels on `<prefix>.jobs.<kind>` (msg id = job id), whatever the kind.
 * Deliberately small: the job row is the truth for the input; large inputs are
 * in the object store under `jobs/<jobId>/…`.
 */
export const JobCommand = z
  .object({
    jobId: z.string().min(1),
    workspaceId: z.string().min(1),
    kind: z.string().min(1),
  })
  .meta({ id: 'JobCommand' });
export type JobCommand = z.infer<typeof JobCommand>;

/** The command of one kind: `kind` is that kind, so a command on another kind's subject fails its schema. */
export const jobCommandOf = <K extends string>(kind: K) =>
  z.object({ jobId: z.string().min(1), workspaceId: z.string().min(1), kind: z.literal(kind) });

// ------------------------------------------------------------------- csv.import

/**
 * One unreadable CSV row (docs/csv-import.md "Issues"). `row` is the physical
 * line where the row starts; `path` (`["row", <line>]`) and `code`/`message`
 * make the item a SPEC.md validation issue as well, so the 201 list and the
 * 400 list have the same shape.
 */
export const CsvImportIssue = z
  .object({
    row: z
      .number()
      .int()
      .min(1)
      .meta({ description: 'Line in the file where the row starts (the header is line 1)' }),
    code: z
      .string()
      .meta({ description: 'e.g. unknown_type, missing_options, too_many_rows (docs/csv-import.md)' }),
    path: z.tuple([z.literal('row'), z.number().int()]).meta({ description: '["row", <line>]' }),
    message: z.string(),
  })
  .meta({ id: 'CsvImportIssue' });
export type CsvImportIssue = z.infer<typeof CsvImportIssue>;

export const CsvImportQuery = z.object({
  title: z
    .string({ error: 'must be given once' })
    .trim()
    .min(1, { error: 'must not be empty; leave it out to use the first screen title' })
    .max(TITLE_MAX, { error: `must be at most ${TITLE_MAX} characters` })
    .optional()
    .meta({ description: 'Course title; default: the title of the first screen' }),
});

/** Job input of `csv.import`; the CSV bytes are the blob `csv`. */
export const CsvImportJobInput = z.object({ title: z.string().nullable() });
export type CsvImportJobInput = z.infer<typeof CsvImportJobInput>;

/** Written in the job row in the same transaction as the course. */
export const CsvImportJobResult = z.object({ courseId: z.string(), issues: z.array(CsvImportIssue) });
export type CsvImportJobResult = z.infer<typeof CsvImportJobResult>;

/** 201 of POST /courses/import/csv: `issues` sits next to `data`, not inside the course. */
export const CsvImportResponse = z
  .object({
    data: Course,
    issues: z
      .array(CsvImportIssue)
      .meta({ description: 'Rows that could not be read and were skipped; [] when none' }),
  })
  .meta({ id: 'CsvImportResponse' });

/** 400 of POST /courses/import/csv: the Error body whose `issues` are CSV row issues. */
export const CsvImportError = z
  .object({
    error: z.literal('invalid_request'),
    message: z.string(),
    issues: z.array(CsvImportIssue),
    limit: z
      .number()
      .int()
      .optional()
      .meta({ description: 'Present when the file has more data rows than the limit (2,000)' }),
    issuesOmitted: z
      .number()
      .int()
      .optional()
      .meta({ description: 'How many issues past the first 100 were left out' }),
  })
  .meta({ id: 'CsvImportError' });

// ------------------------------------------------------------------ scorm.export

export const SCORM_VERSIONS = ['scorm2004', 'scorm12'] as const;
export type ScormVersion = (typeof SCORM_VERSIONS)[number];

/** Query of GET /courses/:id/scorm (docs/scorm.md "Export"). */
export const ScormExportQuery = z.object({
  version: z
    .enum(SCORM_VERSIONS, { error: 'must be scorm2004 or scorm12' })
    .default('scorm2004')
    .meta({ description: 'SCORM 2004 4th edition (default) or SCORM 1.2' }),
  lang: z
    .string({ error: 'must be given once' })
    .trim()
    .min(1, { error: 'must not be empty; leave it out to export the source language' })
    .max(35, { error: 'must be a BCP-47 language tag' })
    .refine(
      (v) => {
        try {
          return Intl.getCanonicalLocales(v).length === 1;
        } catch {
          return false;
        }
      },
      { error: 'must be a BCP-47 language tag, e.g. fr or pt-BR' },
    )
    .optional()
    .meta({
      description: "A locale of the course (its own or a translation's); default: the source language",
    }),
  track: z
    .enum(['0', '1'], { error: 'must be 1 or 0' })
    .optional()
    .meta({ description: '1: the package also reports runs to this service through the Player API' }),
});
export type ScormExportQuery = z.infer<typeof ScormExportQuery>;

/** Job input of `scorm.export`. `lang` is canonical (or null: the source); `track` is minted by the API. */
export const ScormExportJobInput = z.object({
  courseId: z.string().min(1),
  version: z.enum(SCORM_VERSIONS),
  lang: z.string().min(1).nullable(),
  track: z.object({ apiBase: z.string().min(1), token: z.string().min(1) }).nullable(),
});
export type ScormExportJobInput = z.infer<typeof ScormExportJobInput>;

/** The package is in the object store under `key` (`jobs/<jobId>/<fileName>`); the API streams it out. */
export const ScormExportJobResult = z.object({
  key: z.string().min(1),
  bytes: z.number().int().min(0),
  fileName: z.string().min(1),
  /** Fonts and media left as remote URLs, with the reason (also in the worker log; docs/scorm.md "Fonts and media"). */
  warnings: z.array(z.string()),
});
export type ScormExportJobResult = z.infer<typeof ScormExportJobResult>;
// ------------------------------------------------------------------ scorm.import

/** One thing a SCORM import left behind or changed (docs/scorm.md "Warnings"). */
export const ScormImportWarning = z
  .object({
    code: z.string().meta({
      description:
        'Stable code, e.g. script_ignored, media_ignored, sequencing_ignored, item_unreadable, resource_missing (docs/scorm.md)',
    }),
    message: z.string(),
    path: z
      .string()
      .optional()
      .meta({ description: 'The package entry (or manifest item) the warning is about, when there is one' }),
  })
  .meta({ id: 'ScormImportWarning' });
export type ScormImportWarning = z.infer<typeof ScormImportWarning>;

export const SCORM_IMPORT_KINDS = ['roundtrip', 'salvaged'] as const;

export const ScormImportMeta = z
  .object({
    kind: z.enum(SCORM_IMPORT_KINDS).meta({
      description:
        '`roundtrip`: a package this service exported, restored exactly; `salvaged`: a third-party package, outline and text only',
    }),
    warnings: z
      .array(ScormImportWarning)
      .meta({ description: 'What was left behind or changed; [] when nothing was' }),
  })
  .meta({ id: 'ScormImportMeta' });
export type ScormImportMeta = z.infer<typeof ScormImportMeta>;

export const ScormImportQuery = z.object({
  title: z
    .string({ error: 'must be given once' })
    .trim()
    .min(1, { error: 'must not be empty; leave it out to use the package title' })
    .max(TITLE_MAX, { error: `must be at most ${TITLE_MAX} characters` })
    .optional()
    .meta({ description: "Course title; default: the package's own (course title, or the organization's)" }),
});

/** Job input of `scorm.import`; the package is the blob `upload.zip`, read by the worker as a file. */
export const ScormImportJobInput = z.object({ title: z.string().nullable() });
export type ScormImportJobInput = z.infer<typeof ScormImportJobInput>;

/** Written in the job row in the same transaction as the course. */
export const ScormImportJobResult = z.object({ courseId: z.string(), meta: ScormImportMeta });
export type ScormImportJobResult = z.infer<typeof ScormImportJobResult>;

/** 201 of POST /courses/import/scorm. */
export const ScormImportResponse = z
  .object({ data: Course, meta: ScormImportMeta })
  .meta({ id: 'ScormImportResponse' });

// -------------------------------------------------------------------- the list

/**
 * How a kind runs (docs/jobs.md): `sync` — the API waits for the worker and answers with the result (its
 * deadline is the caller's, per route); `async` — the API answers with the queued job at once, and the job
 * carries its own deadline (past it the sweeper fails it as `timeout`, and the handler's signal fires) and its
 * limit on claims (a worker that died counts as an attempt).
 */
export type JobMode = 'sync' | 'async';

export interface SyncJobSpec<I extends z.ZodType, R extends z.ZodType> {
  mode: 'sync';
  input: I;
  result: R;
}

export interface AsyncJobSpec<I extends z.ZodType, R extends z.ZodType> {
  mode: 'async';
  input: I;
  result: R;
  /** From the job's creation to the sweeper failing it, in ms: queueing time counts. */
  deadlineMs: number;
  /** Claims allowed, the first included; a delivery past it fails the job. */
  maxAttempts: number;
}

export type JobSpec<I extends z.ZodType, R extends z.ZodType> = SyncJobSpec<I, R> | AsyncJobSpec<I, R>;

type WithCommands<S> = {
  [K in keyof S & string]: S[K] & { kind: K; command: ReturnType<typeof jobCommandOf<K>> };
};

/** Adds each kind's name and command schema, built from the kind itself so the two cannot disagree. */
function withCommands<S extends Record<string, JobSpec<z.ZodType, z.ZodType>>>(specs: S): WithCommands<S> {
  const entries: Record<string, unknown> = Object.fromEntries(
    Object.entries(specs).map(([kind, spec]) => [kind, { ...spec, kind, command: jobCommandOf(kind) }]),
  );
  return entries as WithCommands<S>;
}

/** Every job kind. A kind is `<capability>.<verb>`; its subject is `<prefix>.jobs.<kind>`. */
export const JOB_SPECS = withCommands({
  'csv.import': { mode: 'sync', input: CsvImportJobInput, result: CsvImportJobResult },
  'certificate.render': { mode: 'sync', input: CertificateRenderInput, result: CertificateRenderResult },
  'scorm.export': { mode: 'sync', input: ScormExportJobInput, result: ScormExportJobResult },
  'scorm.import': { mode: 'sync', input: ScormImportJobInput, result: ScormImportJobResult },
  // The deadline is GENERATION_TIMEOUT_MS at run time (docs/generation.md); this is its default.
  'generation.run': {
    mode: 'async',
    input: GenerationJobInput,
    result: GenerationJobResult,
    deadlineMs: 120_000,
    maxAttempts: 3,
  },
  // An upload's processing (docs/media.md): 25 MB at most, well under a minute even on a busy machine.
  'media.process': {
    mode: 'async',
    input: MediaProcessJobInput,
    result: MediaProcessJobResult,
    deadlineMs: 5 * 60_000,
    maxAttempts: 3,
  },
});

/** The union of every job kind. */
export type JobKind = keyof typeof JOB_SPECS;
/** Every job kind, for the boot-time check of the job registry. */
export const JOB_KINDS = Object.freeze(Object.keys(JOB_SPECS)) as readonly JobKind[];
export type JobCommandOf<K extends JobKind> = z.infer<(typeof JOB_SPECS)[K]['command']>;
export type JobInput<K extends JobKind> = z.infer<(typeof JOB_SPECS)[K]['input']>;
export type JobResult<K extends JobKind> = z.infer<(typeof JOB_SPECS)[K]['result']>;
/** The kinds whose API answers at once (`submitJob`). */
export type AsyncJobKind = {
  [K in JobKind]: (typeof JOB_SPECS)[K]['mode'] extends 'async' ? K : never;
}[JobKind];
