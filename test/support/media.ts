import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import v8 from 'node:v8';
import vm from 'node:vm';
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
    /** Send `kind` after the file (a form built in that order): the type is then checked once the form ends. */
    kindLast?: boolean;
    extra?: Record<string, string>;
    headers?: Record<string, string>;
  },
): Promise<MediaRes> {
  const form = new FormData();
  if (parts.kind !== undefined && !parts.kindLast) form.append('kind', parts.kind);
  for (const [k, v] of Object.entries(parts.extra ?? {})) form.append(k, v);
  if (parts.file)
    form.append(
      'file',
      new Blob([parts.file.bytes], { type: parts.file.type ?? 'application/octet-stream' }),
      parts.file.name ?? 'upload.bin',
    );
  if (parts.kind !== undefined && parts.kindLast) form.append('kind', parts.kind);
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
 * POST /media with a chunked body (no Content-Length) of `total` file bytes (`head`, then filler) generated on the
 * fly, so neither side holds the file: the cut-off must come from counting. `sentAtAnswer` is how many file bytes
 * had been written when the response arrived (the writing stops then).
 */
export function uploadChunked<B = ErrorRes>(
  base: string,
  key: string,
  total: number,
  head: Buffer,
): Promise<{ status: number; body: B; sent: number; sentAtAnswer: number }> {
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
      const sentAtAnswer = sent;
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        // Answered before the body was all written: drop the connection rather than finish a body nobody reads.
        if (sent < total) req.destroy();
        resolve({
          status: res.statusCode ?? 0,
          body: JSON.parse(Buffer.concat(chunks).toString()) as B,
          sent,
          sentAtAnswer,
        });
      });
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
        const part = chunk.subarray(0, Math.min(chunk.length, total - sent));
        sent += part.length;
        if (!req.write(part)) return void req.once('drain', pump);
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

/** V8's collector, reachable without `--expose-gc` on the command line. */
const collect: () => void = (() => {
  v8.setFlagsFromString('--expose-gc');
  return vm.runInNewContext('gc') as () => void;
})();

/**
 * Runs `work` and returns its result with how far this process's resident set rose above where it started (MB).
 * The API of `startTestApp` runs in this process, so its buffers count here. Sampled every 10 ms, with a full
 * collection every 200 ms, so the peak is what was held, not 64 KiB chunks dropped and not yet collected.
 */
export async function rssGrowthDuring<T>(work: () => Promise<T>): Promise<{ result: T; grewMb: number }> {
  collect();
  const before = process.memoryUsage().rss;
  let peak = before;
  let ticks = 0;
  const sample = () => {
    if (ticks++ % 5 === 0) collect();
    peak = Math.max(peak, process.memoryUsage().rss);
  };
  const timer = setInterval(sample, 10);
  try {
    const result = await work();
    sample();
    return { result, grewMb: (peak - before) / 1024 / 1024 };
  } finally {
    clearInterval(timer);
  }
}

const AV_SAMPLES = {
  /** 2 s of a 320×240 test pattern, H.264 in MP4. */
  mp4: ['-f', 'lavfi', '-i', 'testsrc=duration=2:size=320x240:rate=10', '-pix_fmt', 'yuv420p'],
  /** 2 s of a 440 Hz tone. */
  mp3: ['-f', 'lavfi', '-i', 'sine=frequency=440:duration=2'],
  wav: ['-f', 'lavfi', '-i', 'sine=frequency=440:duration=1'],
} as const;

/** A short real video or audio file made with Debian's ffmpeg (the one the media worker uses). */
export async function avSample(format: keyof typeof AV_SAMPLES): Promise<Buffer> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'media-sample-'));
  try {
    const file = path.join(dir, `sample.${format}`);
    await promisify(execFile)('ffmpeg', ['-nostdin', '-v', 'error', ...AV_SAMPLES[format], '-y', file]);
    return await readFile(file);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
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
