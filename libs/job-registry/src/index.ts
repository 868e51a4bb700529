/**
 * The job registry: which worker serves each job kind of @lectern/contracts. The one place a kind is bound to its
 * handler; `lectern start` runs every entry, and a kind without exactly one entry does not compile (and, for a
 * registry built at run time, does not start: `checkJobRegistry`). A new kind adds its entry here.
 */
import type { JobRegistry } from '@lectern/jobs';
import { csvImportJob } from '@lectern/csv-import';

export const JOB_REGISTRY: JobRegistry = {
  'csv.import': csvImportJob,
};
