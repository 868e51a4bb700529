import { createPrivateKey, createPublicKey, type KeyObject } from 'node:crypto';
import { z } from 'zod';

/**
 * Configuration comes from environment variables only, parsed once per process in its main.ts.
 * Small pieces per concern; each app lists the pieces it reads and `parseEnv` checks exactly those,
 * so a worker never fails on a variable it does not read (the csv worker has no PORT). Every default
 * works on a developer machine with PostgreSQL and NATS on loopback; no secret has a default in
 * production.
 *
 * A piece is any zod schema over the environment: it may read a variable another piece also reads
 * (the object-store piece reads NODE_ENV) and check rules across its own variables.
 */

/** `true|false|1|0|yes|no`, for flags. */
export const envBool = z
  .enum(['true', 'false', '1', '0', 'yes', 'no'])
  .transform((v) => v === 'true' || v === '1' || v === 'yes');

/** Runs a parser that throws on bad input as a zod check, so its message joins every other bad variable's. */
export const checkedBy = (parse: (v: string) => unknown) =>
  z.string().superRefine((v, ctx) => {
    try {
      parse(v);
    } catch (err) {
      ctx.addIssue({ code: 'custom', message: (err as Error).message });
    }
  });

const NodeEnv = z.enum(['development', 'test', 'production']).default('development');
/** Listen address of the API and of the workers' probe servers. */
const Host = z.string().default('0.0.0.0');

export const BaseEnv = z.object({
  NODE_ENV: NodeEnv,
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  DATA_DIR: z.string().min(1).default('./var'),
});
export type BaseConfig = z.output<typeof BaseEnv>;

