import * as Minio from 'minio';
import { createReadStream, createWriteStream } from 'node:fs';
import { createHash } from 'node:crypto';
import { mkdir, readFile, rename, rm, stat } from 'node:fs/promises';
import http from 'node:http';
import https from 'node:https';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { once } from 'node:events';

export interface StorageConfig {
  S3_ENDPOINT?: string;
  /**
   * The address browsers reach the store at, when it differs from S3_ENDPOINT: presigned URLs are signed by a
   * client built on it (the signature covers the Host header, so rewriting a URL's host afterwards breaks it).
   */
  S3_PUBLIC_ENDPOINT?: string;
  S3_ACCESS_KEY: string;
  S3_SECRET_KEY: string;
  S3_BUCKET: string;
  S3_REGION: string;
  DATA_DIR: string;
}

export interface Storage {
  client: Minio.Client;
  bucket: string;
  endpoint: string;
  /** The address presigned URLs carry (S3_PUBLIC_ENDPOINT, else `endpoint`): what browsers load media from. */
  publicEndpoint: string;
  put(key: string, body: Buffer | string, contentType?: string): Promise<void>;
  /**
   * Uploads a file from disk as it is read (memory stays a few chunks whatever its size); returns its size.
   * minio's `putObject` reads a stream whole into memory when it fits one part, so this sends one signed PUT
   * (a presigned URL, valid for `expirySeconds`) with the file as its body and a known Content-Length.
   */
  putFile(key: string, file: string, contentType?: string): Promise<number>;
  /**
   * Writes the bytes of `source` to `key` as they are read, for a body whose length is not known up front (an
   * upload still arriving): what fits one part (`STREAM_PART_SIZE`) goes as one PUT, anything longer as an S3
   * multipart upload, each part sent while the next is read (at most two parts in memory; see `expectedBytes` for
   * a length known in advance). When `source` throws, the multipart upload is aborted and nothing is stored.
   * Returns the size.
   */
  putStream(
    key: string,
    source: AsyncIterable<Buffer>,
    contentType?: string,
    opts?: {
      /**
       * How many bytes the source will hold at least (an upload's declared length less its framing): when that is
       * a part or more, those bytes are one part written to the store as they arrive (nothing of them held), and
       * what comes past them follows as the last part. A source that ends short of it fails (`code:
       * 'short_source'`) and nothing is stored: the bytes already sent cannot be taken back into a shorter part.
       */
      expectedBytes?: number;
    },
  ): Promise<number>;
  get(key: string): Promise<Buffer>;
  stream(key: string): Promise<Readable>;
  /** Streams an object to a file on disk (never held in memory); returns its size in bytes. */
  getToFile(key: string, filePath: string): Promise<number>;
  remove(key: string): Promise<void>;
  presignGet(key: string, expirySeconds?: number, opts?: { filename?: string }): Promise<string>;
  ensureBucket(): Promise<void>;
  ping(): Promise<void>;
  close(): Promise<void>;
}

interface LoopbackServer {
  close(): Promise<void>;
}

/**
 * Part size for the minio client. The loopback S3 server has no multipart upload, and
 * nothing we store exceeds the 100 MB SCORM limit, so every upload goes as one PUT.
 */
const PART_SIZE = 128 * 1024 * 1024;

/**
 * Part size of `putStream`'s multipart uploads: S3's least (5 MiB), so an upload holds at most 10 MiB in memory
 * (the part on the wire and the one being read) whatever its size; a 25 MB upload is five parts.
 */
export const STREAM_PART_SIZE = 5 * 1024 * 1024;

/**
 * How much of a part written as it arrives may wait in this process for the store's socket before the source is
 * read again. Node's default (16 KiB) makes the source, this process and the store take turns every few chunks;
 * 1 MiB lets them run side by side, and is all an upload holds here.
 */
const STREAM_WINDOW = 1024 * 1024;

const LOOPBACK_CORS =
  '<CORSConfiguration><CORSRule><AllowedOrigin>*</AllowedOrigin><AllowedMethod>GET</AllowedMethod>' +
  '<AllowedMethod>HEAD</AllowedMethod><AllowedHeader>*</AllowedHeader></CORSRule></CORSConfiguration>';

/** The loopback store's first middleware (Koa's shape, kept local: koa is no dependency of this lib). */
async function refuseAnonymous(
  ctx: {
    method: string;
    get(h: string): string;
    query: Record<string, unknown>;
    status: number;
    type: string;
    body: unknown;
  },
  next: () => Promise<unknown>,
): Promise<unknown> {
  const signed =
    ctx.get('authorization') !== '' || 'X-Amz-Signature' in ctx.query || 'Signature' in ctx.query;
  if (signed || ctx.method === 'OPTIONS') return next();
  ctx.status = 403;
  ctx.type = 'application/xml';
  ctx.body =
    '<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>AccessDenied</Code><Message>Access Denied</Message></Error>';
  return undefined;
}

