import { expect } from 'chai';
import { ConfigError, parseEnv } from '@lectern/config';
import { CERTIFICATE_WORKER_ENV } from '@lectern/certificates';
import { OutboundEnv } from '@lectern/outbound';
import { SCORM_WORKER_ENV, scormExportSettings } from '@lectern/scorm';
import { WebhookEnv } from '@lectern/webhooks';

function problems(fn: () => unknown): string[] {
  try {
    fn();
  } catch (err) {
    expect(err).to.be.instanceOf(ConfigError);
    return (err as ConfigError).problems;
  }
  expect.fail('expected a ConfigError');
}

describe('outbound: ALLOW_PRIVATE_NETWORKS and its alias WEBHOOK_ALLOW_PRIVATE_NETWORKS', () => {
  const allow = (env: Record<string, string>) => parseEnv([OutboundEnv], env).ALLOW_PRIVATE_NETWORKS;

  it('neither set: private networks are refused', () => {
    expect(parseEnv([OutboundEnv], {})).to.deep.equal({ ALLOW_PRIVATE_NETWORKS: false });
  });

  it('the new name alone decides', () => {
    expect(allow({ ALLOW_PRIVATE_NETWORKS: 'true' })).to.equal(true);
    expect(allow({ ALLOW_PRIVATE_NETWORKS: 'false' })).to.equal(false);
  });

  it('the old name alone still works, as an alias', () => {
    expect(allow({ WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' })).to.equal(true);
    expect(allow({ WEBHOOK_ALLOW_PRIVATE_NETWORKS: '1' })).to.equal(true);
    expect(allow({ WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'false' })).to.equal(false);
  });

  it('both set and agreeing is that value, however each is spelled', () => {
    expect(allow({ ALLOW_PRIVATE_NETWORKS: 'true', WEBHOOK_ALLOW_PRIVATE_NETWORKS: '1' })).to.equal(true);
    expect(allow({ ALLOW_PRIVATE_NETWORKS: 'no', WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'false' })).to.equal(false);
  });

  it('both set and disagreeing stops configuration, naming both, whichever way they disagree', () => {
    for (const [name, alias] of [
      ['true', 'false'],
      ['false', 'true'],
    ]) {
      const p = problems(() =>
        parseEnv([OutboundEnv], { ALLOW_PRIVATE_NETWORKS: name, WEBHOOK_ALLOW_PRIVATE_NETWORKS: alias }),
      );
      expect(p).to.have.length(1);
      expect(p[0]).to.match(/^ALLOW_PRIVATE_NETWORKS: /);
      expect(p[0]).to.include('WEBHOOK_ALLOW_PRIVATE_NETWORKS');
      expect(p[0]).to.include('set only ALLOW_PRIVATE_NETWORKS');
    }
  });

  it('a value that is not a flag is refused under the name it was given', () => {
    expect(problems(() => parseEnv([OutboundEnv], { ALLOW_PRIVATE_NETWORKS: 'maybe' }))[0]).to.match(
      /^ALLOW_PRIVATE_NETWORKS: /,
    );
    expect(problems(() => parseEnv([OutboundEnv], { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'maybe' }))[0]).to.match(
      /^WEBHOOK_ALLOW_PRIVATE_NETWORKS: /,
    );
  });

  it('the webhook, certificate and scorm settings resolve the same one flag', () => {
    const cases: [Record<string, string>, boolean][] = [
      [{}, false],
      [{ WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' }, true],
      [{ ALLOW_PRIVATE_NETWORKS: 'true' }, true],
      [{ ALLOW_PRIVATE_NETWORKS: 'true', WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' }, true],
    ];
    for (const [env, want] of cases) {
      const label = JSON.stringify(env);
      expect(parseEnv([WebhookEnv], env).ALLOW_PRIVATE_NETWORKS, label).to.equal(want);
      expect(parseEnv(CERTIFICATE_WORKER_ENV, env).ALLOW_PRIVATE_NETWORKS, label).to.equal(want);
      expect(scormExportSettings(parseEnv(SCORM_WORKER_ENV, env)).allowPrivate, label).to.equal(want);
    }
    const both = { ALLOW_PRIVATE_NETWORKS: 'false', WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' };
    expect(problems(() => parseEnv([WebhookEnv], both))[0]).to.match(/^ALLOW_PRIVATE_NETWORKS: /);
    expect(problems(() => parseEnv(CERTIFICATE_WORKER_ENV, both))[0]).to.match(/^ALLOW_PRIVATE_NETWORKS: /);
  });
});
