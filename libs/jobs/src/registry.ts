import { JOB_KINDS, type JobKind } from '@lectern/contracts';
import {
  runJobWorker,
  type JobWorkerDeps,
  type JobWorkerHandle,
  type JobWorkerOptions,
} from './job-worker.js';

/**
 * Exactly one worker (handler and consumer settings) per job kind. Typed, so a kind with no
 * entry, an entry for no kind, or an entry whose `kind` is another key's does not compile.
 */
export type JobRegistry = { [K in JobKind]: JobWorkerOptions<K> };

/** The registry disagrees with the job kinds: start refuses to run. */
export class JobRegistryError extends Error {
  constructor(readonly problems: string[]) {
    super(
      `The job registry does not match the job kinds of @lectern/contracts (JOB_SPECS):\n` +
        problems.map((p) => `  - ${p}`).join('\n'),
    );
    this.name = 'JobRegistryError';
  }
}

/**
 * The boot-time half of the check, for what the compiler cannot see (a registry built at run
 * time, a cast): every kind has one entry, with that kind, a handler and its own durable name.
 */
export function checkJobRegistry(
  registry: Readonly<Record<string, unknown>>,
): asserts registry is JobRegistry {
  const problems: string[] = [];
  const kinds = new Set<string>(JOB_KINDS);
  const apps = new Map<string, string>();
  for (const kind of JOB_KINDS) if (!Object.hasOwn(registry, kind)) problems.push(`no worker for "${kind}"`);
  for (const [key, value] of Object.entries(registry)) {
    if (!kinds.has(key)) {
      problems.push(`"${key}" is not a job kind`);
      continue;
    }
    const def = (value ?? {}) as Partial<JobWorkerOptions<JobKind>>;
    if (def.kind !== key) problems.push(`the entry for "${key}" says kind "${String(def.kind)}"`);
    if (typeof def.handler !== 'function') problems.push(`the entry for "${key}" has no handler function`);
    if (typeof def.app !== 'string' || def.app === '') {
      problems.push(`the entry for "${key}" has no durable consumer name (app)`);
    } else if (apps.has(def.app)) {
      problems.push(`"${key}" and "${apps.get(def.app)}" share the durable consumer "${def.app}"`);
    } else {
      apps.set(def.app, key);
    }
  }
  if (problems.length > 0) throw new JobRegistryError(problems);
}

export interface RegisteredJobWorker {
  kind: JobKind;
  /** The durable consumer name, which is also the worker's name in logs. */
  app: string;
  start(deps: JobWorkerDeps): Promise<JobWorkerHandle>;
}

/** One startable worker per job kind, after `checkJobRegistry`. */
export function jobWorkersOf(registry: JobRegistry): RegisteredJobWorker[] {
  checkJobRegistry(registry);
  const entry = <K extends JobKind>(kind: K): RegisteredJobWorker => {
    const def: JobWorkerOptions<K> = registry[kind];
    return { kind, app: def.app, start: (deps) => runJobWorker(deps, def) };
  };
  return JOB_KINDS.map((kind) => entry(kind));
}
