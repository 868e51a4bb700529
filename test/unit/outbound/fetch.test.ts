import { expect } from 'chai';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import {
  HEAD_BYTES,
  fetchToFile,
  guardedFetch,
  isForbiddenAddress,
  type ResolvedAddress,
} from '@lectern/outbound';

interface TestServer {
  origin: string;
  port: number;
  /** Requests per path, in order. */
  hits: string[];
  close: () => Promise<void>;
}

/** A real HTTP server on a loopback address; `host` 127.0.0.2 works too (all of 127/8 is loopback on Linux). */
async function serve(handler: http.RequestListener, host = '127.0.0.1'): Promise<TestServer> {
  const hits: string[] = [];
  const server = http.createServer((req, res) => {
    hits.push(req.url ?? '');
    handler(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://${host}:${port}`,
    port,
    hits,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

const PNG_HEAD = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
const isPng = (head: Buffer) => (head.subarray(0, 8).equals(PNG_HEAD) ? null : 'not a PNG image');

/**
 * The real address policy with one exception: the test server's own 127.0.0.1 stands in for a public host, so a
 * redirect from it to a private address can be tried for real with `allowPrivate: false`.
 */
const publicLoopback = (address: string) => address !== '127.0.0.1' && isForbiddenAddress(address);

describe('outbound: guarded fetches over real HTTP', () => {
  let dir: string;
  const servers: TestServer[] = [];
  const track = (s: TestServer) => (servers.push(s), s);

  beforeEach(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'lectern-outbound-'));
  });
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((s) => s.close()));
    await rm(dir, { recursive: true, force: true });
  });

  describe('redirects', () => {
    it('are not followed by default: a 3xx is a failure and its target is never asked', async () => {
      const s = track(
        await serve((req, res) => {
          if (req.url === '/a') res.writeHead(302, { location: '/b' }).end();
          else if (req.url === '/no-location') res.writeHead(303).end();
          else res.end('b');
        }),
      );
      const file = path.join(dir, 'f');
      const got = await fetchToFile(`${s.origin}/a`, {
        allowPrivate: true,
        maxBytes: 100,
        timeoutMs: 2000,
        file,
      });
      expect(got).to.deep.equal({ ok: false, reason: 'HTTP 302 (redirects are not followed)' });
      expect(s.hits).to.deep.equal(['/a']);
      expect(existsSync(file)).to.equal(false);
      // Worded as before redirects could be followed at all, Location or not: SCORM export warnings show it.
      expect(
        await guardedFetch(`${s.origin}/no-location`, { allowPrivate: true, maxBytes: 100, timeoutMs: 2000 }),
      ).to.deep.equal({ ok: false, reason: 'HTTP 303 (redirects are not followed)' });
    });

    it('are followed up to maxRedirects, relative and absolute, and one more is refused', async () => {
      const s = track(
        await serve((req, res) => {
          const n = Number(req.url?.slice(1));
          // Odd hops answer 301 with an absolute Location, even ones 307 with a relative one.
          const location = n % 2 ? `http://${req.headers.host}/${n - 1}` : `/${n - 1}`;
          if (n > 0) res.writeHead(n % 2 ? 301 : 307, { location }).end();
          else res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
        }),
      );
      const opts = { allowPrivate: true, maxBytes: 1000, timeoutMs: 2000, maxRedirects: 3 };
      const got = await guardedFetch(`${s.origin}/3`, opts);
      expect(got.ok).to.equal(true);
      if (!got.ok) return;
      expect(got.url).to.equal(`${s.origin}/0`);
      expect(got.contentType).to.equal('application/json');
      expect(JSON.parse(got.body.toString('utf8'))).to.deep.equal({ ok: true });

      const file = path.join(dir, 'f');
      const far = await fetchToFile(`${s.origin}/4`, { ...opts, file });
      expect(far).to.deep.equal({ ok: false, reason: 'HTTP 301: more than 3 redirects' });
      expect(s.hits.slice(-4)).to.deep.equal(['/4', '/3', '/2', '/1']);
      expect(existsSync(file)).to.equal(false);
    });

    it('to a private address is refused before connecting, whatever the spelling or the name', async () => {
      const inside = track(await serve((_req, res) => res.end('secret'), '127.0.0.2'));
      const targets: Record<string, string> = {
        '/metadata': 'http://169.254.169.254/latest/meta-data/',
        '/inside': `${inside.origin}/`,
        '/inside-hex': `http://0x7f.0.0.2:${inside.port}/`,
        '/localhost': `http://localhost:${inside.port}/`,
        '/rebound': `http://files.example.test:${inside.port}/`,
      };
      const outside = track(
        await serve((req, res) => res.writeHead(302, { location: targets[req.url ?? ''] }).end()),
      );
      // The name resolves to the private server: the redirect hop is resolved and judged like the first.
      const lookup = async (): Promise<ResolvedAddress[]> => [{ address: '10.0.0.7', family: 4 }];
      const reasons: Record<string, string> = {
        '/metadata': 'refused redirect: private address 169.254.169.254',
        '/inside': 'refused redirect: private address 127.0.0.2',
        '/inside-hex': 'refused redirect: private address 127.0.0.2',
        '/localhost': 'refused redirect: forbidden host name localhost',
        '/rebound': 'refused redirect: private address 10.0.0.7',
      };
      for (const p of Object.keys(targets)) {
        const opts = { allowPrivate: false, isForbidden: publicLoopback, lookup, maxRedirects: 5 };
        const file = path.join(dir, 'f');
        expect(
          await fetchToFile(`${outside.origin}${p}`, { ...opts, maxBytes: 100, timeoutMs: 2000, file }),
          p,
        ).to.deep.equal({ ok: false, reason: reasons[p] });
        expect(existsSync(file)).to.equal(false);
        expect(
          await guardedFetch(`${outside.origin}${p}`, { ...opts, maxBytes: 100, timeoutMs: 2000 }),
          p,
        ).to.deep.equal({ ok: false, reason: reasons[p] });
      }
      expect(inside.hits).to.deep.equal([]);
    });

    it('to a scheme other than http(s) or with credentials is refused', async () => {
      const s = track(
        await serve((req, res) =>
          res
            .writeHead(302, {
              location: req.url === '/ftp' ? 'ftp://files.example.com/a' : 'http://u:p@h.example.com/',
            })
            .end(),
        ),
      );
      const opts = { allowPrivate: true, maxBytes: 100, timeoutMs: 2000, maxRedirects: 2 };
      expect(await guardedFetch(`${s.origin}/ftp`, opts)).to.deep.equal({
        ok: false,
        reason: 'refused redirect: unsupported scheme ftp: (only http and https)',
      });
      expect(await guardedFetch(`${s.origin}/creds`, opts)).to.deep.equal({
        ok: false,
        reason: 'refused redirect: credentials in URL are not allowed',
      });
    });
  });

  describe('size cap', () => {
    it('refuses a declared Content-Length over the cap, and a chunked body that grows past it', async () => {
      const big = Buffer.alloc(5000, 7);
      const s = track(
        await serve((req, res) => {
          if (req.url === '/declared') return res.writeHead(200, { 'content-length': big.length }).end(big);
          res.writeHead(200, { 'transfer-encoding': 'chunked' });
          for (let i = 0; i < 10; i++) res.write(big.subarray(0, 500));
          res.end();
        }),
      );
      const file = path.join(dir, 'f');
      const opts = { allowPrivate: true, maxBytes: 4000, timeoutMs: 2000 };
      const reason = 'larger than 4000 bytes';
      for (const p of ['/declared', '/chunked']) {
        expect(await fetchToFile(`${s.origin}${p}`, { ...opts, file }), p).to.deep.equal({
          ok: false,
          reason,
        });
        expect(existsSync(file), p).to.equal(false);
        expect(await guardedFetch(`${s.origin}${p}`, opts), p).to.deep.equal({ ok: false, reason });
      }
      const fits = await fetchToFile(`${s.origin}/chunked`, { ...opts, maxBytes: 5000, file });
      expect(fits.ok && fits.bytes).to.equal(5000);
      expect((await readFile(file)).length).to.equal(5000);
    });
  });

  describe('timeout', () => {
    it('gives up on a server that answers the headers and then stalls, and leaves no file', async () => {
      const s = track(
        await serve((_req, res) => {
          res.writeHead(200, { 'content-length': 1000 });
          res.write('partial');
          // Never ends: the fetch's own deadline must end it.
        }),
      );
      const file = path.join(dir, 'f');
      const opts = { allowPrivate: true, maxBytes: 4000, timeoutMs: 200 };
      expect(await fetchToFile(s.origin, { ...opts, file })).to.deep.equal({
        ok: false,
        reason: 'timed out after 200 ms',
      });
      expect(existsSync(file)).to.equal(false);
      expect(await guardedFetch(s.origin, opts)).to.deep.equal({
        ok: false,
        reason: 'timed out after 200 ms',
      });
    });

    it('counts the redirects into the one deadline', async () => {
      const s = track(
        await serve((req, res) => {
          if (req.url === '/') res.writeHead(302, { location: '/stall' }).end();
          // /stall never answers at all.
        }),
      );
      const got = await guardedFetch(s.origin, {
        allowPrivate: true,
        maxBytes: 100,
        timeoutMs: 200,
        maxRedirects: 1,
      });
      expect(got).to.deep.equal({ ok: false, reason: 'timed out after 200 ms' });
      expect(s.hits).to.deep.equal(['/', '/stall']);
    });
  });

  describe('type check by first bytes', () => {
    it('refuses an SVG served as image/png at a .png URL, and leaves no file', async () => {
      const s = track(
        await serve((_req, res) =>
          res
            .writeHead(200, { 'content-type': 'image/png' })
            .end('<svg xmlns="http://www.w3.org/2000/svg"/>'),
        ),
      );
      const file = path.join(dir, 'f');
      const got = await fetchToFile(`${s.origin}/logo.png`, {
        allowPrivate: true,
        maxBytes: 100_000,
        timeoutMs: 2000,
        file,
        check: isPng,
      });
      expect(got).to.deep.equal({ ok: false, reason: 'not a PNG image' });
      expect(existsSync(file)).to.equal(false);
    });

    it('decides at the first bytes of a large body, and passes a right one whole', async () => {
      const wrong = Buffer.alloc(HEAD_BYTES * 8, 0x41);
      const right = Buffer.concat([PNG_HEAD, Buffer.alloc(HEAD_BYTES * 8, 1)]);
      const s = track(
        await serve((req, res) => {
          const body = req.url === '/right.png' ? right : wrong;
          res.writeHead(200, { 'transfer-encoding': 'chunked' });
          for (let i = 0; i < body.length; i += 1024) res.write(body.subarray(i, i + 1024));
          res.end();
        }),
      );
      const file = path.join(dir, 'f');
      const opts = { allowPrivate: true, maxBytes: 1_000_000, timeoutMs: 2000, file, check: isPng };
      expect(await fetchToFile(`${s.origin}/wrong.png`, opts)).to.deep.equal({
        ok: false,
        reason: 'not a PNG image',
      });
      expect(existsSync(file)).to.equal(false);
      const got = await fetchToFile(`${s.origin}/right.png`, opts);
      expect(got.ok && got.bytes).to.equal(right.length);
      expect((await readFile(file)).equals(right)).to.equal(true);
    });

    it('checks a body shorter than the head it would wait for', async () => {
      const s = track(await serve((req, res) => res.end(req.url === '/tiny.png' ? PNG_HEAD : 'GIF89a')));
      const file = path.join(dir, 'f');
      const opts = { allowPrivate: true, maxBytes: 1000, timeoutMs: 2000, file, check: isPng };
      expect(await fetchToFile(`${s.origin}/tiny.gif`, opts)).to.deep.equal({
        ok: false,
        reason: 'not a PNG image',
      });
      const got = await fetchToFile(`${s.origin}/tiny.png`, opts);
      expect(got.ok && got.head.equals(PNG_HEAD)).to.equal(true);
    });
  });
});
