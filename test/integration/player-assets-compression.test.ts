/**
 * The embed's bundle goes over the wire compressed: brotli or gzip as the browser's Accept-Encoding allows,
 * `Vary: Accept-Encoding`, an ETag per encoding and 304 on a match; a client that refuses compression gets the
 * plain bytes. Read with node:http (fetch would decompress and hide the sizes on the wire).
 */
import { expect } from 'chai';
import http from 'node:http';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { readFileSync } from 'node:fs';
import { startTestApp, type TestApp } from '../support/context.js';
import { buildPlayerOnce } from '../support/player-browser.js';
import type { PlayerAssets } from '@lectern/player';

interface Raw {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

function rawGet(base: string, path: string, headers: Record<string, string>): Promise<Raw> {
  return new Promise((resolve, reject) => {
    const req = http.get(new URL(path, base), { headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () =>
        resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks) }),
      );
      res.on('error', reject);
    });
    req.on('error', reject);
  });
}

describe('player assets: the bundle is served precompressed (brotli or gzip)', function () {
  this.timeout(120_000);
  let app: TestApp;
  let assets: PlayerAssets;
  let jsPath: string;
  let plainJs: Buffer;

  before(async () => {
    assets = await buildPlayerOnce();
    app = await startTestApp({ PLAYER_ASSETS_DIR: assets.dir });
    jsPath = `/player/assets/${assets.js.file}`;
    plainJs = readFileSync(assets.js.path);
  });
  after(async () => {
    await app?.close();
  });

  it('answers brotli to a browser, about a third of the plain size, with Vary and a strong ETag', async () => {
    const res = await rawGet(app.url, jsPath, { 'accept-encoding': 'gzip, deflate, br, zstd' });
    expect(res.status).to.equal(200);
    expect(res.headers['content-encoding']).to.equal('br');
    expect(res.headers.vary).to.match(/accept-encoding/i);
    expect(res.headers['content-type']).to.match(/javascript/);
    expect(res.headers['cache-control']).to.equal('public, max-age=31536000, immutable');
    expect(Number(res.headers['content-length'])).to.equal(res.body.length);
    expect(brotliDecompressSync(res.body).equals(plainJs)).to.equal(true);
    // The bundle budget is 60 KB gzipped for JS + CSS; on the wire the script alone is well under half its size.
    expect(res.body.length).to.be.below(plainJs.length * 0.4);
    expect(res.body.length).to.be.at.most(assets.js.gzipBytes);
    expect(res.headers.etag).to.match(/^"[A-Za-z0-9_-]+"$/);
  });

  it('answers gzip where brotli is not accepted, and plain bytes where nothing is', async () => {
    const gz = await rawGet(app.url, jsPath, { 'accept-encoding': 'gzip' });
    expect(gz.headers['content-encoding']).to.equal('gzip');
    expect(gunzipSync(gz.body).equals(plainJs)).to.equal(true);
    expect(gz.body.length).to.be.below(plainJs.length * 0.45);

    const none = await rawGet(app.url, jsPath, {});
    expect(none.status).to.equal(200);
    expect(none.headers['content-encoding']).to.equal(undefined);
    expect(none.body.equals(plainJs)).to.equal(true);

    const refused = await rawGet(app.url, jsPath, { 'accept-encoding': 'br;q=0, gzip;q=0' });
    expect(refused.headers['content-encoding']).to.equal(undefined);
    expect(refused.body.equals(plainJs)).to.equal(true);

    // Any acceptable weight is enough: brotli, the smaller, whenever it is acceptable at all.
    const weighted = await rawGet(app.url, jsPath, { 'accept-encoding': 'gzip;q=1, br;q=0.5' });
    expect(weighted.headers['content-encoding']).to.equal('br');

    // Each encoding is its own representation: three different ETags.
    const br = await rawGet(app.url, jsPath, { 'accept-encoding': 'br' });
    expect(new Set([br.headers.etag, gz.headers.etag, none.headers.etag]).size).to.equal(3);
  });

  it('answers 304 for the ETag of the same encoding only', async () => {
    const first = await rawGet(app.url, jsPath, { 'accept-encoding': 'br' });
    const again = await rawGet(app.url, jsPath, {
      'accept-encoding': 'br',
      'if-none-match': first.headers.etag!,
    });
    expect(again.status).to.equal(304);
    expect(again.body.length).to.equal(0);
    expect(again.headers.etag).to.equal(first.headers.etag);
    expect(again.headers.vary).to.match(/accept-encoding/i);
    // The brotli tag does not validate the gzip bytes.
    const other = await rawGet(app.url, jsPath, {
      'accept-encoding': 'gzip',
      'if-none-match': first.headers.etag!,
    });
    expect(other.status).to.equal(200);
    expect(other.headers['content-encoding']).to.equal('gzip');
  });

  it('compresses the stylesheet too, and still serves nothing but the two hashed files', async () => {
    const css = await rawGet(app.url, `/player/assets/${assets.css.file}`, { 'accept-encoding': 'br' });
    expect(css.status).to.equal(200);
    expect(css.headers['content-encoding']).to.equal('br');
    expect(brotliDecompressSync(css.body).equals(readFileSync(assets.css.path))).to.equal(true);
    for (const name of ['manifest.json', '..%2Fmanifest.json', 'player.js', `${assets.js.file}.br`]) {
      const res = await rawGet(app.url, `/player/assets/${name}`, { 'accept-encoding': 'br' });
      expect(res.status, name).to.equal(404);
      expect(res.headers['content-encoding'], name).to.equal(undefined);
    }
  });
});
