import { z } from 'zod';
// Pure parsers (no I/O): the webhook settings are checked with the rest of the configuration.
import { parseRetryDelays } from '@lectern/webhooks';
import { parseEncryptionKey } from '@lectern/webhooks';

/**
 * Configuration comes from environment variables only, parsed once per process.
 * Small pieces per concern; an app merges what it needs. Every default works on a
 * developer machine with PostgreSQL and NATS on loopback.
 */
const bool = z
  .enum(['true', 'false', '1', '0', 'yes', 'no'])
  .transform((v) => v === 'true' || v === '1' || v === 'yes');

export const BaseEnv = z.object({
  NODE_ENV: z.enum(['development', 'test', 'production']).default('development'),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  DATA_DIR: z.string().min(1).default('./var'),
});

export const DbEnv = z.object({
  DATABASE_URL: z
    .string()
    .regex(/^postgres(ql)?:\/\//, 'must be a postgres:// URL')
    .default('postgres://postgres@127.0.0.1:5432/lectern'),
  DB_POOL_MAX: z.coerce.number().int().min(1).max(200).default(10),
});

export const BusEnv = z.object({
  NATS_URL: z.string().min(1).default('nats://127.0.0.1:4222'),
  BUS_PREFIX: z
    .string()
    .regex(/^[A-Za-z0-9_-]{1,40}$/, 'letters, digits, _ and - only (used in stream and subject names)')
    .default('lectern'),
});

export const StorageEnv = z.object({
  S3_ENDPOINT: z.string().url().optional(),
  S3_ACCESS_KEY: z.string().min(1).default('S3RVER'),
  S3_SECRET_KEY: z.string().min(1).default('S3RVER'),
  S3_BUCKET: z
    .string()
    .regex(/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/, 'a valid S3 bucket name')
    .default('lectern'),
  S3_REGION: z.string().default('us-east-1'),
});

export const ApiEnv = z.object({
  PORT: z.coerce.number().int().min(0).max(65535).default(8080),
  HOST: z.string().default('0.0.0.0'),
  PUBLIC_URL: z.string().url().optional(),
  RATE_LIMIT_PER_MINUTE: z.coerce.number().int().min(0).max(1_000_000_000).default(120),
  TRUST_PROXY: bool.default(false),
  /** When set, GET /metrics (API and workers) requires `Authorization: Bearer <METRICS_TOKEN>`. */
  METRICS_TOKEN: z.string().min(16, 'at least 16 characters').optional(),
});

/** A worker's own HTTP server: /healthz, /readyz and /metrics. 0 turns it off. */
export const WorkerEnv = z.object({
  WORKER_HTTP_PORT: z.coerce.number().int().min(0).max(65535).default(9090),
});

/** Runs a parser that throws on bad input as a zod check, so its message joins every other bad variable's. */
const checkedBy = (parse: (v: string) => unknown) =>
  z.string().superRefine((v, ctx) => {
    try {
      parse(v);
    } catch (err) {
      ctx.addIssue({ code: 'custom', message: (err as Error).message });
    }
  });

export const WebhookEnv = z.object({
  WEBHOOK_SECRET_KEY: checkedBy((v) => parseEncryptionKey(v, 'a 32-byte key')).optional(),
  WEBHOOK_RETRY_DELAYS: checkedBy(parseRetryDelays).optional(),
  WEBHOOK_ALLOW_PRIVATE_NETWORKS: bool.default(false),
});

/**
 * Deadlines of synchronous commands (docs/jobs.md): how long a request waits for its
 * worker before answering 504 with the job id. Below the HTTP server's 120 s request
 * timeout so the caller always gets our answer.
 */
export const JobsEnv = z.object({
  CSV_IMPORT_TIMEOUT_MS: z.coerce.number().int().min(100).max(110_000).default(30_000),
  CERTIFICATE_RENDER_TIMEOUT_MS: z.coerce.number().int().min(100).max(110_000).default(20_000),
});

/** Certificates (docs/certificates.md). */
export const CertificateEnv = z.object({
  /** Folder holding the Noto faces in Debian's layout (fonts-noto-core, fonts-noto-cjk). */
  CERTIFICATE_FONT_DIR: z.string().min(1).default('/usr/share/fonts'),
  /** A template logo larger than this is left out of the PDF (with a warning in the worker log). */
  CERTIFICATE_LOGO_MAX_BYTES: z.coerce.number().int().min(1024).max(20_000_000).default(2_000_000),
  /** Whole logo fetch (DNS, connect, response, body). */
  CERTIFICATE_LOGO_TIMEOUT_MS: z.coerce.number().int().min(100).max(30_000).default(3_000),
  /** Public verification lookups per client address per rolling minute (against serial enumeration). */
  VERIFY_LOOKUPS_PER_MINUTE: z.coerce.number().int().min(1).max(1_000_000).default(30),
});

/**
 * The player (/embed, /player/v1). RUN_TOKEN_KEY signs run tokens (HS256) and keys the learner-facing ids of
 * ranking and match items; unset, it is derived from WEBHOOK_SECRET_KEY (HKDF), so one installation secret
 * covers both. The limits are per client address (run opens and embed pages) and per run (event batches and
 * retakes), separate from the API keys' budget (docs/player-api.md).
 */
export const PlayerEnv = z.object({
  RUN_TOKEN_KEY: checkedBy((v) => parseEncryptionKey(v, 'a 32-byte key')).optional(),
  RUN_TOKEN_TTL_SECONDS: z.coerce
    .number()
    .int()
    .min(60)
    .max(7 * 24 * 3600)
    .default(12 * 3600),
  PLAYER_OPENS_PER_MINUTE_PER_ADDRESS: z.coerce.number().int().min(0).max(1_000_000_000).default(3000),
  PLAYER_REQUESTS_PER_MINUTE_PER_RUN: z.coerce.number().int().min(0).max(1_000_000_000).default(600),
});

export const AppEnv = BaseEnv.merge(DbEnv)
  .merge(BusEnv)
  .merge(StorageEnv)
  .merge(ApiEnv)
  .merge(WebhookEnv)
  .merge(JobsEnv)
  .merge(PlayerEnv)
  .merge(CertificateEnv)
  .merge(WorkerEnv);
export type AppConfig = z.infer<typeof AppEnv> & { PUBLIC_URL: string };

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

/** Parses `env` against `schema`, throwing one error that names every bad variable. */
export function parseEnv<S extends z.ZodType>(
  schema: S,
  env: Record<string, string | undefined>,
): z.infer<S> {
  // Empty strings mean "unset" so a blank line in .env does not defeat a default.
  const cleaned = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ''));
  const result = schema.safeParse(cleaned);
  if (!result.success) {
    throw new ConfigError(
      result.error.issues.map((i) => {
        const name = String(i.path[0] ?? '');
        // Never echo a secret into logs or a terminal, even a malformed one.
        const got = /SECRET|PASSWORD|TOKEN|_KEY$/.test(name)
          ? 'value hidden'
          : `got ${JSON.stringify(cleaned[name] ?? null)}`;
        return `${i.path.join('.') || '(env)'}: ${i.message} (${got})`;
      }),
    );
  }
  return result.data;
}

export function loadConfig(env: Record<string, string | undefined> = process.env): AppConfig {
  const cfg = parseEnv(AppEnv, env);
  return { ...cfg, PUBLIC_URL: (cfg.PUBLIC_URL ?? `http://localhost:${cfg.PORT}`).replace(/\/+$/, '') };
}
