/**
 * The job registry: which worker serves each job kind of @lectern/contracts. The one place a kind is bound to its
 * handler; `lectern start` runs every entry, and a kind without exactly one entry does not compile (and, for a
 * registry built at run time, does not start: `checkJobRegistry`). A new kind adds its entry here.
 *
 * Built, not static: some handlers need settings and ports of their own (the certificate renderer its fonts,
 * logo limits and the object store it writes PDFs to), which the job worker's deps do not carry.
 */
import { parseEnv } from '@lectern/config';
import type { JobKind } from '@lectern/contracts';
import {
  runJobWorker,
  type JobRegistry,
  type JobWorkerOptions,
  type RegisteredJobWorker,
} from '@lectern/jobs';
import type { Storage } from '@lectern/storage';
import { csvImportJob } from '@lectern/csv-import';
import { scormImportJob } from '@lectern/scorm';
import {
  CERTIFICATE_WORKER_ENV,
  certificateRenderJob,
  certificateRenderSettings,
} from '@lectern/certificates';
import { SCORM_WORKER_ENV, scormExportJob, scormExportSettings } from '@lectern/scorm';

/**
 * What the handlers use beyond a job's transaction: the object store the certificate renderer writes PDFs to
 * (`put`) and the SCORM export streams packages into from disk (`putFile`).
 */
export interface JobRegistryPorts {
  storage: Pick<Storage, 'put' | 'putFile'>;
}

/**
 * Every job kind's worker, configured from `env` (each entry parses only the variables it reads; a bad one
 * throws `ConfigError`). Cheap to build: the certificate fonts are checked now and read on the first render.
 */
export function jobRegistry(env: Record<string, string | undefined>, ports: JobRegistryPorts): JobRegistry {
  const certificates = parseEnv(CERTIFICATE_WORKER_ENV, env);
  return {
    'csv.import': csvImportJob,
    'certificate.render': certificateRenderJob({
      ...certificateRenderSettings(certificates),
      storage: ports.storage,
    }),
    ...scormJobRegistry(env, ports),
  };
}

/** The SCORM kinds (`scorm.*`): apps/scorm-worker runs exactly these. */
export type ScormJobKind = Extract<JobKind, `scorm.${string}`>;
export type ScormJobRegistry = { [K in ScormJobKind]: JobWorkerOptions<K> };

/**
 * The entries of every `scorm.*` kind, configured from the SCORM variables only, so the scorm worker parses no
 * other worker's settings (and never fails on, say, missing certificate fonts).
 */
export function scormJobRegistry(
  env: Record<string, string | undefined>,
  ports: JobRegistryPorts,
): ScormJobRegistry {
  const scorm = parseEnv(SCORM_WORKER_ENV, env);
  return {
    'scorm.export': scormExportJob({ ...scormExportSettings(scorm), storage: ports.storage }),
    'scorm.import': scormImportJob,
  };
}

/** One startable worker per `scorm.*` kind (apps/scorm-worker). */
export function scormJobWorkers(
  env: Record<string, string | undefined>,
  ports: JobRegistryPorts,
): RegisteredJobWorker[] {
  const registry = scormJobRegistry(env, ports);
  const entry = <K extends ScormJobKind>(kind: K): RegisteredJobWorker => {
    const def: JobWorkerOptions<K> = registry[kind];
    return { kind, app: def.app, start: (deps) => runJobWorker(deps, def) };
  };
  return (Object.keys(registry) as ScormJobKind[]).map((kind) => entry(kind));
}
