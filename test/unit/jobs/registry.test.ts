import { expect } from 'chai';
import { JOB_KINDS, JOB_SPECS } from '@lectern/contracts';
import { ConfigError } from '@lectern/config';
import { jobRegistry } from '@lectern/job-registry';
import { JobRegistryError, checkJobRegistry, jobWorkersOf, type JobRegistry } from '@lectern/jobs';
import { context } from '../../support/context.js';

function problemsOf(registry: Record<string, unknown>): string[] {
  try {
    checkJobRegistry(registry);
  } catch (err) {
    expect(err).to.be.instanceOf(JobRegistryError);
    return (err as JobRegistryError).problems;
  }
  throw new Error('expected a JobRegistryError');
}

describe('jobs: the job registry', () => {
  let JOB_REGISTRY: JobRegistry;
  before(() => {
    // Built as `lectern start` builds it: from the environment (defaults here) and the run's object store.
    JOB_REGISTRY = jobRegistry({}, { storage: context().storage });
  });

  it('has exactly one worker for every job kind of the contracts, under its own kind', () => {
    expect(Object.keys(JOB_REGISTRY).sort()).to.deep.equal([...JOB_KINDS].sort());
    expect([...JOB_KINDS].sort()).to.deep.equal(Object.keys(JOB_SPECS).sort());
    for (const kind of JOB_KINDS) {
      expect(JOB_REGISTRY[kind].kind, kind).to.equal(kind);
      expect(JOB_REGISTRY[kind].handler, kind).to.be.a('function');
    }
    expect(() => checkJobRegistry(JOB_REGISTRY)).not.to.throw();
  });

  it('gives `lectern start` one worker per kind, each on its own durable consumer', () => {
    const workers = jobWorkersOf(JOB_REGISTRY);
    expect(workers.map((w) => w.kind).sort()).to.deep.equal([...JOB_KINDS].sort());
    expect(new Set(workers.map((w) => w.app)).size).to.equal(workers.length);
  });

  it('each kind’s command schema accepts its own kind only', () => {
    for (const kind of JOB_KINDS) {
      const command = JOB_SPECS[kind].command;
      expect(command.safeParse({ jobId: 'job_1', workspaceId: 'ws_1', kind }).success, kind).to.equal(true);
      expect(command.safeParse({ jobId: 'job_1', workspaceId: 'ws_1', kind: 'other.kind' }).success).to.equal(
        false,
      );
      expect(command.safeParse({ jobId: 'job_1', workspaceId: 42, kind }).success).to.equal(false);
    }
  });

  it('a kind without a worker stops the boot with a message naming it', () => {
    const { 'csv.import': _csv, ...rest } = JOB_REGISTRY;
    const problems = problemsOf(rest);
    expect(problems).to.deep.equal(['no worker for "csv.import"']);
    expect(() => jobWorkersOf(rest as unknown as JobRegistry)).to.throw(JobRegistryError, /csv\.import/);
  });

  it('a worker for no kind, a mismatched kind, a missing handler or a shared durable name are refused', () => {
    const csv = JOB_REGISTRY['csv.import'];
    expect(problemsOf({ ...JOB_REGISTRY, 'media.probe': { ...csv, kind: 'media.probe' } })).to.deep.equal([
      '"media.probe" is not a job kind',
    ]);
    expect(problemsOf({ ...JOB_REGISTRY, 'csv.import': { ...csv, kind: 'media.transcode' } })).to.deep.equal([
      'the entry for "csv.import" says kind "media.transcode"',
    ]);
    expect(problemsOf({ ...JOB_REGISTRY, 'csv.import': { ...csv, handler: undefined } })).to.deep.equal([
      'the entry for "csv.import" has no handler function',
    ]);
    expect(problemsOf({ ...JOB_REGISTRY, 'csv.import': { ...csv, app: '' } })).to.deep.equal([
      'the entry for "csv.import" has no durable consumer name (app)',
    ]);
    expect(problemsOf({ ...JOB_REGISTRY, 'csv.import': null })).to.have.length(3);
  });

  it('is built from the environment: a bad setting of an entry, or missing certificate fonts, stop the build', () => {
    expect(() => jobRegistry({ CERTIFICATE_LOGO_TIMEOUT_MS: 'soon' }, { storage: context().storage }))
      .to.throw(ConfigError)
      .with.property('problems')
      .that.satisfies((p: string[]) => p.some((m) => m.startsWith('CERTIFICATE_LOGO_TIMEOUT_MS')));
    expect(() =>
      jobRegistry({ CERTIFICATE_FONT_DIR: '/nonexistent/fonts' }, { storage: context().storage }),
    ).to.throw(/certificate fonts missing: \/nonexistent\/fonts\/.*fonts-noto-core/);
  });

  it('the compiler refuses a registry that misses a kind or names another', () => {
    const csv = JOB_REGISTRY['csv.import'];
    // @ts-expect-error a kind without a worker does not compile
    const missing: JobRegistry = {};
    // @ts-expect-error a worker for a kind the contracts do not have does not compile
    const extra: JobRegistry = { ...JOB_REGISTRY, 'csv.import': csv, 'media.probe': csv };
    expect(problemsOf(missing)).to.have.length(JOB_KINDS.length);
    expect(problemsOf(extra)).to.deep.equal(['"media.probe" is not a job kind']);
  });
});
