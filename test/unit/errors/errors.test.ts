import { expect } from 'chai';
import { z } from 'zod';
import {
  AppError,
  HTTP_ERRORS,
  invalid,
  isAppError,
  isRetryable,
  issuesFromZod,
  notFound,
  type ErrorCode,
} from '@lectern/errors';
import { asUnavailable, isDbUnavailable } from '@lectern/db';

describe('errors: the one error type and its HTTP table', () => {
  it('maps the SPEC codes to their statuses', () => {
    const spec: [ErrorCode, number, string][] = [
      ['invalid_request', 400, 'invalid_request'],
      ['unauthorized', 401, 'unauthorized'],
      ['insufficient_scope', 403, 'insufficient_scope'],
      ['plan_required', 403, 'plan_required'],
      ['plan_blocked', 402, 'plan_required'],
      ['not_found', 404, 'not_found'],
      ['conflict', 409, 'conflict'],
      ['payload_too_large', 413, 'payload_too_large'],
      ['unsupported_media_type', 415, 'unsupported_media_type'],
      ['rate_limited', 429, 'rate_limited'],
      ['internal_error', 500, 'internal_error'],
      ['unavailable', 503, 'service_unavailable'],
    ];
    for (const [code, status, error] of spec)
      expect(HTTP_ERRORS[code], code).to.deep.equal({ status, error });
  });

  it('every code has a 4xx/5xx status and a snake_case public code', () => {
    for (const [code, { status, error }] of Object.entries(HTTP_ERRORS)) {
      expect(status, code).to.be.within(400, 599);
      expect(error, code).to.match(/^[a-z]+(_[a-z]+)*$/);
    }
  });

  it('isRetryable: unknown faults retry; AppErrors say for themselves', () => {
    expect(isRetryable(new Error('ECONNRESET'))).to.equal(true);
    expect(isRetryable('thrown string')).to.equal(true);
    expect(isRetryable(new AppError('unavailable', 'db down'))).to.equal(true);
    expect(isRetryable(new AppError('invalid_request', 'bad'))).to.equal(false);
    expect(isRetryable(new AppError('plan_required', 'upgrade'))).to.equal(false);
    expect(isRetryable(new AppError('timeout', 'late', { retryable: false }))).to.equal(false);
  });

  it('AppError carries code, issues, retryAfter and details; only outages are retryable by default', () => {
    const e = new AppError('rate_limited', 'slow down', { retryAfter: 7, details: { limit: 120 } });
    expect(isAppError(e)).to.equal(true);
    expect(e).to.be.instanceOf(Error);
    expect(e).to.include({ code: 'rate_limited', message: 'slow down', retryAfter: 7, retryable: false });
    expect(e.details).to.deep.equal({ limit: 120 });
    expect(new AppError('unavailable', 'x').retryable).to.equal(true);
    expect(new AppError('timeout', 'x').retryable).to.equal(true);
    expect(new AppError('invalid_request', 'x').retryable).to.equal(false);
    expect(new AppError('internal_error', 'x', { retryable: true }).retryable).to.equal(true);
    const cause = new Error('root');
    expect(new AppError('internal_error', 'x', { cause }).cause).to.equal(cause);
    expect(isAppError(new Error('plain'))).to.equal(false);
    expect(notFound('Identity')).to.include({ code: 'not_found', message: 'Identity not found' });
    expect(invalid('bad', [{ code: 'c', path: ['a'], message: 'm' }]).issues).to.have.length(1);
  });

  it('issuesFromZod keeps code, path (with a prefix) and message', () => {
    const r = z
      .object({ identities: z.array(z.object({ email: z.email() })) })
      .safeParse({ identities: [{ email: 'ok@example.com' }, { email: 'nope' }] });
    expect(r.success).to.equal(false);
    const issues = issuesFromZod(r.error!.issues);
    expect(issues).to.have.length(1);
    expect(issues[0].path).to.deep.equal(['identities', 1, 'email']);
    expect(issues[0].code).to.be.a('string').and.not.equal('');
    expect(issues[0].message).to.be.a('string').and.not.equal('');
    expect(issuesFromZod(r.error!.issues, ['query'])[0].path).to.deep.equal([
      'query',
      'identities',
      1,
      'email',
    ]);
    expect(Object.keys(issues[0]).sort()).to.deep.equal(['code', 'message', 'path']);
  });
});

describe('errors: database outages become retryable 503s', () => {
  it('recognises connection failures, directly or as a cause', () => {
    for (const e of [
      Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' }),
      Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' }),
      new Error('Connection terminated unexpectedly'),
      Object.assign(new Error('Knex: Timeout acquiring a connection.'), { name: 'KnexTimeoutError' }),
      new Error('wrapped', { cause: Object.assign(new Error('x'), { code: 'ECONNRESET' }) }),
    ]) {
      expect(isDbUnavailable(e), e.message).to.equal(true);
      const mapped = asUnavailable(e);
      expect(isAppError(mapped)).to.equal(true);
      expect((mapped as AppError).code).to.equal('unavailable');
      expect((mapped as AppError).retryable).to.equal(true);
    }
  });

  it('leaves query errors alone', () => {
    const syntax = Object.assign(new Error('syntax error at or near "selec"'), { code: '42601' });
    expect(isDbUnavailable(syntax)).to.equal(false);
    expect(asUnavailable(syntax)).to.equal(syntax);
    const unique = Object.assign(new Error('duplicate key value violates unique constraint'), {
      code: '23505',
    });
    expect(isDbUnavailable(unique)).to.equal(false);
  });
});
