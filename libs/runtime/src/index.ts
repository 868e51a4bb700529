/**
 * What a process's main.ts uses to wire itself: the connections (`createRuntime`, `openStorage`), shutdown on
 * signals, and the probes shared by the API and the workers. Libraries never take a `Runtime`: they declare the
 * ports they use.
 */
export {
  createRuntime,
  openStorage,
  closeRuntime,
  onShutdown,
  type Runtime,
  type RuntimeConfig,
  type RuntimeOptions,
} from './runtime.js';
export {
  checkReadiness,
  readinessBody,
  type KindReadiness,
  type ReadinessCheck,
  type ReadinessDeps,
  type Readiness,
} from './readiness.js';
export {
  startWorkerHttp,
  type WorkerHttp,
  type WorkerHttpDeps,
  type WorkerHttpOptions,
} from './worker-http.js';
