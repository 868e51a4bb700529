import { ApiEnv, BaseEnv, BusEnv, DbEnv, JobsEnv, MetricsEnv, StorageEnv, type EnvOf } from '@lectern/config';
import { WebhookEnv } from '@lectern/webhooks';

/**
 * What `lectern start` reads: everything the API and every worker read, except WORKER_HTTP_PORT (in one process
 * the API serves /healthz, /readyz and /metrics).
 */
export const START_ENV = [
  BaseEnv,
  DbEnv,
  BusEnv,
  StorageEnv,
  MetricsEnv,
  ApiEnv,
  JobsEnv,
  WebhookEnv,
] as const;
export type StartConfig = EnvOf<typeof START_ENV>;
