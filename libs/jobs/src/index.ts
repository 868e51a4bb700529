/**
 * Jobs (DESIGN.md "Synchronous commands", docs/jobs.md): the API half of a synchronous
 * command (`runSyncJob`: job row → bus → wait → answer from the row) and of an asynchronous
 * job (`submitJob`: job row → bus → the queued job at once), the worker half (`runJobWorker`:
 * atomic claim, blobs read, handler and result in one transaction, done notice), the
 * sweeper that ends asynchronous jobs past their deadline or attempts, and the typed
 * registry of one worker per job kind, checked at boot.
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
  runJobWorkerOf,
  processJob,
  processJobOf,
  JOB_DEFAULTS,
  type ClaimedJob,
  type ClaimedJobOf,
  type JobContext,
  type JobDeps,
  type JobWorkerDeps,
  type JobHandler,
  type JobHandlerOf,
  type JobOutcome,
  type JobWorkerHandle,
  type JobWorkerOptions,
  type JobWorkerOptionsOf,
} from './job-worker.js';
export {
  jobKindSpec,
  defineAsyncJobKind,
  type JobKindSpec,
  type AsyncJobKindSpec,
  type AsyncJobLimits,
} from './job-kind.js';
export {
  submitJob,
  submitJobOf,
  recordJob,
  readJob,
  type JobRecord,
  type JobStatus,
  type SubmitJobDeps,
  type SubmitJobOptions,
} from './submit-job.js';
export {
  startJobSweeper,
  sweepDueStatement,
  sweepJobs,
  SWEEPER_DEFAULTS,
  type JobSweeper,
  type JobSweeperDeps,
  type JobSweeperOptions,
  type SweepOutcome,
} from './job-sweeper.js';
export { toStoredError, fromStoredError, jobTimeoutError, type StoredJobError } from './job-errors.js';
export {
  checkJobRegistry,
  jobWorkersOf,
  JobRegistryError,
  type JobRegistry,
  type RegisteredJobWorker,
} from './registry.js';
