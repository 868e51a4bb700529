import type {
  ApiConfig,
  CertificateConfig,
  GenerationConfig,
  JobsConfig,
  MediaConfig,
  MetricsConfig,
} from '@lectern/config';
import type { PlayerConfig } from './player-env.js';
import type { Logger } from '@lectern/log';
import type { MikroORM } from '@lectern/db';
import type { Bus } from '@lectern/bus';
import type { Storage } from '@lectern/storage';
import type { Metrics } from '@lectern/metrics';
import type { WebhookConfig } from '@lectern/webhooks';
import type { Relay } from '@lectern/events';
import type { KindReadiness } from '@lectern/runtime';

/** The variables the API reads itself (its main.ts also reads what its connections need). */
export type ApiAppConfig = ApiConfig &
  MetricsConfig &
  JobsConfig &
  GenerationConfig &
  MediaConfig &
  WebhookConfig &
  PlayerConfig &
  Pick<CertificateConfig, 'VERIFY_LOOKUPS_PER_MINUTE' | 'CREDENTIAL_SIGNING_KEY' | 'CREDENTIAL_RETIRED_KEYS'>;

/** What the API app is built from: its settings and the connections main.ts opened. */
export interface ApiDeps {
  cfg: ApiAppConfig;
  log: Logger;
  orm: MikroORM;
  bus: Bus;
  storage: Storage;
  /** Absent: nothing is counted and /metrics answers 404. */
  metrics?: Metrics;
  /** The worker kinds running in the same process (`lectern start`): /readyz reports each. */
  kinds?: () => Record<string, KindReadiness>;
}

/** What route modules may ask for; each takes the few fields it uses (`Pick<RouteDeps, 'orm'>`). */
export interface RouteDeps extends ApiDeps {
  /** Kicked after a write that added outbox rows, so the events leave at once. */
  relay: Relay;
}
