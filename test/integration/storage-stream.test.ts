import { expect } from 'chai';
import { createHash, randomBytes } from 'node:crypto';
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { STREAM_PART_SIZE, type Storage } from '@lectern/storage';
import { testConfig, testRuntime, type TestRuntime } from '../support/context.js';
import { closeRuntime } from '@lectern/runtime';

/**
 * `Storage.putStream` (docs/media.md "Upload"): a body of unknown length written as it is read, one PUT when it fits
 * a part, a multipart upload otherwise, aborted (nothing kept) when the source fails. Against the loopback store,
 * the one `lectern start` and the tests use; MinIO speaks the same requests.
 */
describe('storage: putStream writes a body of unknown length as it arrives', () => {
  let rt: TestRuntime;
  let storage: Storage;
  before(async () => {
    rt = await testRuntime('storage-stream');
    storage = rt.storage;
  });
  after(async () => closeRuntime(rt, { keepStorage: true }));

  const chunksOf = async function* (bytes: Buffer, size = 64 * 1024): AsyncGenerator<Buffer> {
    for (let i = 0; i < bytes.length; i += size) yield bytes.subarray(i, i + size);
  };
  const md5 = (b: Buffer) => createHash('md5').update(b).digest('hex');
  const pendingParts = () =>
    readdir(path.join(testConfig().DATA_DIR, 's3', storage.bucket, '._S3rver_uploads')).catch(() => []);
  const key = (name: string) => `stream-test/${name}`;

  for (const [label, size] of [
    ['empty', 0],
    ['one byte', 1],
    ['one byte under a part', STREAM_PART_SIZE - 1],
    ['exactly one part', STREAM_PART_SIZE],
    ['a part and a byte', STREAM_PART_SIZE + 1],
    ['two parts and a remainder (25 MB)', 25 * 1024 * 1024],
  ] as const) {
    it(`${label} (${size} bytes): stored byte for byte with its type; the size is returned`, async () => {
      const bytes = randomBytes(size);
      const k = key(`${size}`);
      expect(await storage.putStream(k, chunksOf(bytes), 'video/mp4')).to.equal(size);
      const back = await storage.get(k);
      expect(back.length).to.equal(size);
      expect(md5(back)).to.equal(md5(bytes));
      const stat = await storage.client.statObject(storage.bucket, k);
      expect(stat.metaData['content-type']).to.equal('video/mp4');
      expect(await pendingParts()).to.deep.equal([]);
    });
  }

  for (const [label, size, expectedBytes] of [
    ['the expected size, exactly', 3 * STREAM_PART_SIZE + 777, 3 * STREAM_PART_SIZE + 777],
    ['a little more than expected', 3 * STREAM_PART_SIZE + 5, 3 * STREAM_PART_SIZE],
    ['parts more than expected', 3 * STREAM_PART_SIZE + 5, STREAM_PART_SIZE],
    ['expected less than a part (not streamed)', 2 * STREAM_PART_SIZE, STREAM_PART_SIZE - 1],
  ] as const)
    it(`expectedBytes: ${label} → stored byte for byte, no parts left`, async () => {
      const bytes = randomBytes(size);
      const k = key(`expected-${size}-${expectedBytes}`);
      expect(await storage.putStream(k, chunksOf(bytes), 'audio/mpeg', { expectedBytes })).to.equal(size);
      expect(md5(await storage.get(k))).to.equal(md5(bytes));
      expect(await pendingParts()).to.deep.equal([]);
    });

  for (const [label, size] of [
    ['short of what was expected', STREAM_PART_SIZE + 10],
    ['empty', 0],
  ] as const)
    it(`expectedBytes: a source ${label} fails as short_source; no object, no parts`, async () => {
      const k = key(`short-${size}`);
      let caught: unknown;
      await storage
        .putStream(k, chunksOf(randomBytes(size)), undefined, { expectedBytes: 3 * STREAM_PART_SIZE })
        .catch((err: unknown) => (caught = err));
      expect((caught as { code?: string }).code).to.equal('short_source');
      expect(await storage.client.statObject(storage.bucket, k).catch(() => 'missing')).to.equal('missing');
      await new Promise((r) => setTimeout(r, 200));
      expect(await pendingParts()).to.deep.equal([]);
    });

  it('expectedBytes: a source that fails while its bytes are written as they arrive → the error, no object, no parts', async () => {
    const k = key('expected-fail');
    async function* failing() {
      yield* chunksOf(randomBytes(STREAM_PART_SIZE + STREAM_PART_SIZE / 2));
      throw new Error('the client went away');
    }
    let caught: unknown;
    await storage
      .putStream(k, failing(), undefined, { expectedBytes: 4 * STREAM_PART_SIZE })
      .catch((err: unknown) => (caught = err));
    expect((caught as Error).message).to.equal('the client went away');
    expect(await storage.client.statObject(storage.bucket, k).catch(() => 'missing')).to.equal('missing');
    // The part cut off mid-body may land in the store a moment after the abort; it must not stay.
    await new Promise((r) => setTimeout(r, 200));
    expect(await pendingParts()).to.deep.equal([]);
  });

  it('uneven chunks (1 byte to 1 MiB) make the same object', async () => {
    const bytes = randomBytes(2 * STREAM_PART_SIZE + 12345);
    async function* uneven() {
      let at = 0;
      let n = 1;
      while (at < bytes.length) {
        const next = Math.min(bytes.length, at + 1 + n);
        yield bytes.subarray(at, next);
        at = next;
        n = (n * 7 + 3) % 1_048_573;
      }
    }
    const k = key('uneven');
    expect(await storage.putStream(k, uneven())).to.equal(bytes.length);
    expect(md5(await storage.get(k))).to.equal(md5(bytes));
  });

  for (const failAt of [100, STREAM_PART_SIZE + 100, 3 * STREAM_PART_SIZE + 100])
    it(`a source that fails after ${failAt} bytes: the error comes back, no object, no parts left`, async () => {
      const k = key(`fail-${failAt}`);
      async function* failing() {
        yield* chunksOf(randomBytes(failAt));
        throw new Error('the client went away');
      }
      let caught: unknown;
      await storage.putStream(k, failing()).catch((err: unknown) => (caught = err));
      expect((caught as Error).message).to.equal('the client went away');
      const gone = await storage.client.statObject(storage.bucket, k).catch(() => 'missing');
      expect(gone).to.equal('missing');
      expect(await pendingParts()).to.deep.equal([]);
    });

  it('a second putStream to the same key replaces the object whole', async () => {
    const k = key('replace');
    await storage.putStream(k, chunksOf(randomBytes(STREAM_PART_SIZE * 2 + 5)));
    const second = randomBytes(1000);
    await storage.putStream(k, chunksOf(second));
    expect(md5(await storage.get(k))).to.equal(md5(second));
  });
});
