import { expect } from 'chai';
import { ConfigError, loadConfig } from '@lectern/config';

function problems(env: Record<string, string>): string[] {
  try {
    loadConfig(env);
  } catch (err) {
    expect(err).to.be.instanceOf(ConfigError);
    return (err as ConfigError).problems;
  }
  throw new Error('expected a ConfigError');
}

describe('config: loadConfig', () => {
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
      RATE_LIMIT_PER_MINUTE: 600,
      TRUST_PROXY: true,
      LOG_LEVEL: 'debug',
    });
    expect(cfg.PUBLIC_URL, 'no trailing slash').to.equal('https://learn.example.com');
  });

  it('an empty string means unset (a blank line in .env keeps the default)', () => {
    expect(loadConfig({ PORT: '', RATE_LIMIT_PER_MINUTE: '' })).to.include({
      PORT: 8080,
      RATE_LIMIT_PER_MINUTE: 120,
    });
  });

  it('a bad variable is named, with the value it had', () => {
    const p = problems({ PORT: 'abc' });
    expect(p).to.have.length(1);
    expect(p[0]).to.match(/^PORT: /);
    expect(p[0]).to.include('"abc"');
  });

  it('every bad variable is named in one error', () => {
    const err = (() => {
      try {
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
        });
      } catch (e) {
        return e as ConfigError;
      }
      throw new Error('expected a ConfigError');
    })();
    const named = err.problems.map((x) => x.split(':')[0]).sort();
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
    for (const v of named) expect(err.message).to.include(v);
    // A secret is never echoed back, even a malformed one.
    expect(err.message).not.to.include('not-a-key');
  });

  it('BUS_PREFIX must be safe inside stream and subject names', () => {
    for (const bad of ['a.b', 'a b', 'a>', 'a*', 'x'.repeat(41)])
      expect(problems({ BUS_PREFIX: bad })[0], bad).to.match(/^BUS_PREFIX/);
    expect(loadConfig({ BUS_PREFIX: 't-1_x' }).BUS_PREFIX).to.equal('t-1_x');
  });
});
