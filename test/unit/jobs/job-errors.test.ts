import { expect } from 'chai';
import { AppError, HTTP_ERRORS } from '@lectern/errors';
import { busNames } from '@lectern/bus';
import { fromStoredError, jobBlobKey, jobSubject, jobTimeoutError, toStoredError } from '@lectern/jobs';

describe('libs/jobs: pure parts', () => {
  describe('toStoredError / fromStoredError', () => {
    it('an AppError round-trips with code, message, issues and details', () => {
      const err = new AppError('invalid_request', 'The CSV has no readable screen', {
        issues: [{ code: 'unknown_type', path: ['row', 3], message: 'Unknown block type' }],
        details: { limit: 2000 },
      });
      const stored = toStoredError(err);
      expect(JSON.parse(JSON.stringify(stored))).to.deep.equal(stored);
      const back = fromStoredError(JSON.parse(JSON.stringify(stored)), 'job_1');
      expect(back.code).to.equal('invalid_request');
      expect(back.message).to.equal(err.message);
      expect(back.issues).to.deep.equal(err.issues);
      expect(back.details).to.deep.equal({ limit: 2000 });
      expect(HTTP_ERRORS[back.code].status).to.equal(400);
    });

    it('plan_required keeps its 403', () => {
      const back = fromStoredError(toStoredError(new AppError('plan_required', 'Upgrade to Build')), 'job_1');
      expect(HTTP_ERRORS[back.code].status).to.equal(403);
      expect(back.message).to.equal('Upgrade to Build');
    });

    it('anything that is not an AppError is stored as a generic internal_error (no detail leaks)', () => {
      expect(toStoredError(new Error('password=hunter2 at /srv/app.ts:1'))).to.deep.equal({
        code: 'internal_error',
        message: 'The job failed with an internal error',
      });
      expect(toStoredError(new AppError('internal_error', 'secret detail')).message).to.not.include('secret');
      expect(toStoredError('a string')).to.deep.include({ code: 'internal_error' });
    });

    it('an unreadable stored error becomes internal_error naming the job', () => {
      for (const junk of [null, {}, { code: 'no_such_code', message: 'x' }, { code: 'invalid_request' }]) {
        const e = fromStoredError(junk, 'job_42');
        expect(e.code).to.equal('internal_error');
        expect(e.message).to.include('job_42');
      }
    });
  });

  it('jobTimeoutError is a 504 that names the job and says it may still complete', () => {
    const e = jobTimeoutError('job_abc', 'CSV import', 30_000);
    expect(HTTP_ERRORS[e.code].status).to.equal(504);
    expect(e.message).to.include('job_abc').and.include('30 s').and.include('may complete later');
    expect(e.details).to.deep.equal({ jobId: 'job_abc' });
    expect(e.retryable).to.equal(false);
  });

  it('subjects are <prefix>.jobs.<capability>.<verb>; blob keys jobs/<jobId>/<name>', () => {
    expect(jobSubject(busNames('lectern'), 'csv.import')).to.equal('lectern.jobs.csv.import');
    expect(jobBlobKey('job_1', 'upload.csv')).to.equal('jobs/job_1/upload.csv');
    expect(() => jobBlobKey('job_1', '../escape')).to.throw(RangeError);
    expect(() => jobBlobKey('job_1', '')).to.throw(RangeError);
  });
});