/**
 * The loopback store's answer to S3's AbortMultipartUpload (`DELETE /<bucket>/<key>?uploadId=…`), which s3rver
 * lacks: the parts received so far are removed (s3rver keeps them in `<bucket>/.uploads/<id>`), so an upload
 * refused mid-body leaves nothing behind here either, as it does in MinIO.
 */
function abortMultipart(directory: string) {
  return async (
    ctx: { method: string; path: string; query: Record<string, unknown>; status: number; body: unknown },
    next: () => Promise<unknown>,
  ): Promise<unknown> => {
    const uploadId = ctx.query.uploadId;
    if (ctx.method !== 'DELETE' || typeof uploadId !== 'string') return next();
    const bucket = decodeURIComponent(ctx.path.split('/')[1] ?? '');
    if (!/^[0-9a-f]{32}$/.test(uploadId) || !/^[a-z0-9.-]{3,63}$/.test(bucket)) {
      ctx.status = 404;
      return undefined;
    }
    await rm(path.join(directory, bucket, '._S3rver_uploads', uploadId), { recursive: true, force: true });
    ctx.status = 204;
    ctx.body = null;
    return undefined;
  };
}

/**
 * Opens one PUT to a presigned address with a known Content-Length; the caller writes the body. No payload hash to
 * compute (the URL is signed for an unsigned payload). `done` is the ETag the store answered with; it rejects on a
 * non-2xx answer or a broken request (also when the caller destroys `req`).
 */
