import {
  ApiEnv,
  BaseEnv,
  BusEnv,
  CertificateEnv,
  DbEnv,
  JobsEnv,
  GenerationEnv,
  MediaEnv,
  MetricsEnv,
  ScormEnv,
  StorageEnv,
  type EnvOf,
} from '@lectern/config';
import { PlayerEnv } from '@lectern/api';
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
  GenerationEnv,
  MediaEnv,
  WebhookEnv,
  PlayerEnv,
  CertificateEnv,
  ScormEnv,
] as const;
export type StartConfig = EnvOf<typeof START_ENV>;
