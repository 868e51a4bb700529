import { expect } from 'chai';
import {
  ApiEnv,
  BaseEnv,
  BusEnv,
  ConfigError,
  DbEnv,
  JobsEnv,
  LOOPBACK_S3_KEY,
  MetricsEnv,
  StorageEnv,
  WorkerEnv,
  parseEnv,
} from '@lectern/config';
import { WebhookEnv } from '@lectern/webhooks';

/** What `lectern start` reads: every piece but the workers' probe port. */
const START = [BaseEnv, DbEnv, BusEnv, StorageEnv, MetricsEnv, ApiEnv, JobsEnv, WebhookEnv] as const;
/** What `lectern worker csv` reads. */
const CSV_WORKER = [BaseEnv, DbEnv, BusEnv, StorageEnv, MetricsEnv, WorkerEnv] as const;

const loadConfig = (env: Record<string, string>) => parseEnv(START, env);

function problems(run: () => unknown): string[] {
  try {
    run();
  } catch (err) {
    expect(err).to.be.instanceOf(ConfigError);
    return (err as ConfigError).problems;
  }
  throw new Error('expected a ConfigError');
}

describe('config: parseEnv over the pieces a process reads', () => {
  it('defaults work with no variable set', () => {
    const cfg = loadConfig({});
    expect(cfg).to.include({
      PORT: 8080,
      DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/lectern',
      NATS_URL: 'nats://127.0.0.1:4222',
      BUS_PREFIX: 'lectern',
      DATA_DIR: './var',
      LOG_LEVEL: 'info',
      RATE_LIMIT_PER_MINUTE: 120,
      S3_BUCKET: 'lectern',
      PUBLIC_URL: 'http://localhost:8080',
    });
    expect(cfg.S3_ENDPOINT, 'unset endpoint = the loopback S3 server').to.equal(undefined);
  });

  it('reads and coerces every variable', () => {
    const cfg = loadConfig({
      PORT: '9090',
      PUBLIC_URL: 'https://learn.example.com/',
      DATABASE_URL: 'postgresql://u:p@db:5432/x',
      NATS_URL: 'nats://n1:4222,nats://n2:4222',
      BUS_PREFIX: 'staging_2',
      S3_ENDPOINT: 'http://minio:9000',
      S3_ACCESS_KEY: 'a',
      S3_SECRET_KEY: 'b',
      S3_BUCKET: 'my-bucket',
      DATA_DIR: '/data',
      LOG_LEVEL: 'debug',
      RATE_LIMIT_PER_MINUTE: '600',
      TRUST_PROXY: 'yes',
    });
    expect(cfg).to.include({
      PORT: 9090,
      BUS_PREFIX: 'staging_2',
      S3_ENDPOINT: 'http://minio:9000',
      S3_ACCESS_KEY: 'a',
      S3_SECRET_KEY: 'b',
      RATE_LIMIT_PER_MINUTE: 600,
      TRUST_PROXY: true,
      LOG_LEVEL: 'debug',
    });
    expect(cfg.PUBLIC_URL, 'no trailing slash').to.equal('https://learn.example.com');
  });

  /** A bounded integer variable: its default, one good value read, and each bad one named alone. */
  const bounded = (
    name: 'BUS_REPLICAS' | 'DB_POOL_IDLE_MS',
    byDefault: number,
    good: number,
    bads: string[],
  ) => {
    expect(loadConfig({})[name]).to.equal(byDefault);
    expect(loadConfig({ [name]: String(good) })[name]).to.equal(good);
    for (const bad of bads) {
      const p = problems(() => loadConfig({ [name]: bad }));
      expect(p, bad).to.have.length(1);
      expect(p[0], bad).to.match(new RegExp(`^${name}: `));
    }
  };

  it('BUS_REPLICAS: 1 by default, 1 to 5 (JetStream keeps at most 5 copies), anything else named', () => {
    bounded('BUS_REPLICAS', 1, 3, ['0', '6', '2.5', 'three']);
  });

  it('DB_POOL_IDLE_MS: 10 minutes by default, 1 s to 24 h, anything else named', () => {
    bounded('DB_POOL_IDLE_MS', 600_000, 30_000, ['999', '86400001', '1.5', 'ten']);
  });

  it('PUBLIC_URL defaults to localhost on the configured PORT', () => {
    expect(loadConfig({ PORT: '8181' }).PUBLIC_URL).to.equal('http://localhost:8181');
  });

  it('an empty string means unset (a blank line in .env keeps the default)', () => {
    expect(loadConfig({ PORT: '', RATE_LIMIT_PER_MINUTE: '' })).to.include({
      PORT: 8080,
      RATE_LIMIT_PER_MINUTE: 120,
    });
  });

  it('a bad variable is named, with the value it had', () => {
    const p = problems(() => loadConfig({ PORT: 'abc' }));
    expect(p).to.have.length(1);
    expect(p[0]).to.match(/^PORT: /);
    expect(p[0]).to.include('"abc"');
  });

  it('every bad variable is named in one error', () => {
    const p = problems(() =>
      loadConfig({
        PORT: '70000',
        DATABASE_URL: 'mysql://x',
        BUS_PREFIX: 'a.b',
        LOG_LEVEL: 'loud',
        RATE_LIMIT_PER_MINUTE: '-1',
        TRUST_PROXY: 'maybe',
        S3_BUCKET: 'UPPER',
        WEBHOOK_RETRY_DELAYS: '1,2',
        WEBHOOK_SECRET_KEY: 'not-a-key',
      }),
    );
    const named = p.map((x) => x.split(':')[0]).sort();
    expect(named).to.deep.equal([
      'BUS_PREFIX',
      'DATABASE_URL',
      'LOG_LEVEL',
      'PORT',
      'RATE_LIMIT_PER_MINUTE',
      'S3_BUCKET',
      'TRUST_PROXY',
      'WEBHOOK_RETRY_DELAYS',
      'WEBHOOK_SECRET_KEY',
    ]);
    // A secret is never echoed back, even a malformed one.
    expect(p.join('\n')).not.to.include('not-a-key');
  });

  it('a variable two pieces read (NODE_ENV) is reported once', () => {
    const p = problems(() => loadConfig({ NODE_ENV: 'staging' }));
    expect(p).to.have.length(1);
    expect(p[0]).to.match(/^NODE_ENV: /);
  });

  it('BUS_PREFIX must be safe inside stream and subject names', () => {
    for (const bad of ['a.b', 'a b', 'a>', 'a*', 'x'.repeat(41)])
      expect(problems(() => loadConfig({ BUS_PREFIX: bad }))[0], bad).to.match(/^BUS_PREFIX/);
    expect(loadConfig({ BUS_PREFIX: 't-1_x' }).BUS_PREFIX).to.equal('t-1_x');
  });
});

