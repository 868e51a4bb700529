/**
 * Synchronous commands (DESIGN.md "Synchronous commands", docs/jobs.md): the API half
 * (`runSyncJob`: job row → bus → wait → answer from the row), the worker half
 * (`runJobWorker`: atomic claim, blobs read, handler and result in one transaction, done
 * notice) and the typed registry of one worker per job kind, checked at boot.
 * Every worker that answers an HTTP request — CSV, SCORM, certificates, media — uses it.
 */
export {
  runSyncJob,
  jobSubject,
  jobBlobKey,
  type SyncJobDeps,
  type SyncJobOptions,
  type SyncJobOutcome,
  type JobBlob,
  type BufferJobBlob,
  type StreamJobBlob,
  spoolToFile,
} from './run-sync-job.js';
export {
  runJobWorker,
  processJob,
  JOB_DEFAULTS,
  type ClaimedJob,
  type JobContext,
  type JobDeps,
  type JobWorkerDeps,
  type JobHandler,
  type JobOutcome,
  type JobWorkerHandle,
  type JobWorkerOptions,
} from './job-worker.js';
export { toStoredError, fromStoredError, jobTimeoutError, type StoredJobError } from './job-errors.js';
export {
  checkJobRegistry,
  jobWorkersOf,
  JobRegistryError,
  type JobRegistry,
  type RegisteredJobWorker,
} from './registry.js';
