/**
 * The job registry and the worker kinds: which handler serves each job kind of @lectern/contracts, and which
 * worker kind (`lectern worker <kind>`) hosts it. The one place a kind is bound to its handler and its process; a
 * job kind without exactly one entry does not compile (and, for a registry built at run time, does not start:
 * `checkJobRegistry`). A new job kind adds its entry to `JOBS`; a new worker kind adds its entry to `WORKER_KINDS`.
 *
 * Built, not static: some handlers need settings and ports of their own (the certificate renderer its fonts,
 * logo limits and the object store it writes PDFs to), which the job worker's deps do not carry.
 */
import { BaseEnv, parseEnv, type ConfigPiece } from '@lectern/config';
import { JOB_KINDS, type JobKind } from '@lectern/contracts';
import {
  checkJobRegistry,
  runJobWorker,
  type JobRegistry,
  type JobWorkerDeps,
  type JobWorkerHandle,
  type JobWorkerOptions,
} from '@lectern/jobs';
import type { Storage } from '@lectern/storage';
import { csvImportJob } from '@lectern/csv-import';
import {
  CERTIFICATE_WORKER_ENV,
  certificateRenderJob,
  certificateRenderSettings,
  missingFonts,
} from '@lectern/certificates';
import { SCORM_WORKER_ENV, scormExportJob, scormExportSettings, scormImportJob } from '@lectern/scorm';
import { mediaProcessJob } from '@lectern/media';
import { ensureInstallationSecretKey } from '@lectern/secrets';
import { GENERATION_WORKER_ENV, generationJob, generationProviderProblem } from '@lectern/generation';
import { WebhookEnv, startWebhookWorker } from '@lectern/webhooks';
import type { Metrics } from '@lectern/metrics';

/**
 * What the handlers use beyond a job's transaction: the object store the certificate renderer writes PDFs to
 * (`put`) and the SCORM export streams packages into from disk (`putFile`).
 */
export interface JobRegistryPorts {
  storage: Pick<Storage, 'put' | 'putFile' | 'getToFile'>;
}

type Env = Record<string, string | undefined>;

/** The worker kinds `lectern worker` knows, in the order `lectern start` starts them. */
export const WORKER_KIND_NAMES = ['webhook', 'csv', 'certificate', 'scorm', 'generation', 'media'] as const;
export type WorkerKindName = (typeof WORKER_KIND_NAMES)[number];

/**
 * Every job kind: the worker kind that hosts it, the configuration pieces its entry reads and how the entry is
 * built. Typed over `JobKind`, so a job kind with no host does not compile.
 */
const JOBS: {
  [K in JobKind]: {
    host: WorkerKindName;
    env: readonly ConfigPiece[];
    entry(env: Env, ports: JobRegistryPorts): JobWorkerOptions<K>;
  };
} = {
  'csv.import': { host: 'csv', env: [], entry: () => csvImportJob },
  'certificate.render': {
    host: 'certificate',
    env: CERTIFICATE_WORKER_ENV,
    // The faces are checked now (a machine without them fails here, with the fix in the message) and read on
    // the first render.
    entry: (env, ports) =>
      certificateRenderJob({
        ...certificateRenderSettings(parseEnv(CERTIFICATE_WORKER_ENV, env)),
        storage: ports.storage,
      }),
  },
  'scorm.export': {
    host: 'scorm',
    env: SCORM_WORKER_ENV,
    entry: (env, ports) =>
      scormExportJob({ ...scormExportSettings(parseEnv(SCORM_WORKER_ENV, env)), storage: ports.storage }),
  },
  'scorm.import': { host: 'scorm', env: [], entry: () => scormImportJob },
  'generation.run': {
    host: 'generation',
    env: GENERATION_WORKER_ENV,
    entry: (env) => {
      const cfg = parseEnv(GENERATION_WORKER_ENV, env);
      return generationJob({ cfg, allowPrivate: cfg.ALLOW_PRIVATE_NETWORKS });
    },
  },
  'media.process': {
    host: 'media',
    env: [],
    entry: (_env, ports) => mediaProcessJob({ storage: ports.storage }),
  },
};

/**
 * Every job kind's worker, configured from `env` (each entry parses only the variables it reads; a bad one
 * throws `ConfigError`). Cheap to build: the certificate fonts are checked now and read on the first render.
 */
export function jobRegistry(env: Env, ports: JobRegistryPorts): JobRegistry {
  const entry = <K extends JobKind>(kind: K): JobWorkerOptions<K> => JOBS[kind].entry(env, ports);
  const registry = Object.fromEntries(JOB_KINDS.map((kind) => [kind, entry(kind)]));
  checkJobRegistry(registry);
  return registry;
}

/** The job kinds a worker kind hosts (none for the webhook worker). */
export function jobKindsOf(kind: WorkerKindName): JobKind[] {
  return JOB_KINDS.filter((k) => JOBS[k].host === kind);
}

/** What a worker kind is started with: the process's connections, and the object store when it asked for one. */
export interface WorkerKindDeps extends Omit<JobWorkerDeps, 'storage' | 'metrics'> {
  metrics?: Metrics;
  storage?: Storage;
}

export interface RunningWorkerKind {
  /** Stop pulling, let what is in flight finish. */
  stop(): Promise<void>;
}

