import { expect } from 'chai';
import {
  checkUrl,
  checkUrlResolved,
  isForbiddenAddress,
  normalizeHost,
  type ResolvedAddress,
} from '@lectern/outbound';

const deny = { allowPrivate: false };
const allow = { allowPrivate: true };

const fixed =
  (...addresses: string[]) =>
  async (): Promise<ResolvedAddress[]> =>
    addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));

describe('outbound/ssrf', () => {
  describe('normalizeHost', () => {
    const cases: [string, string, string][] = [
      ['127.1', 'ip4', '127.0.0.1'],
      ['2130706433', 'ip4', '127.0.0.1'],
      ['0x7f.1', 'ip4', '127.0.0.1'],
      ['0X7F.0.0.1', 'ip4', '127.0.0.1'],
      ['017700000001', 'ip4', '127.0.0.1'],
      ['0177.0.0.01', 'ip4', '127.0.0.1'],
      ['0x7f000001', 'ip4', '127.0.0.1'],
      ['127.0.0.1.', 'ip4', '127.0.0.1'],
      ['10.1', 'ip4', '10.0.0.1'],
      ['192.168.257', 'ip4', '192.168.1.1'],
      ['[::ffff:7f00:1]', 'ip4', '127.0.0.1'],
      ['::ffff:127.0.0.1', 'ip4', '127.0.0.1'],
      ['[::ffff:a9fe:a9fe]', 'ip4', '169.254.169.254'],
      ['[::]', 'ip6', '::'],
      ['[0:0:0:0:0:0:0:1]', 'ip6', '::1'],
      ['[FE80::1%25eth0]', 'ip6', 'fe80::1'],
      ['fe80::1%eth0', 'ip6', 'fe80::1'],
      ['2001:DB8:0:0:1:0:0:1', 'ip6', '2001:db8::1:0:0:1'],
      ['0.0.0.0', 'ip4', '0.0.0.0'],
      ['0', 'ip4', '0.0.0.0'],
      ['Example.COM.', 'name', 'example.com'],
      ['metadata.google.internal', 'name', 'metadata.google.internal'],
    ];
    for (const [input, kind, address] of cases) {
      it(`${input} -> ${kind} ${address}`, () => {
        expect(normalizeHost(input)).to.deep.equal({ kind, address });
      });
    }

    for (const bad of [
      '',
      '1.2.3.4.5',
      '1.2.3.09',
      '256.1.1.1',
      'foo.0x1',
      '[127.0.0.1]',
      '[::1',
      'a b.com',
    ]) {
      it(`rejects ${JSON.stringify(bad)} as an invalid host`, () => {
        expect(() => normalizeHost(bad)).to.throw(/invalid host/);
      });
    }
  });

  describe('isForbiddenAddress', () => {
    const forbidden = [
      '127.0.0.1',
      '127.255.255.254',
      '10.0.0.1',
      '172.16.0.1',
      '172.31.255.255',
      '192.168.1.1',
      '169.254.169.254',
      '169.254.0.1',
      '100.64.0.1',
      '100.100.100.200',
      '0.0.0.0',
      '0.1.2.3',
      '224.0.0.1',
      '239.255.255.250',
      '240.0.0.1',
      '255.255.255.255',
      '192.0.2.1',
      '198.18.0.1',
      '168.63.129.16',
      '::',
      '::1',
      '::ffff:127.0.0.1',
      '::ffff:10.0.0.1',
      '::ffff:a9fe:a9fe',
      '::7f00:1',
      'fc00::1',
      'fd00:ec2::254',
      'fe80::1',
      'fec0::1',
      'ff02::1',
      '2001:db8::1',
      '2001::1',
      '64:ff9b::7f00:1',
      '64:ff9b::a00:1',
      '2002:7f00:1::1',
      '2002:a9fe:a9fe::',
      // Special-purpose ranges the address library names beyond the usual ones.
      '192.175.48.1',
      '192.52.193.1',
      '2001:2::1',
      '3fff::1',
      '64:ff9b:1::a00:1',
      '5f00::1',
      'example.com',
      'not an ip',
    ];
    for (const ip of forbidden) {
      it(`forbids ${ip}`, () => expect(isForbiddenAddress(ip)).to.equal(true));
    }
    const allowed = [
      '8.8.8.8',
      '1.1.1.1',
      '93.184.215.14',
      '172.15.255.255',
      '172.32.0.1',
      '100.63.255.255',
      '100.128.0.1',
      '169.253.255.255',
      '223.255.255.255',
      '::ffff:8.8.8.8',
      '2606:4700:4700::1111',
      '2a00:1450:4001:80b::200e',
      '64:ff9b::808:808',
      '2002:808:808::1',
    ];
    for (const ip of allowed) {
      it(`allows ${ip}`, () => expect(isForbiddenAddress(ip)).to.equal(false));
    }
  });

  describe('checkUrl', () => {
    const refusedHosts = [
      '127.1',
      '2130706433',
      '0x7f.1',
      '017700000001',
      '[::ffff:7f00:1]',
      '[::ffff:a9fe:a9fe]',
      '[::]',
      '[::1]',
      '0.0.0.0',
      '169.254.169.254',
      '10.0.0.1',
      '192.168.0.1',
      '100.64.0.1',
      'metadata.google.internal',
      'METADATA.GOOGLE.INTERNAL.',
      'localhost',
      'LocalHost.',
      'foo.localhost',
      'a.b.localhost',
      'printer.local',
      'metadata',
      'intranet',
    ];
    for (const host of refusedHosts) {
      it(`refuses http://${host}/`, () => {
        const r = checkUrl(`http://${host}/hook`, deny);
        expect(r.ok, JSON.stringify(r)).to.equal(false);
      });
      it(`refuses https://${host}:8443/ too`, () => {
        expect(checkUrl(`https://${host}:8443/hook`, deny).ok).to.equal(false);
      });
    }

    it('reads a host the way the URL parser does: percent-encoded and full-width dots reach 127.0.0.1', () => {
      for (const host of ['127%2e0%2e0%2e1', '127。0。0。1', '0x7f%2E1']) {
        expect(checkUrl(`http://${host}/hook`, deny), host).to.deep.equal({
          ok: false,
          reason: 'private address 127.0.0.1',
        });
      }
    });

    it('names the normalised address in the reason', () => {
      expect(checkUrl('http://0x7f.1/', deny)).to.deep.equal({
        ok: false,
        reason: 'private address 127.0.0.1',
      });
      expect(checkUrl('http://[::ffff:a9fe:a9fe]/', deny)).to.deep.equal({
        ok: false,
        reason: 'private address 169.254.169.254',
      });
      expect(checkUrl('http://foo.localhost/', deny)).to.deep.equal({
        ok: false,
        reason: 'forbidden host name foo.localhost',
      });
    });

    for (const url of [
      'https://example.com/webhooks',
      'http://hooks.example.org:8080/a?b=c',
      'https://8.8.8.8/',
      'https://[2606:4700:4700::1111]/x',
      'https://xn--bcher-kva.example/',
    ]) {
      it(`allows ${url}`, () => expect(checkUrl(url, deny)).to.deep.equal({ ok: true }));
    }

    for (const [url, reason] of [
      ['not a url', /invalid URL/],
      ['/relative/path', /invalid URL/],
      ['ftp://example.com/', /unsupported scheme ftp:/],
      ['file:///etc/passwd', /unsupported scheme/],
      ['javascript:alert(1)', /unsupported scheme/],
      ['https://user:pass@example.com/', /credentials/],
      ['https://user@example.com/', /credentials/],
      ['http://1.2.3.4.5/', /invalid URL/],
    ] as const) {
      it(`rejects ${url} (${String(reason)})`, () => {
        const r = checkUrl(url, deny);
        expect(r.ok).to.equal(false);
        if (!r.ok) expect(r.reason).to.match(reason);
      });
    }

    it('allowPrivate bypasses the address and name policy but not the syntax checks', () => {
      for (const host of refusedHosts) {
        expect(checkUrl(`http://${host}/`, allow), host).to.deep.equal({ ok: true });
      }
      expect(checkUrl('ftp://127.0.0.1/', allow).ok).to.equal(false);
      expect(checkUrl('http://u:p@127.0.0.1/', allow).ok).to.equal(false);
    });
  });

  describe('checkUrlResolved', () => {
    it('pins the first resolved address and keeps the host name', async () => {
      const r = await checkUrlResolved('https://hooks.example.com/x', {
        allowPrivate: false,
        lookup: fixed('93.184.215.14', '2606:2800:21f:cb07:6820:80da:af6b:8b2c'),
      });
      expect(r).to.include({ ok: true, hostname: 'hooks.example.com', address: '93.184.215.14', family: 4 });
    });

    it('refuses a name that resolves to 127.0.0.1', async () => {
      const r = await checkUrlResolved('https://hooks.example.com/x', {
        allowPrivate: false,
        lookup: fixed('127.0.0.1'),
      });
      expect(r).to.deep.equal({ ok: false, reason: 'private address 127.0.0.1' });
    });

    it('refuses when ANY resolved address is forbidden', async () => {
      const r = await checkUrlResolved('https://hooks.example.com/x', {
        allowPrivate: false,
        lookup: fixed('93.184.215.14', '::ffff:169.254.169.254'),
      });
      expect(r.ok).to.equal(false);
      if (!r.ok) expect(r.reason).to.contain('169.254.169.254');
    });

    it('refuses localhost by name without calling the resolver', async () => {
      let calls = 0;
      const r = await checkUrlResolved('http://localhost:1/', {
        allowPrivate: false,
        lookup: async () => {
          calls++;
          return [{ address: '127.0.0.1', family: 4 }];
        },
      });
      expect(r.ok).to.equal(false);
      expect(calls).to.equal(0);
    });

    it('does not resolve IP literals', async () => {
      let calls = 0;
      const r = await checkUrlResolved('http://[2606:4700:4700::1111]:8080/', {
        allowPrivate: false,
        lookup: async () => {
          calls++;
          return [];
        },
      });
      expect(r).to.include({
        ok: true,
        hostname: '2606:4700:4700::1111',
        address: '2606:4700:4700::1111',
        family: 6,
      });
      expect(calls).to.equal(0);
    });

    it('reports DNS failures and empty answers', async () => {
      const failing = async (): Promise<ResolvedAddress[]> => {
        throw Object.assign(new Error('getaddrinfo ENOTFOUND'), { code: 'ENOTFOUND' });
      };
      const r1 = await checkUrlResolved('https://nope.example.com/', {
        allowPrivate: false,
        lookup: failing,
      });
      expect(r1).to.deep.equal({ ok: false, reason: 'DNS lookup failed for nope.example.com: ENOTFOUND' });
      const r2 = await checkUrlResolved('https://nope.example.com/', {
        allowPrivate: false,
        lookup: fixed(),
      });
      expect(r2.ok).to.equal(false);
    });

    it('with allowPrivate resolves and pins a private address', async () => {
      const r = await checkUrlResolved('http://hooks.example.com/', {
        allowPrivate: true,
        lookup: fixed('127.0.0.1'),
      });
      expect(r).to.include({ ok: true, address: '127.0.0.1', hostname: 'hooks.example.com' });
    });
  });
});
