import { expect } from 'chai';
import { JOB_KINDS } from '@lectern/contracts';
import { StorageEnv } from '@lectern/config';
import { WebhookEnv } from '@lectern/webhooks';
import {
  UnknownWorkerKindError,
  WORKER_KINDS,
  WORKER_KIND_NAMES,
  jobKindsOf,
  workerKindsNamed,
} from '@lectern/job-registry';

describe('jobs: the worker kinds of the worker host', () => {
  it('hosts every job kind in exactly one worker kind', () => {
    const hosted = WORKER_KIND_NAMES.flatMap((n) => jobKindsOf(n));
    expect([...hosted].sort()).to.deep.equal([...JOB_KINDS].sort());
    expect(jobKindsOf('scorm').sort()).to.deep.equal(['scorm.export', 'scorm.import']);
    expect(jobKindsOf('webhook'), 'the webhook worker is no job worker').to.deep.equal([]);
  });

  it('declares what each kind needs: the object store for job kinds, the webhook settings for deliveries', () => {
    expect(WORKER_KIND_NAMES.filter((n) => WORKER_KINDS[n].storage)).to.deep.equal([
      'csv',
      'certificate',
      'scorm',
      'generation',
      'media',
    ]);
    expect(WORKER_KINDS.webhook.env).to.include(WebhookEnv);
    for (const n of WORKER_KIND_NAMES) {
      expect(WORKER_KINDS[n].name).to.equal(n);
      expect(WORKER_KINDS[n].env, n).not.to.include(StorageEnv);
    }
    expect(WORKER_KINDS.csv.env).to.deep.equal([]);
  });

  it('reads names from argv or a comma-separated list, once each, in the order given', () => {
    expect(workerKindsNamed(['scorm', 'csv']).map((k) => k.name)).to.deep.equal(['scorm', 'csv']);
    expect(workerKindsNamed(['csv, scorm', 'csv']).map((k) => k.name)).to.deep.equal(['csv', 'scorm']);
    expect(workerKindsNamed(['']).map((k) => k.name)).to.deep.equal([]);
  });

  it('refuses an unknown name, listing the known kinds', () => {
    expect(() => workerKindsNamed(['csv', 'mediaa']))
      .to.throw(
        UnknownWorkerKindError,
        'unknown worker kind: mediaa; the kinds are: webhook, csv, certificate, scorm, generation, media',
      )
      .with.property('names')
      .that.deep.equals(['mediaa']);
  });

  it('preflight: a certificate kind without its fonts fails with the fix; the others do not read them', () => {
    const env = { CERTIFICATE_FONT_DIR: '/nonexistent/fonts' };
    expect(() => WORKER_KINDS.certificate.preflight(env)).to.throw(/\/nonexistent\/fonts.*apt-get install/);
    for (const n of ['webhook', 'csv', 'scorm'] as const)
      expect(() => WORKER_KINDS[n].preflight(env), n).not.to.throw();
  });
});