export interface WorkerKind {
  name: WorkerKindName;
  /** One line for `lectern worker --help` and the docs. */
  description: string;
  /** The configuration pieces it reads beyond the connections (Base, Db, Bus, Metrics, Worker). */
  env: readonly ConfigPiece[];
  /** Whether it reads or writes the object store (the host opens one only when a chosen kind does). */
  storage: boolean;
  /**
   * What can be checked without connecting (files it needs, settings it derives); throws with the fix in the
   * message. `start` makes the same checks before it connects anything; `lectern doctor` runs this alone.
   */
  preflight(env: Env): void;
  /**
   * What this kind would run without (it still starts), each with the fix: shown in /readyz, the start log and
   * `lectern doctor`. Checked without connecting.
   */
  warnings?(env: Env): string[];
  /** Starts it on the host's connections; throws when it cannot (the host reports that as the kind's problem). */
  start(env: Env, deps: WorkerKindDeps): Promise<RunningWorkerKind>;
}

/** A worker kind that runs job kinds: one durable consumer per job kind, all on the host's connections. */
function jobHost(name: WorkerKindName, description: string): WorkerKind {
  const kinds = jobKindsOf(name);
  const entries = (env: Env, ports: JobRegistryPorts) =>
    kinds.map(<K extends JobKind>(k: K): JobWorkerOptions<K> => JOBS[k].entry(env, ports));
  return {
    name,
    description,
    env: [...new Set(kinds.flatMap((k) => JOBS[k].env))],
    storage: true,
    preflight(env) {
      entries(env, { storage: { put: notOpen, putFile: notOpen, getToFile: notOpen } });
    },
    async start(env, deps) {
      const { storage } = deps;
      if (!storage) throw new Error(`the ${name} worker needs the object store`);
      const defs = entries(env, { storage });
      const running: JobWorkerHandle[] = [];
      try {
        for (const def of defs) running.push(await runJobWorker({ ...deps, storage }, def));
      } catch (err) {
        await Promise.all(running.map((r) => r.stop()));
        throw err;
      }
      return { stop: async () => void (await Promise.all(running.map((r) => r.stop()))) };
    },
  };
}

/** A script whose faces are missing: certificates that need it answer 503 naming the package; the rest render. */
function certificateFontWarnings(dir: string): string[] {
  return missingFonts(dir)
    .filter((m) => m.script !== 'latin')
    .map(
      (m) =>
        `${m.package} is not installed (no ${m.script} faces in ${dir}): certificates that need them answer 503; ` +
        `apt-get install ${m.package}, then restart the worker`,
    );
}

const notOpen = (): never => {
  throw new Error('the object store is not open in a preflight');
};

const WEBHOOK_ENV = [BaseEnv.pick({ NODE_ENV: true, DATA_DIR: true }), WebhookEnv] as const;

/**
 * Every worker kind. Adding one: an entry here (and its name in `WORKER_KIND_NAMES`), a deploy entry
 * (deploy/k8s, deploy/docker-compose.yml: `node dist/apps/cli/src/main.js worker <kind>`) and a docs row
 * (docs/architecture.md, docs/operations.md).
 */
export const WORKER_KINDS: { [N in WorkerKindName]: WorkerKind } = {
  webhook: {
    name: 'webhook',
    description: 'event fan-out and signed webhook deliveries (PostgreSQL-scheduled retries)',
    env: [WebhookEnv],
    storage: false,
    preflight(env) {
      parseEnv(WEBHOOK_ENV, env);
    },
    async start(env, deps) {
      // Production without WEBHOOK_SECRET_KEY stops here with the fix in the message.
      const cfg = await ensureInstallationSecretKey(parseEnv(WEBHOOK_ENV, env));
      return startWebhookWorker({ ...deps, cfg });
    },
  },
  csv: jobHost('csv', 'CSV course imports (csv.import)'),
  certificate: {
    ...jobHost('certificate', 'certificate PDFs (certificate.render, pdfkit and the Noto fonts)'),
    warnings: (env) => certificateFontWarnings(parseEnv(CERTIFICATE_WORKER_ENV, env).CERTIFICATE_FONT_DIR),
  },
  scorm: jobHost('scorm', 'SCORM export and import (scorm.export, scorm.import)'),
  generation: {
    ...jobHost(
      'generation',
      'AI course drafts (generation.run, an OpenAI-compatible chat-completions model)',
    ),
    // Without a provider the worker still starts (the API refuses POST /generate with 503 meanwhile).
    warnings: (env) => {
      const problem = generationProviderProblem(parseEnv(GENERATION_WORKER_ENV, env));
      return problem ? [problem] : [];
    },
  },
  media: jobHost(
    'media',
    'uploaded media processing (media.process: sharp variants, ffprobe/ffmpeg posters)',
  ),
};

/** A name given to `lectern worker` or LECTERN_WORKERS that is no worker kind. */
export class UnknownWorkerKindError extends Error {
  constructor(readonly names: string[]) {
    super(
      `unknown worker kind${names.length > 1 ? 's' : ''}: ${names.join(', ')}; ` +
        `the kinds are: ${WORKER_KIND_NAMES.join(', ')}`,
    );
    this.name = 'UnknownWorkerKindError';
  }
}

/** The kinds named in `names` (each may be a comma-separated list), once each, in the order given. */
export function workerKindsNamed(names: readonly string[]): WorkerKind[] {
  const wanted = names
    .flatMap((n) => n.split(','))
    .map((n) => n.trim())
    .filter(Boolean);
  const known = new Set<string>(WORKER_KIND_NAMES);
  const unknown = wanted.filter((n) => !known.has(n));
  if (unknown.length > 0) throw new UnknownWorkerKindError(unknown);
  return [...new Set(wanted as WorkerKindName[])].map((n) => WORKER_KINDS[n]);
}
