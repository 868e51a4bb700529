import * as Minio from 'minio';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, stat } from 'node:fs/promises';
import http from 'node:http';
import https from 'node:https';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';

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
    (server as unknown as { middleware: unknown[] }).middleware.unshift(refuseAnonymous);
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
      const url = new URL(await client.presignedPutObject(bucket, key, 15 * 60));
      const transport = url.protocol === 'https:' ? https : http;
      await new Promise<void>((resolve, reject) => {
        const req = transport.request(url, {
          method: 'PUT',
          headers: { 'Content-Length': size, 'Content-Type': contentType },
        });
        req.on('response', (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.length < 64 && chunks.push(c));
          res.on('end', () => {
            const status = res.statusCode ?? 0;
            if (status >= 200 && status < 300) resolve();
            else
              reject(
                new Error(`PUT ${key}: HTTP ${status} ${Buffer.concat(chunks).toString().slice(0, 500)}`),
              );
          });
          res.on('error', reject);
        });
        req.on('error', reject);
        pipeline(createReadStream(file), req).catch(reject);
      });
      return size;
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