describe('config: each process validates only what it reads', () => {
  it('the csv worker starts with a PORT and webhook settings it never reads, and does not carry them', () => {
    const cfg = parseEnv(CSV_WORKER, {
      PORT: 'abc',
      RATE_LIMIT_PER_MINUTE: '-1',
      WEBHOOK_RETRY_DELAYS: '1,2',
      WORKER_HTTP_PORT: '9191',
    });
    expect(cfg).to.include({ WORKER_HTTP_PORT: 9191, HOST: '0.0.0.0' });
    expect(cfg).not.to.have.any.keys('PORT', 'RATE_LIMIT_PER_MINUTE', 'WEBHOOK_RETRY_DELAYS', 'PUBLIC_URL');
  });

  it('the csv worker still refuses a bad variable of its own', () => {
    const p = problems(() => parseEnv(CSV_WORKER, { WORKER_HTTP_PORT: '-5', PORT: 'abc' }));
    expect(p.map((x) => x.split(':')[0])).to.deep.equal(['WORKER_HTTP_PORT']);
  });

  it('the webhook piece lives with the webhook parsers and names its bad variables', () => {
    const p = problems(() =>
      parseEnv([WebhookEnv], { WEBHOOK_RETRY_DELAYS: '1,2,3', WEBHOOK_SECRET_KEY: 'xyz' }),
    );
    expect(p.map((x) => x.split(':')[0]).sort()).to.deep.equal([
      'WEBHOOK_RETRY_DELAYS',
      'WEBHOOK_SECRET_KEY',
    ]);
    expect(parseEnv([WebhookEnv], {})).to.deep.equal({
      WEBHOOK_WORKER_OUTBOX_RELAY: false,
      ALLOW_PRIVATE_NETWORKS: false,
    });
  });
});

describe('config: object-store credentials have no default in production', () => {
  const storage = (env: Record<string, string>) => parseEnv([BaseEnv, StorageEnv], env);
  const keys = (env: Record<string, string>) => {
    const cfg = storage(env);
    return [cfg.S3_ACCESS_KEY, cfg.S3_SECRET_KEY];
  };
  const loopback = [LOOPBACK_S3_KEY, LOOPBACK_S3_KEY];

  it('outside production the keys default to the loopback server’s, with or without S3_ENDPOINT', () => {
    expect(keys({})).to.deep.equal(loopback);
    expect(keys({ NODE_ENV: 'development', S3_ENDPOINT: 'http://minio:9000' })).to.deep.equal(loopback);
    expect(keys({ NODE_ENV: 'test', S3_ENDPOINT: 'http://minio:9000', S3_ACCESS_KEY: 'a' })).to.deep.equal([
      'a',
      LOOPBACK_S3_KEY,
    ]);
  });

  it('production without S3_ENDPOINT runs the loopback server, whose keys are the default', () => {
    expect(keys({ NODE_ENV: 'production' })).to.deep.equal(loopback);
  });

  it('production with S3_ENDPOINT and no keys is a configuration error naming both variables', () => {
    const p = problems(() => storage({ NODE_ENV: 'production', S3_ENDPOINT: 'http://minio:9000' }));
    expect(p.map((x) => x.split(':')[0]).sort()).to.deep.equal(['S3_ACCESS_KEY', 'S3_SECRET_KEY']);
    for (const line of p) {
      expect(line).to.include('required in production when S3_ENDPOINT is set');
      expect(line).to.match(/\(unset\)$/);
    }
  });

  it('production with S3_ENDPOINT and one key names the missing one only', () => {
    const p = problems(() =>
      storage({ NODE_ENV: 'production', S3_ENDPOINT: 'http://minio:9000', S3_ACCESS_KEY: 'prod-access' }),
    );
    expect(p.map((x) => x.split(':')[0])).to.deep.equal(['S3_SECRET_KEY']);
    expect(p.join('\n')).not.to.include('prod-access');
  });

  it('production with S3_ENDPOINT and both keys uses them', () => {
    expect(
      keys({
        NODE_ENV: 'production',
        S3_ENDPOINT: 'http://minio:9000',
        S3_ACCESS_KEY: 'prod-access',
        S3_SECRET_KEY: 'prod-secret',
      }),
    ).to.deep.equal(['prod-access', 'prod-secret']);
  });

  it('the rule joins every other bad variable in the one error', () => {
    const p = problems(() =>
      loadConfig({ NODE_ENV: 'production', S3_ENDPOINT: 'http://minio:9000', PORT: 'x' }),
    );
    expect(p.map((x) => x.split(':')[0]).sort()).to.deep.equal(['PORT', 'S3_ACCESS_KEY', 'S3_SECRET_KEY']);
  });
});
