import type { MigrationObject } from '@mikro-orm/core';
import { Migration20261121000001_spine } from './Migration20261121000001_spine.js';
import { Migration20261121000100_webhooks } from './Migration20261121000100_webhooks.js';
import { Migration20261121000200_authoring } from './Migration20261121000200_authoring.js';
import { Migration20261121000300_rate_counter } from './Migration20261121000300_rate_counter.js';
import { Migration20261123000400_learner_runs } from './Migration20261123000400_learner_runs.js';
import { Migration20261123000500_issued_certificates } from './Migration20261123000500_issued_certificates.js';
import { Migration20261123000600_webhook_health } from './Migration20261123000600_webhook_health.js';
import { Migration20261123000700_certificate_completion_fk } from './Migration20261123000700_certificate_completion_fk.js';
import { Migration20261126000800_async_jobs } from './Migration20261126000800_async_jobs.js';
import { Migration20261126000900_asserted_learners } from './Migration20261126000900_asserted_learners.js';
import { Migration20261127002000_idempotency_keys } from './Migration20261127002000_idempotency_keys.js';
import { Migration20261127006000_course_completion } from './Migration20261127006000_course_completion.js';
import { Migration20261128120000_media_job_failed } from './Migration20261128120000_media_job_failed.js';
import { Migration20261129000100_webhook_leases_idx } from './Migration20261129000100_webhook_leases_idx.js';
import { Migration20261130000100_outbox_unpublished_order } from './Migration20261130000100_outbox_unpublished_order.js';
import { Migration20261130000200_jobs_open_deadline_idx } from './Migration20261130000200_jobs_open_deadline_idx.js';
import { Migration20261201000100_deliveries_workspace_fk } from './Migration20261201000100_deliveries_workspace_fk.js';
import { Migration20261201000200_attempts_without_fk_check } from './Migration20261201000200_attempts_without_fk_check.js';
import { Migration20261202000100_claims_hot } from './Migration20261202000100_claims_hot.js';
import { Migration20261126001000_player_access } from './Migration20261126001000_player_access.js';
import { Migration20261127001000_media } from './Migration20261127001000_media.js';

/**
 * Every migration, in order. Listed explicitly (no directory scan) so the same list
 * works from TypeScript sources under tsx and from the compiled build.
 * Add new migrations at the end; never edit one that has shipped.
 */
export const migrationsList: MigrationObject[] = [
  { name: 'Migration20261121000001_spine', class: Migration20261121000001_spine },
  { name: 'Migration20261121000100_webhooks', class: Migration20261121000100_webhooks },
  { name: 'Migration20261121000200_authoring', class: Migration20261121000200_authoring },
  { name: 'Migration20261121000300_rate_counter', class: Migration20261121000300_rate_counter },
  { name: 'Migration20261123000400_learner_runs', class: Migration20261123000400_learner_runs },
  {
    name: 'Migration20261123000500_issued_certificates',
    class: Migration20261123000500_issued_certificates,
  },
  { name: 'Migration20261123000600_webhook_health', class: Migration20261123000600_webhook_health },
  {
    name: 'Migration20261123000700_certificate_completion_fk',
    class: Migration20261123000700_certificate_completion_fk,
  },
  { name: 'Migration20261126000800_async_jobs', class: Migration20261126000800_async_jobs },
  {
    name: 'Migration20261126000900_asserted_learners',
    class: Migration20261126000900_asserted_learners,
  },
  { name: 'Migration20261126001000_player_access', class: Migration20261126001000_player_access },
  { name: 'Migration20261127001000_media', class: Migration20261127001000_media },
  { name: 'Migration20261127002000_idempotency_keys', class: Migration20261127002000_idempotency_keys },
  {
    name: 'Migration20261127006000_course_completion',
    class: Migration20261127006000_course_completion,
  },
  { name: 'Migration20261128120000_media_job_failed', class: Migration20261128120000_media_job_failed },
  { name: 'Migration20261129000100_webhook_leases_idx', class: Migration20261129000100_webhook_leases_idx },
  {
    name: 'Migration20261130000100_outbox_unpublished_order',
    class: Migration20261130000100_outbox_unpublished_order,
  },
  {
    name: 'Migration20261130000200_jobs_open_deadline_idx',
    class: Migration20261130000200_jobs_open_deadline_idx,
  },
  {
    name: 'Migration20261201000100_deliveries_workspace_fk',
    class: Migration20261201000100_deliveries_workspace_fk,
  },
  {
    name: 'Migration20261201000200_attempts_without_fk_check',
    class: Migration20261201000200_attempts_without_fk_check,
  },
  {
    name: 'Migration20261202000100_claims_hot',
    class: Migration20261202000100_claims_hot,
  },
];
