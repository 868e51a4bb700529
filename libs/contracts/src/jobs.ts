/**
 * Synchronous commands (DESIGN.md "Synchronous commands"): the bus message, and
 * for each job kind the schema of its input and of its result. `JOB_SPECS` is
 * the one typed list of every job kind: `runSyncJob` and `runJobWorker`
 * (libs/jobs) are typed by it, and a kind without a row does not compile.
 * docs/jobs.md describes the path.
 */
import { z } from 'zod';
import { Course, TITLE_MAX } from './courses.js';

/**
 * What travels on `<prefix>.jobs.<kind>` (msg id = job id). Deliberately small:
 * the job row is the truth for the input; large inputs are in the object store
 * under `jobs/<jobId>/…`.
 */
export const JobCommand = z
  .object({
    jobId: z.string().min(1),
    workspaceId: z.string().min(1),
    kind: z.string().min(1),
  })
  .meta({ id: 'JobCommand' });
export type JobCommand = z.infer<typeof JobCommand>;

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

// -------------------------------------------------------------------- the list

export interface JobSpec<I extends z.ZodType, R extends z.ZodType> {
  input: I;
  result: R;
}

/** Every synchronous job kind. A kind is `<capability>.<verb>`; its subject is `<prefix>.jobs.<kind>`. */
export const JOB_SPECS = {
  'csv.import': { input: CsvImportJobInput, result: CsvImportJobResult },
} satisfies Record<string, JobSpec<z.ZodType, z.ZodType>>;

export type JobKind = keyof typeof JOB_SPECS;
export type JobInput<K extends JobKind> = z.infer<(typeof JOB_SPECS)[K]['input']>;
export type JobResult<K extends JobKind> = z.infer<(typeof JOB_SPECS)[K]['result']>;