function openPut(
  address: string,
  key: string,
  size: number,
  contentType?: string,
): { req: http.ClientRequest; done: Promise<string> } {
  const url = new URL(address);
  const transport = url.protocol === 'https:' ? https : http;
  const req = transport.request(url, {
    method: 'PUT',
    headers: { 'Content-Length': size, ...(contentType ? { 'Content-Type': contentType } : {}) },
  });
  const done = new Promise<string>((resolve, reject) => {
    req.on('response', (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.length < 64 && chunks.push(c));
      res.on('end', () => {
        const status = res.statusCode ?? 0;
        if (status >= 200 && status < 300) resolve(String(res.headers.etag ?? '').replace(/"/g, ''));
        else
          reject(new Error(`PUT ${key}: HTTP ${status} ${Buffer.concat(chunks).toString().slice(0, 500)}`));
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.on('close', () => reject(new Error(`PUT ${key}: the request closed before an answer`)));
  });
  done.catch(() => undefined);
  return { req, done };
}

/** One PUT of a whole body: a file's stream, or chunks held in memory. Returns the ETag. */
function signedPut(
  address: string,
  key: string,
  body: Readable | Buffer[],
  size: number,
  contentType?: string,
): Promise<string> {
  const { req, done } = openPut(address, key, size, contentType);
  if (Array.isArray(body)) {
    for (const chunk of body) req.write(chunk);
    req.end();
  } else pipeline(body, req).catch((err: Error) => req.destroy(err));
  return done;
}

/** What `completeQuickly` uses of s3rver's filesystem store (5.0.0, pinned). */
interface S3rverStore {
  getResourcePath(bucket: string, key: string | undefined, resource: string): string;
  putMetadata(bucket: string, key: string, metadata: unknown, md5: string): Promise<void>;
  putObjectMultipart(
    bucket: string,
    uploadId: string,
    parts: { number: number; etag: string }[],
  ): Promise<{ size: number; md5: string }>;
}

/**
 * The loopback store's CompleteMultipartUpload, made what MinIO's and S3's are: the parts become the object without
 * being read again. s3rver's own reads every part back, hashes the whole object and writes it anew, which on a
 * 25 MB upload costs about as much as the upload itself (test/bench/README.md "media"). Here the first part's file
 * is renamed into place and the others appended (no hashing); the ETag is S3's multipart one, the MD5 of the parts'
 * MD5s and their count. A part missing or not matching its ETag is S3's InvalidPart.
 */
function completeQuickly(store: S3rverStore): void {
  store.putObjectMultipart = async function (bucket, uploadId, parts) {
    const uploadDir = path.join(store.getResourcePath(bucket, undefined, 'uploads'), uploadId);
    const [key, metadata] = await Promise.all([
      readFile(path.join(uploadDir, 'key'), 'utf8'),
      readFile(path.join(uploadDir, 'metadata'), 'utf8').then((m) => JSON.parse(m) as unknown),
    ]);
    const sorted = [...parts].sort((a, b) => a.number - b.number);
    const md5s = await Promise.all(
      sorted.map(async (p) => {
        const md5 = await readFile(path.join(uploadDir, `${p.number}.md5`), 'utf8').catch(() => '');
        if (!md5 || md5 !== p.etag)
          throw Object.assign(new Error(`InvalidPart: part ${p.number}`), { code: 'InvalidPart' });
        return Buffer.from(md5, 'hex');
      }),
    );
    const objectPath = store.getResourcePath(bucket, key, 'object');
    await mkdir(path.dirname(objectPath), { recursive: true });
    const assembling = `${objectPath}.${uploadId}`;
    await rename(path.join(uploadDir, String(sorted[0]!.number)), assembling);
    for (const p of sorted.slice(1))
      await pipeline(
        createReadStream(path.join(uploadDir, String(p.number)), { highWaterMark: 1024 * 1024 }),
        createWriteStream(assembling, { flags: 'a' }),
      );
    await rename(assembling, objectPath);
    const md5 = `${createHash('md5').update(Buffer.concat(md5s)).digest('hex')}-${sorted.length}`;
    await store.putMetadata(bucket, key, metadata, md5);
    await rm(uploadDir, { recursive: true, force: true });
    return { size: (await stat(objectPath)).size, md5 };
  };
}

/**
 * Connects the minio client to S3_ENDPOINT, or, when none is set, starts an S3-compatible
 * server on loopback (data under DATA_DIR/s3) and connects to that. One code path either way.
 */
export async function createStorage(cfg: StorageConfig): Promise<Storage> {
  let endpoint = cfg.S3_ENDPOINT;
  let loopback: LoopbackServer | undefined;
  if (!endpoint) {
    const { default: S3rver } = await import('@20minutes/s3rver');
    const directory = path.resolve(cfg.DATA_DIR, 's3');
    await mkdir(directory, { recursive: true });
    const server = new S3rver({
      port: 0,
      address: '127.0.0.1',
      directory,
      silent: true,
      // Browsers read signed media from another origin than the player's page: a video with caption tracks is
      // loaded with CORS (docs/blocks.md "video"), so the store answers GETs from any origin, as a production
      // bucket is told to (docs/media.md "Settings").
      configureBuckets: [{ name: cfg.S3_BUCKET, configs: [LOOPBACK_CORS] }],
      accessKeyId: cfg.S3_ACCESS_KEY,
      secretAccessKey: cfg.S3_SECRET_KEY,
    });
    // Like a private bucket of MinIO or S3: a request that is not signed (no Authorization header, no presigned
    // query) gets 403, so an object's path alone fetches nothing. s3rver itself serves anonymous requests; Koa
    // composes its middleware when it starts listening, so this one runs first.
    (server as unknown as { middleware: unknown[] }).middleware.unshift(
      refuseAnonymous,
      abortMultipart(directory),
    );
    completeQuickly((server as unknown as { store: S3rverStore }).store);
    const addr = (await server.run()) as { port: number };
    endpoint = `http://127.0.0.1:${addr.port}`;
    loopback = server as LoopbackServer;
  }
  const clientOn = (address: string) => {
    const url = new URL(address);
    const useSSL = url.protocol === 'https:';
    return new Minio.Client({
      endPoint: url.hostname,
      port: url.port ? Number(url.port) : useSSL ? 443 : 80,
      useSSL,
      accessKey: cfg.S3_ACCESS_KEY,
      secretKey: cfg.S3_SECRET_KEY,
      // Known region: presigning never asks the store (the public address may not be reachable from here).
      region: cfg.S3_REGION,
      pathStyle: true,
      partSize: PART_SIZE,
    });
  };
  const client = clientOn(endpoint);
  const signer = cfg.S3_PUBLIC_ENDPOINT ? clientOn(cfg.S3_PUBLIC_ENDPOINT) : client;
  const bucket = cfg.S3_BUCKET;

  const toBuffer = async (s: Readable): Promise<Buffer> => {
    const chunks: Buffer[] = [];
    for await (const c of s) chunks.push(Buffer.isBuffer(c) ? c : Buffer.from(c as Uint8Array));
    return Buffer.concat(chunks);
  };

  return {
    client,
    bucket,
    endpoint,
    publicEndpoint: cfg.S3_PUBLIC_ENDPOINT ?? endpoint,
    async put(key, body, contentType = 'application/octet-stream') {
      const buf = typeof body === 'string' ? Buffer.from(body) : body;
      await client.putObject(bucket, key, buf, buf.length, { 'Content-Type': contentType });
    },
    async putFile(key, file, contentType = 'application/octet-stream') {
      const { size } = await stat(file);
      const url = await client.presignedPutObject(bucket, key, 15 * 60);
      await signedPut(url, key, createReadStream(file), size, contentType);
      return size;
    },
    async putStream(key, source, contentType = 'application/octet-stream', opts = {}) {
      const expected = opts.expectedBytes ?? 0;
      let held: Buffer[] = [];
      let heldBytes = 0;
      let total = 0;
      let uploadId: string | undefined;
      let parts = 0;
      const etags: { part: number; etag: string }[] = [];
      /** The previous part, finishing on the wire; at most one. */
      let inFlight: Promise<void> | undefined;
      /** The first `expectedBytes`, one part written as they arrive; `left`: how many it still waits for. */
      let streamed: { req: http.ClientRequest; done: Promise<void>; left: number } | undefined;
      const initiate = () => client.initiateNewMultipartUpload(bucket, key, { 'Content-Type': contentType });
      const partUrl = (part: number) =>
        client.presignedUrl('PUT', bucket, key, 15 * 60, { partNumber: String(part), uploadId: uploadId! });
      const record = (part: number) => (etag: string) => void etags.push({ part, etag });
      const sendPart = async (part: number, chunks: Buffer[], size: number) =>
        record(part)(await signedPut(await partUrl(part), key, chunks, size));
      /** The part just filled goes on finishing while the next is read; the one before it must be done first. */
      const handOff = async (finishing: Promise<void>) => {
        finishing.catch(() => undefined);
        await inFlight;
        inFlight = finishing;
      };
      try {
        if (expected >= STREAM_PART_SIZE) {
          // The bytes the source will surely hold are one part, written to the store as they arrive: nothing of
          // them is held here, and the store has them all when the source ends (but for what came past them).
          uploadId = await initiate();
          const part = ++parts;
          const put = openPut(await partUrl(part), key, expected);
          streamed = { req: put.req, done: put.done.then(record(part)), left: expected };
          streamed.done.catch(() => undefined);
        }
        for await (const arrived of source) {
          total += arrived.length;
          let chunk = arrived;
          if (streamed && streamed.left > 0) {
            const piece = chunk.length > streamed.left ? chunk.subarray(0, streamed.left) : chunk;
            chunk = chunk.subarray(piece.length);
            streamed.left -= piece.length;
            if (streamed.left === 0) {
              streamed.req.end(piece);
              await handOff(streamed.done);
            } else if (!streamed.req.write(piece) && streamed.req.writableLength >= STREAM_WINDOW)
              await Promise.race([once(streamed.req, 'drain'), streamed.done.then(() => undefined)]);
            if (chunk.length === 0) continue;
          }
          held.push(chunk);
          heldBytes += chunk.length;
          if (heldBytes < STREAM_PART_SIZE) continue;
          uploadId ??= await initiate();
          // One part on the wire while the next is read: the read waits for the previous part, so a slow store
          // holds the uploader back (TCP) instead of filling memory.
          await handOff(sendPart(++parts, held, heldBytes));
          held = [];
          heldBytes = 0;
        }
        if (streamed && streamed.left > 0)
          throw Object.assign(
            new Error(`the source ended ${streamed.left} bytes short of the ${expected} expected`),
            { code: 'short_source' },
          );
        if (!uploadId) {
          await signedPut(
            await client.presignedPutObject(bucket, key, 15 * 60),
            key,
            held,
            heldBytes,
            contentType,
          );
          return total;
        }
        if (heldBytes > 0) {
          // The last part goes beside the one still finishing on the wire; both settle before an abort could
          // follow, so no part lands after it.
          const last = sendPart(++parts, held, heldBytes);
          inFlight = Promise.allSettled([inFlight, last]).then((settled) => {
            for (const r of settled) if (r.status === 'rejected') throw r.reason;
          });
        }
        await inFlight;
        await client.completeMultipartUpload(
          bucket,
          key,
          uploadId,
          etags.sort((a, b) => a.part - b.part),
        );
        return total;
      } catch (err) {
        streamed?.req.destroy();
        await Promise.allSettled([inFlight, streamed?.done]);
        if (uploadId) await client.abortMultipartUpload(bucket, key, uploadId).catch(() => undefined);
        throw err;
      }
    },
    async get(key) {
      return toBuffer(await client.getObject(bucket, key));
    },
    async stream(key) {
      return client.getObject(bucket, key);
    },
    async getToFile(key, filePath) {
      await pipeline(await client.getObject(bucket, key), createWriteStream(filePath));
      return (await stat(filePath)).size;
    },
    async remove(key) {
      await client.removeObject(bucket, key);
    },
    async presignGet(key, expirySeconds = 300, opts = {}) {
      const headers: Record<string, string> = {};
      if (opts.filename)
        headers['response-content-disposition'] = `attachment; filename="${opts.filename.replace(/"/g, '')}"`;
      return signer.presignedGetObject(bucket, key, expirySeconds, headers);
    },
    async ensureBucket() {
      if (!(await client.bucketExists(bucket))) await client.makeBucket(bucket, cfg.S3_REGION);
    },
    async ping() {
      await client.bucketExists(bucket);
    },
    async close() {
      await loopback?.close();
    },
  };
}
