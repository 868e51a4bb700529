import { expect } from 'chai';
import {
  SERIAL_ALPHABET,
  certificateRefusal,
  generateSerial,
  isSerial,
  normaliseSerial,
} from '@lectern/certificates';

describe('certificates: serials', () => {
  it('generates LC + three dash-joined groups of four from an alphabet without look-alikes', () => {
    const seen = new Set<string>();
    for (let i = 0; i < 2000; i++) {
      const s = generateSerial();
      expect(s).to.match(/^LC-[2-9A-HJKMNP-Z]{4}-[2-9A-HJKMNP-Z]{4}-[2-9A-HJKMNP-Z]{4}$/);
      expect(s.slice(3)).to.not.match(/[01OIL]/);
      seen.add(s);
    }
    expect(seen.size).to.equal(2000);
  });

  it('the alphabet has no 0/O and no 1/I/L, and 31 distinct characters', () => {
    expect(SERIAL_ALPHABET).to.not.match(/[01OIL]/);
    expect(new Set(SERIAL_ALPHABET).size).to.equal(31);
  });

  it('normalises any case, dashes and spaces to the printed form', () => {
    for (const typed of [
      'LC-7KQM-W3XD-9TPA',
      'lc7kqmw3xd9tpa',
      'Lc-7kqm-W3XD9tpa',
      ' lc 7KQM w3xd 9tpa ',
      'LC–7KQM–W3XD–9TPA',
    ]) {
      expect(normaliseSerial(typed), typed).to.equal('LC-7KQM-W3XD-9TPA');
    }
    expect(isSerial('LC-7KQM-W3XD-9TPA')).to.equal(true);
    expect(isSerial('lc7kqmw3xd9tpa')).to.equal(false);
  });

  it('refuses what can never be a serial (wrong prefix, length, look-alike characters, junk)', () => {
    for (const bad of [
      '',
      'LC',
      'XX-7KQM-W3XD-9TPA',
      'LC-7KQM-W3XD-9TP',
      'LC-7KQM-W3XD-9TPAA',
      'LC-0KQM-W3XD-9TPA',
      'LC-7KQM-W3XD-9TPL',
      "LC-7KQM-W3XD-9TP'",
      'x'.repeat(100),
    ]) {
      expect(normaliseSerial(bad), bad).to.equal(null);
    }
  });
});

describe('certificates: who gets one (403 rules)', () => {
  const done = { status: 'completed' as const, passed: true, identityId: 'idn_1' };

  it('a finished, passing, identified run earns a certificate; so does one on a course without pass mark', () => {
    expect(certificateRefusal(done)).to.equal(null);
    expect(certificateRefusal({ ...done, passed: null })).to.equal(null);
  });

  it('an unfinished run is refused, saying it is not finished (before anything else)', () => {
    const r = certificateRefusal({ ...done, status: 'in_progress', passed: false, identityId: null });
    expect(r?.reason).to.equal('not_finished');
    expect(r?.message).to.match(/not finished/);
  });

  it('a finished run below the pass mark is refused and told the mark and its score', () => {
    const r = certificateRefusal({ ...done, passed: false, passingScore: 80, score: 62.5 });
    expect(r?.reason).to.equal('not_passed');
    expect(r?.message).to.include('80%').and.include('62.5%');
    expect(certificateRefusal({ ...done, passed: false })?.reason).to.equal('not_passed');
  });

  it('an anonymous run is refused: there is no name to print', () => {
    const r = certificateRefusal({ ...done, identityId: null });
    expect(r?.reason).to.equal('anonymous');
    expect(r?.message)
      .to.match(/anonymous/)
      .and.match(/name/);
  });
});
