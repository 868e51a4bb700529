import { expect } from 'chai';
import { normaliseOrigin } from '@lectern/contracts';
import { assertOriginAllowed, frameAncestors, type PlayerAccess } from '@lectern/learner-runs';

const OWN = 'https://lectern.example';
const access = (allowedOrigins: string[] | null): PlayerAccess => ({ allowedOrigins, anonymousRuns: true });
const allowed = (list: string[] | null, origin: string | undefined) => {
  try {
    assertOriginAllowed(access(list), origin, OWN);
    return true;
  } catch (err) {
    expect(err).to.have.property('code', 'origin_not_allowed');
    return false;
  }
};

describe('learner runs: allowed origins (issue 20)', () => {
  it('normaliseOrigin: lower case, default port dropped, punycode; paths, credentials and other schemes refused', () => {
    expect(normaliseOrigin('HTTPS://School.Example:443')).to.equal('https://school.example');
    expect(normaliseOrigin('http://localhost:8080')).to.equal('http://localhost:8080');
    expect(normaliseOrigin('https://bücher.example')).to.equal('https://xn--bcher-kva.example');
    expect(normaliseOrigin('https://*.lms.example', { wildcard: true })).to.equal('https://*.lms.example');
    for (const bad of [
      'https://*.lms.example', // wildcard only where allowed
      'https://a.example/',
      'https://a.example/x',
      'https://a.example?x',
      'https://u:p@a.example',
      'ftp://a.example',
      'null',
      '',
      'https://',
    ])
      expect(normaliseOrigin(bad), bad).to.equal(null);
    for (const bad of ['https://*', 'https://*.com:99999', 'https://a.*.example', 'https://**.example'])
      expect(normaliseOrigin(bad, { wildcard: true }), bad).to.equal(null);
  });

  it('no list lets any origin (and none) through; a list lets its origins, subdomains of * entries and the service', () => {
    expect(allowed(null, 'https://evil.example')).to.equal(true);
    expect(allowed(null, undefined)).to.equal(true);
    const list = ['https://school.example', 'https://*.lms.example', 'https://*.port.example:8443'];
    for (const ok of [
      'https://school.example',
      'https://SCHOOL.example:443',
      'https://a.lms.example',
      'https://a.b.lms.example',
      'https://x.port.example:8443',
      OWN,
    ])
      expect(allowed(list, ok), ok).to.equal(true);
    for (const no of [
      'https://evil.example',
      'http://school.example', // another scheme
      'https://school.example:8443', // another port
      'https://lms.example', // the * entry's parent itself
      'https://evillms.example',
      'http://a.lms.example',
      'https://a.lms.example:444',
      'https://x.port.example',
      'https://school.example.evil.example',
      'null',
      'https://school.example/path',
      undefined,
    ])
      expect(allowed(list, no), String(no)).to.equal(false);
    expect(allowed([], OWN)).to.equal(true);
    expect(allowed([], 'https://school.example')).to.equal(false);
  });

  it("frameAncestors: * without a list, else 'self' and the list", () => {
    expect(frameAncestors(access(null))).to.deep.equal(['*']);
    expect(frameAncestors(access([]))).to.deep.equal(["'self'"]);
    expect(frameAncestors(access(['https://school.example', 'https://*.lms.example']))).to.deep.equal([
      "'self'",
      'https://school.example',
      'https://*.lms.example',
    ]);
  });
});
