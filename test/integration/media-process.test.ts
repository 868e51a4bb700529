import { expect } from 'chai';
import zlib from 'node:zlib';
import sharp from 'sharp';
import {
  makeWorkspace,
  startTestApp,
  startTestWorkers,
  type TestApp,
  type TestWorkers,
} from '../support/context.js';
import { api, expectStatus } from '../support/authoring.js';
import { waitFor } from '../support/http.js';
import { avSample, pngOf, uploadForm } from '../support/media.js';
import { runJobWorker } from '@lectern/jobs';
import { mediaProcessJob, type MediaVariantRecord } from '@lectern/media';
import { boundQuery } from '@lectern/db';
import type { MediaDto } from '@lectern/contracts';

/** A PNG whose header claims `w`×`h` with one tiny IDAT: what a decompression bomb looks like before decoding. */
function pngClaiming(w: number, h: number): Buffer {
  const chunk = (type: string, data: Buffer) => {
    const len = Buffer.alloc(4);
    len.writeUInt32BE(data.length);
    const td = Buffer.concat([Buffer.from(type), data]);
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(zlib.crc32(td));
    return Buffer.concat([len, td, crc]);
  };
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(w, 0);
  ihdr.writeUInt32BE(h, 4);
  ihdr[8] = 8; // bit depth
  ihdr[9] = 0; // greyscale
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', ihdr),
    chunk('IDAT', zlib.deflateSync(Buffer.alloc(1 + Math.min(w, 4096)))),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

describe('media: the media.process job (sharp, ffprobe/ffmpeg; docs/media.md "Processing")', () => {
  let app: TestApp;
  let workers: TestWorkers;
  before(async () => {
    app = await startTestApp();
    workers = await startTestWorkers('media', (rt) =>
      runJobWorker(rt, mediaProcessJob({ storage: rt.storage })),
    );
  });
  after(async () => {
    await workers?.stop();
    await app?.close();
  });
  const em = () => app.rt.orm.em.fork();

  const uploadAndWait = async (bytes: Buffer, kind = 'image'): Promise<MediaDto> => {
    const ws = await makeWorkspace(em(), 'build', 'Media processing');
    const res = await uploadForm(app.base, ws.key, { kind, file: { bytes } });
    expectStatus(res, 201);
    const req = api(app.base, ws.key);
    return waitFor(
      async () => {
        const m = (await req<MediaDto>('GET', `/media/${res.body.data.id}`)).body.data;
        return m.status === 'processing' ? null : m;
      },
      { timeoutMs: 60_000, what: 'processing' },
    );
  };
  const variantsOf = async (id: string) =>
    (
      await boundQuery<{ variants: MediaVariantRecord[] }>(em(), 'select variants from media where id = ?', [
        id,
      ])
    )[0]!.variants;

  it('a JPEG with EXIF GPS and orientation 6 → ready, oriented size, WebP variants never enlarged, no EXIF/GPS, a placeholder', async () => {
    const jpeg = await sharp({ create: { width: 1200, height: 800, channels: 3, background: '#3366aa' } })
      .jpeg()
      .withExif({
        IFD0: { Copyright: 'someone' },
        IFD3: { GPSLatitudeRef: 'N', GPSLatitude: '48/1 51/1 0/1' },
      })
      .withMetadata({ orientation: 6 })
      .toBuffer();
    const exif = (await sharp(jpeg).metadata()).exif!;
    expect(exif.indexOf(Buffer.from([0x25, 0x88]))).to.be.greaterThan(-1); // the GPS IFD pointer is there
    const m = await uploadAndWait(jpeg);
    expect(m.status, m.error ?? '').to.equal('ready');
    expect([m.width, m.height]).to.deep.equal([800, 1200]);
    expect(m.variants.map((v) => v.width)).to.deep.equal([480, 800]);
    expect(m.placeholder).to.match(/^data:image\/webp;base64,/);
    for (const v of await variantsOf(m.id)) {
      const meta = await sharp(await app.rt.storage.get(v.key)).metadata();
      expect(meta.format).to.equal('webp');
      expect(meta.exif, 'no EXIF in a derived file').to.equal(undefined);
      expect(meta.width).to.be.at.most(800);
      expect(meta.height! > meta.width!, 'orientation applied').to.equal(true);
    }
  });

  it('a large PNG gets 480/960/1920 variants; a small one is never enlarged', async () => {
    const big = await uploadAndWait(await pngOf(2400, 300));
    expect(big.variants.map((v) => v.width)).to.deep.equal([480, 960, 1920]);
    const small = await uploadAndWait(await pngOf(200, 100));
    expect(small.variants.map((v) => [v.width, v.height])).to.deep.equal([[200, 100]]);
  });

  for (const [w, h] of [
    [1, 100_000],
    [20_000, 20_000],
  ] as const) {
    it(`a bomb PNG (${w}×${h}) fails cleanly; the file stays usable as uploaded`, async () => {
      const m = await uploadAndWait(pngClaiming(w, h));
      expect(m.status).to.equal('failed');
      expect(m.error).to.match(new RegExp(`${w}×${h}|pixel limit`));
      expect(m.variants).to.deep.equal([]);
      expect((await fetch(m.previewUrl)).status).to.equal(200);
    });
  }

  it('a short MP4 made with ffmpeg → duration, dimensions and a WebP poster frame', async () => {
    const m = await uploadAndWait(await avSample('mp4'), 'video');
    expect(m.status, m.error ?? '').to.equal('ready');
    expect([m.width, m.height]).to.deep.equal([320, 240]);
    expect(m.durationSeconds).to.be.closeTo(2, 0.2);
    expect(m.variants).to.have.length(1);
    expect(m.variants[0]).to.include({ role: 'poster', width: 320, height: 240, contentType: 'image/webp' });
  });

  it('a short MP3 made with ffmpeg → duration, no dimensions; an audio file as kind image → 400', async () => {
    const bytes = await avSample('mp3');
    const m = await uploadAndWait(bytes, 'audio');
    expect(m.status, m.error ?? '').to.equal('ready');
    expect(m.contentType).to.equal('audio/mpeg');
    expect(m.durationSeconds).to.be.closeTo(2, 0.2);
    expect([m.width, m.height]).to.deep.equal([null, null]);
    const ws = await makeWorkspace(em(), 'build');
    const res = await uploadForm(app.base, ws.key, { kind: 'image', file: { bytes } });
    expect(res.status).to.equal(400);
  });
});
