/**
 * The job registry: which worker serves each job kind of @lectern/contracts. The one place a kind is bound to its
 * handler; `lectern start` runs every entry, and a kind without exactly one entry does not compile (and, for a
 * registry built at run time, does not start: `checkJobRegistry`). A new kind adds its entry here.
 *
 * Built, not static: some handlers need settings and ports of their own (the certificate renderer its fonts,
 * logo limits and the object store it writes PDFs to), which the job worker's deps do not carry.
 */
import { parseEnv } from '@lectern/config';
import type { JobRegistry } from '@lectern/jobs';
import type { Storage } from '@lectern/storage';
import { csvImportJob } from '@lectern/csv-import';
import { scormImportJob } from '@lectern/scorm';
import {
  CERTIFICATE_WORKER_ENV,
  certificateRenderJob,
  certificateRenderSettings,
} from '@lectern/certificates';

/** What the handlers use beyond a job's transaction: the object store the certificate renderer writes to. */
export interface JobRegistryPorts {
  storage: Pick<Storage, 'put'>;
}

/**
 * Every job kind's worker, configured from `env` (each entry parses only the variables it reads; a bad one
 * throws `ConfigError`). Cheap to build: the certificate fonts are checked now and read on the first render.
 */
export function jobRegistry(env: Record<string, string | undefined>, ports: JobRegistryPorts): JobRegistry {
  const certificates = parseEnv(CERTIFICATE_WORKER_ENV, env);
  return {
    'csv.import': csvImportJob,
    'scorm.import': scormImportJob,
    'certificate.render': certificateRenderJob({
      ...certificateRenderSettings(certificates),
      storage: ports.storage,
    }),
  };
}
