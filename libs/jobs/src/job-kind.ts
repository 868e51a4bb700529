import type { z } from 'zod';
import {
  JOB_SPECS,
  jobCommandOf,
  type JobCommand,
  type JobInput,
  type JobKind,
  type JobResult,
} from '@lectern/contracts';

/** The deadline and attempts of an asynchronous kind (docs/jobs.md "Asynchronous jobs"). */
export interface AsyncJobLimits {
  mode: 'async';
  /** From the job's creation to the sweeper failing it (`timeout`); the handler's signal fires then too. */
  deadlineMs: number;
  /** Claims allowed, the first included. */
  maxAttempts: number;
}

/**
 * What the harness needs to know of a kind: its name, mode and schemas. The production kinds get theirs from
 * `JOB_SPECS` (`jobKindSpec`); the lower layer (`processJobOf`, `runJobWorkerOf`, `submitJobOf`) takes any such
 * object, so a kind can be defined next to what uses it (a test's) without entering the production list.
 */
export type JobKindSpec<N extends string, In, Out> = {
  kind: N;
  /** `{jobId, workspaceId, kind}` with `kind` this kind: a command for another kind on its subject is poison. */
  command: z.ZodType<JobCommand>;
  input: z.ZodType<In>;
  result: z.ZodType<Out>;
} & ({ mode: 'sync' } | AsyncJobLimits);

export type AsyncJobKindSpec<N extends string, In, Out> = JobKindSpec<N, In, Out> & AsyncJobLimits;

/**
 * `JOB_SPECS` seen through the lower layer's shape. Checked kind by kind here, so indexing it with a generic kind
 * gives that kind's own input and result types (indexing `JOB_SPECS` itself gives the union of all of them).
 */
const PRODUCTION_KINDS: { [K in JobKind]: JobKindSpec<K, JobInput<K>, JobResult<K>> } = JOB_SPECS;

/** The spec of a production kind, typed by `JOB_SPECS`. */
export function jobKindSpec<K extends JobKind>(kind: K): JobKindSpec<K, JobInput<K>, JobResult<K>> {
  return PRODUCTION_KINDS[kind];
}

/** An asynchronous kind outside `JOB_SPECS`, its command schema built from its name (tests define theirs). */
export function defineAsyncJobKind<N extends string, In, Out>(def: {
  kind: N;
  input: z.ZodType<In>;
  result: z.ZodType<Out>;
  deadlineMs: number;
  maxAttempts: number;
}): AsyncJobKindSpec<N, In, Out> {
  return { ...def, mode: 'async', command: jobCommandOf(def.kind) };
}
