import http from 'node:http';
import sharp from 'sharp';
import { checkContract } from './contract.js';
import { waitFor, type Res } from './http.js';
import { api, type ErrorRes } from './authoring.js';
import type { MediaDto } from '@lectern/contracts';

export type MediaRes = Res<{ data: MediaDto } & Partial<ErrorRes>>;

/** POST /media with a real multipart body (fetch's FormData: a known Content-Length). */
export async function uploadForm(
  base: string,
  key: string,
  parts: {
    file?: { bytes: Buffer; name?: string; type?: string };
    kind?: string;
    extra?: Record<string, string>;
    headers?: Record<string, string>;
  },
): Promise<MediaRes> {
  const form = new FormData();
  if (parts.kind !== undefined) form.append('kind', parts.kind);
  for (const [k, v] of Object.entries(parts.extra ?? {})) form.append(k, v);
  if (parts.file)
    form.append(
      'file',
      new Blob([parts.file.bytes], { type: parts.file.type ?? 'application/octet-stream' }),
      parts.file.name ?? 'upload.bin',
    );
  const res = await fetch(`${base}/media`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, ...(parts.headers ?? {}) },
    body: form,
  });
  const text = await res.text();
  const body = text ? (JSON.parse(text) as MediaRes['body']) : (null as unknown as MediaRes['body']);
  await checkContract(`${base}/media`, 'POST', res.status, res.headers.get('content-type'), body);
  return { status: res.status, headers: res.headers, body, text };
}

/**
 * POST /media with a chunked body (no Content-Length) of `total` file bytes generated on the fly, so neither side
 * holds the file: the cut-off must come from counting.
 */
export function uploadChunked(
  base: string,
  key: string,
  total: number,
  head: Buffer,
): Promise<{ status: number; body: ErrorRes; sent: number }> {
  const boundary = '----lecternTestBoundary7MA4YWxkTrZu0gW';
  const url = new URL(`${base}/media`);
  return new Promise((resolve, reject) => {
    const req = http.request(url, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${key}`,
        'content-type': `multipart/form-data; boundary=${boundary}`,
        'transfer-encoding': 'chunked',
      },
    });
    let sent = 0;
    let stopped = false;
    req.on('response', (res) => {
      stopped = true;
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () =>
        resolve({
          status: res.statusCode ?? 0,
          body: JSON.parse(Buffer.concat(chunks).toString()) as ErrorRes,
          sent,
        }),
      );
    });
    req.on('error', (err) => (stopped ? undefined : reject(err)));
    req.write(
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="big.png"\r\nContent-Type: image/png\r\n\r\n`,
    );
    req.write(head);
    sent += head.length;
    const chunk = Buffer.alloc(64 * 1024, 7);
    const pump = () => {
      while (!stopped && sent < total) {
        sent += chunk.length;
        if (!req.write(chunk)) return void req.once('drain', pump);
      }
      if (!stopped) req.end(`\r\n--${boundary}--\r\n`);
      else req.end();
    };
    pump();
  });
}

/** A real PNG of the given size (random-ish pixels so it does not compress to nothing). */
export async function pngOf(width: number, height: number): Promise<Buffer> {
  return sharp({ create: { width, height, channels: 3, background: { r: 200, g: 60, b: 30 } } })
    .png()
    .toBuffer();
}

/** The media record once its processing has ended (`ready` or `failed`); the media worker must be running. */
export function processedMedia(base: string, key: string, id: string): Promise<MediaDto> {
  return waitFor(
    async () => {
      const m = (await api(base, key)<MediaDto>('GET', `/media/${id}`)).body.data;
      return m.status === 'processing' ? null : m;
    },
    { timeoutMs: 60_000, what: `processing of ${id}` },
  );
}