export const DbEnv = z.object({
  DATABASE_URL: z
    .string()
    .regex(/^postgres(ql)?:\/\//, 'must be a postgres:// URL')
    .default('postgres://postgres@127.0.0.1:5432/lectern'),
  DB_POOL_MAX: z.coerce.number().int().min(1).max(200).default(10),
  /**
   * How long a pooled connection may sit unused before it is closed (1 s – 24 h). The pool closes every connection
   * past it in one pass, and a burst leaves many released together: at 30 s, ~15 PostgreSQL backends exiting at
   * once held a 2-core database host for 100–250 ms (test/bench/README.md, issue 24, seventh round). Ten minutes
   * keeps a busy process's pool between bursts, as a fixed-size pool would.
   */
  DB_POOL_IDLE_MS: z.coerce.number().int().min(1000).max(86_400_000).default(600_000),
});
export type DbConfig = z.output<typeof DbEnv>;

export const BusEnv = z.object({
  NATS_URL: z.string().min(1).default('nats://127.0.0.1:4222'),
  BUS_PREFIX: z
    .string()
    .regex(/^[A-Za-z0-9_-]{1,40}$/, 'letters, digits, _ and - only (used in stream and subject names)')
    .default('lectern'),
  /**
   * Copies JetStream keeps of every stream (3 on a 3-node cluster: one node can be lost or drained). A single
   * nats-server refuses more than 1. At most 5, JetStream's own limit.
   */
  BUS_REPLICAS: z.coerce.number().int().min(1).max(5).default(1),
});
export type BusConfig = z.output<typeof BusEnv>;

/** The credentials of the S3-compatible server `createStorage` runs on loopback when S3_ENDPOINT is unset. */
export const LOOPBACK_S3_KEY = 'S3RVER';
const S3_KEYS = ['S3_ACCESS_KEY', 'S3_SECRET_KEY'] as const;

/**
 * The object store. The keys default to the loopback server's only where that cannot leak into a real
 * store: outside production, or when no S3_ENDPOINT is set (the loopback server is then the store).
 * Production pointed at a real endpoint must name its keys; a missing one is a configuration error.
 */
export const StorageEnv = z
  .object({
    NODE_ENV: NodeEnv,
    S3_ENDPOINT: z.string().url().optional(),
    // The store's address as browsers see it, for presigned URLs (docs/media.md "Settings"); default S3_ENDPOINT.
    S3_PUBLIC_ENDPOINT: z.string().url().optional(),
    S3_ACCESS_KEY: z.string().min(1).optional(),
    S3_SECRET_KEY: z.string().min(1).optional(),
    S3_BUCKET: z
      .string()
      .regex(/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/, 'a valid S3 bucket name')
      .default('lectern'),
    S3_REGION: z.string().default('us-east-1'),
  })
  .superRefine((v, ctx) => {
    if (v.NODE_ENV !== 'production' || !v.S3_ENDPOINT) return;
    for (const name of S3_KEYS) {
      if (v[name] === undefined)
        ctx.addIssue({
          code: 'custom',
          path: [name],
          message: `required in production when S3_ENDPOINT is set (set both S3_ACCESS_KEY and S3_SECRET_KEY to the store's credentials)`,
        });
    }
  })
  .transform(({ NODE_ENV: _readOnly, ...v }) => ({
    ...v,
    S3_ACCESS_KEY: v.S3_ACCESS_KEY ?? LOOPBACK_S3_KEY,
    S3_SECRET_KEY: v.S3_SECRET_KEY ?? LOOPBACK_S3_KEY,
  }));
export type StorageConfig = z.output<typeof StorageEnv>;

/** Read by the API and by each worker's probe server. */
export const MetricsEnv = z.object({
  /** When set, GET /metrics requires `Authorization: Bearer <METRICS_TOKEN>`. */
  METRICS_TOKEN: z.string().min(16, 'at least 16 characters').optional(),
});
export type MetricsConfig = z.output<typeof MetricsEnv>;

/** The API's HTTP server. PUBLIC_URL defaults to `http://localhost:$PORT`, without a trailing slash. */
export const ApiEnv = z
  .object({
    PORT: z.coerce.number().int().min(0).max(65535).default(8080),
    HOST: Host,
    PUBLIC_URL: z.string().url().optional(),
    RATE_LIMIT_PER_MINUTE: z.coerce.number().int().min(0).max(1_000_000_000).default(120),
    TRUST_PROXY: envBool.default(false),
    // false: this replica runs no outbox relay; another process does (a webhook worker with
    // WEBHOOK_WORKER_OUTBOX_RELAY=true), so the API's event loop goes to requests alone.
    API_OUTBOX_RELAY: envBool.default(true),
  })
  .transform((v) => ({
    ...v,
    PUBLIC_URL: (v.PUBLIC_URL ?? `http://localhost:${v.PORT}`).replace(/\/+$/, ''),
  }));
export type ApiConfig = z.output<typeof ApiEnv>;

/** A worker's own HTTP server: /healthz, /readyz and /metrics. 0 turns it off. */
export const WorkerEnv = z.object({
  WORKER_HTTP_PORT: z.coerce.number().int().min(0).max(65535).default(9090),
  HOST: Host,
  /** The worker kinds `lectern worker` runs when given none on its command line, comma-separated (`csv,scorm`). */
  LECTERN_WORKERS: z.string().optional(),
});
export type WorkerConfig = z.output<typeof WorkerEnv>;

/**
 * Deadlines of synchronous commands (docs/jobs.md): how long a request waits for its
 * worker before answering 504 with the job id. Below the HTTP server's 120 s request
 * timeout so the caller always gets our answer. Read by the API, which does the waiting.
 */
export const JobsEnv = z.object({
  CSV_IMPORT_TIMEOUT_MS: z.coerce.number().int().min(100).max(110_000).default(30_000),
  CERTIFICATE_RENDER_TIMEOUT_MS: z.coerce.number().int().min(100).max(110_000).default(20_000),
  SCORM_EXPORT_TIMEOUT_MS: z.coerce.number().int().min(100).max(110_000).default(60_000),
  /** A 100 MB package is read to a temp file and its HTML parsed; measured well under 10 s (test/bench/README.md). */
  SCORM_IMPORT_TIMEOUT_MS: z.coerce.number().int().min(100).max(110_000).default(60_000),
});

/** PKCS8 DER of an Ed25519 private key is this prefix and the 32-byte seed (RFC 8410). */
const ED25519_PKCS8_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');

/** 32 bytes from 64 hex characters or base64/base64url; null when the text is neither. */
function bytes32(v: string): Buffer | null {
  if (/^[0-9a-fA-F]{64}$/.test(v)) return Buffer.from(v, 'hex');
  if (!/^[A-Za-z0-9+/_-]+={0,2}$/.test(v)) return null;
  const b = Buffer.from(v.replace(/-/g, '+').replace(/_/g, '/'), 'base64');
  return b.length === 32 ? b : null;
}

/** An Ed25519 private key from its 32-byte seed. */
export function ed25519FromSeed(seed: Uint8Array): KeyObject {
  if (seed.length !== 32) throw new Error('an Ed25519 seed is 32 bytes');
  return createPrivateKey({
    key: Buffer.concat([ED25519_PKCS8_PREFIX, seed]),
    format: 'der',
    type: 'pkcs8',
  });
}

/**
 * CREDENTIAL_SIGNING_KEY: an Ed25519 private key as PKCS8 PEM (`openssl genpkey -algorithm ed25519`) or its
 * 32-byte seed (64 hex characters or base64, like RUN_TOKEN_KEY).
 */
export function parseCredentialSigningKey(value: string): KeyObject {
  const v = value.trim();
  if (v.startsWith('-----BEGIN')) {
    let key: KeyObject;
    try {
      key = createPrivateKey({ key: v.replace(/\\n/g, '\n'), format: 'pem' });
    } catch {
      throw new Error('not a readable PEM private key (expected PKCS8: -----BEGIN PRIVATE KEY-----)');
    }
    if (key.asymmetricKeyType !== 'ed25519') {
      throw new Error(`must be an Ed25519 key (got ${key.asymmetricKeyType ?? 'an unknown type'})`);
    }
    return key;
  }
  const seed = bytes32(v);
  if (!seed) {
    throw new Error(
      'expected an Ed25519 private key: PKCS8 PEM, or its 32-byte seed as 64 hex characters or base64 ' +
        '(generate one with: openssl rand -hex 32)',
    );
  }
  return ed25519FromSeed(seed);
}

/**
 * CREDENTIAL_RETIRED_KEYS: public keys of earlier signing keys, still published so credentials signed with them
 * keep verifying. Comma- or space-separated; each the 32-byte Ed25519 public key in base64url (the `x` of the
 * JWK the issuer profile publishes) or hex.
 */
export function parseRetiredCredentialKeys(value: string): KeyObject[] {
  return value
    .split(/[\s,]+/)
    .filter(Boolean)
    .map((part, i) => {
      const raw = bytes32(part);
      if (!raw) throw new Error(`key ${i + 1} is not a 32-byte Ed25519 public key in base64url or hex`);
      return createPublicKey({
        key: { kty: 'OKP', crv: 'Ed25519', x: raw.toString('base64url') },
        format: 'jwk',
      });
    });
}

/** Certificates (docs/certificates.md). */
/**
 * The generation settings (docs/generation.md "Settings"). A provider is configured when GENERATION_BASE_URL
 * and GENERATION_MODEL are both set; GENERATION_API_KEY is optional (local servers take none).
 */
export const GenerationEnv = z.object({
  GENERATION_BASE_URL: z.string().url('must be a URL such as http://ollama:11434/v1').optional(),
  GENERATION_API_KEY: z.string().min(1).optional(),
  GENERATION_MODEL: z.string().min(1).optional(),
  /** The whole job's deadline, from the request to the course, queueing included. */
  GENERATION_TIMEOUT_MS: z.coerce.number().int().min(100).max(3_600_000).default(120_000),
  /** Jobs one worker process runs at once (each holds a database connection while it runs). */
  GENERATION_CONCURRENCY: z.coerce.number().int().min(1).max(64).default(4),
});
export type GenerationConfig = z.output<typeof GenerationEnv>;

export const CertificateEnv = z.object({
  /** Folder holding the Noto faces in Debian's layout (fonts-noto-core, fonts-noto-cjk). */
  CERTIFICATE_FONT_DIR: z.string().min(1).default('/usr/share/fonts'),
  /** A template logo larger than this is left out of the PDF (with a warning in the worker log). */
  CERTIFICATE_LOGO_MAX_BYTES: z.coerce.number().int().min(1024).max(20_000_000).default(2_000_000),
  /** Whole logo fetch (DNS, connect, response, body). */
  CERTIFICATE_LOGO_TIMEOUT_MS: z.coerce.number().int().min(100).max(30_000).default(3_000),
  /** Public verification lookups per client address per rolling minute (against serial enumeration). */
  VERIFY_LOOKUPS_PER_MINUTE: z.coerce.number().int().min(1).max(1_000_000).default(30),
  /**
   * Signs the Open Badges credentials (Ed25519). Unset: derived from the installation secret
   * (WEBHOOK_SECRET_KEY, HKDF), as run tokens are, so `lectern start` needs nothing more.
   */
  CREDENTIAL_SIGNING_KEY: checkedBy(parseCredentialSigningKey).optional(),
  /** Public keys of earlier signing keys, still published on the issuer profiles (key rotation). */
  CREDENTIAL_RETIRED_KEYS: checkedBy(parseRetiredCredentialKeys).optional(),
});

/** SCORM export (docs/scorm.md "Export"): the player bundle it packs and the font and media fetch limits. */
export const ScormEnv = z.object({
  /** Where the built player bundle is (dist/player by default, written by `npm run build`). */
  PLAYER_ASSETS_DIR: z.string().min(1).optional(),
  /** A custom font larger than this keeps its remote URL in the package (with a warning). */
  SCORM_FONT_MAX_BYTES: z.coerce.number().int().min(1024).max(20_000_000).default(2_000_000),
  /** Whole font fetch (DNS, connect, response, body). */
  SCORM_FONT_TIMEOUT_MS: z.coerce.number().int().min(100).max(30_000).default(5_000),
  /** An image, video or audio file larger than this keeps its remote URL in the package (with a warning). */
  SCORM_MEDIA_MAX_BYTES: z.coerce.number().int().min(1024).max(2_000_000_000).default(50_000_000),
  /** All media files of one package together: once reached, the rest keep their remote URLs. */
  SCORM_PACKAGE_MEDIA_MAX_BYTES: z.coerce.number().int().min(1024).max(20_000_000_000).default(500_000_000),
  /** Whole fetch of one media file (DNS, connect, response, body). */
  SCORM_MEDIA_TIMEOUT_MS: z.coerce.number().int().min(100).max(120_000).default(30_000),
});

/** Media uploads and serving (docs/media.md "Settings"). Read by the API. */
export const MediaEnv = z
  .object({
    NODE_ENV: NodeEnv,
    /** Lifetime of the signed addresses handed to browsers (previewUrl, the learner view's media). */
    MEDIA_URL_TTL_SECONDS: z.coerce.number().int().min(5).max(3600).default(300),
    /**
     * Test-only override of the plans' storage lines, `sandbox=1000000,build=5000000` (bytes; empty = unbounded),
     * so the quota is tested without writing gigabytes. Refused in production.
     */
    MEDIA_STORAGE_LIMITS: z
      .string()
      .regex(/^\s*(\w+=\d*\s*(,\s*\w+=\d*\s*)*)?$/, 'plan=bytes pairs separated by commas')
      .optional(),
  })
  .superRefine((v, ctx) => {
    if (v.NODE_ENV === 'production' && v.MEDIA_STORAGE_LIMITS)
      ctx.addIssue({
        code: 'custom',
        path: ['MEDIA_STORAGE_LIMITS'],
        message: 'is for tests; not allowed in production',
      });
  })
  .transform(({ NODE_ENV: _readOnly, ...v }) => v);
export type MediaConfig = z.output<typeof MediaEnv>;

export type JobsConfig = z.output<typeof JobsEnv>;
export type ScormConfig = z.output<typeof ScormEnv>;
export type CertificateConfig = z.output<typeof CertificateEnv>;

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

/** One configuration piece (`DbEnv`, `WebhookEnv`, …): what `parseEnv` merges. */
export type ConfigPiece = z.ZodType;

type Intersection<U> = (U extends unknown ? (u: U) => void : never) extends (i: infer I) => void ? I : never;
/** What `parseEnv(pieces)` returns: every piece's output in one object. */
export type EnvOf<P extends readonly z.ZodType[]> = Intersection<z.output<P[number]>>;

/**
 * Parses `env` against every piece, throwing one error that names every bad variable of every
 * piece. A variable two pieces read is reported once.
 */
export function parseEnv<const P extends readonly z.ZodType[]>(
  pieces: P,
  env: Record<string, string | undefined>,
): EnvOf<P> {
  // Empty strings mean "unset" so a blank line in .env does not defeat a default.
  const cleaned = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ''));
  const problems = new Set<string>();
  const out: Record<string, unknown> = {};
  for (const piece of pieces) {
    const result = piece.safeParse(cleaned);
    if (result.success) {
      Object.assign(out, result.data);
      continue;
    }
    for (const i of result.error.issues) {
      const name = String(i.path[0] ?? '');
      // Never echo a secret into logs or a terminal, even a malformed one.
      const got =
        cleaned[name] === undefined
          ? 'unset'
          : /SECRET|PASSWORD|TOKEN|_KEY$/.test(name)
            ? 'value hidden'
            : `got ${JSON.stringify(cleaned[name])}`;
      problems.add(`${i.path.join('.') || '(env)'}: ${i.message} (${got})`);
    }
  }
  if (problems.size > 0) throw new ConfigError([...problems]);
  return out as EnvOf<P>;
}
