import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import sharp from 'sharp';
import { boundQuery, type EntityManager } from '@lectern/db';
import type { Storage } from '@lectern/storage';
import type { JobWorkerOptions } from '@lectern/jobs';
import type { MediaVariantRecord } from './media.js';

const run = promisify(execFile);

/** The durable every media worker shares (`<BUS_PREFIX>_media-worker`). */
export const MEDIA_APP = 'media-worker';

/** Responsive widths of the WebP variants (docs/media.md "Processing"); never wider than the original. */
export const VARIANT_WIDTHS = [480, 960, 1920] as const;
/** Decompression bombs: more pixels than this, or a side longer than MAX_SIDE, fails processing before decoding. */
export const MAX_INPUT_PIXELS = 50_000_000;
export const MAX_SIDE = 16_383;

export interface MediaProcessPorts {
  storage: Pick<Storage, 'getToFile' | 'putFile'>;
}

/** A processing refusal: recorded on the media row (`failed`), not retried. */
class ProcessingFailed extends Error {}

interface Outcome {
  width: number | null;
  height: number | null;
  durationSeconds: number | null;
  variants: MediaVariantRecord[];
  placeholder: string | null;
}

const sharpOf = (input: string | Buffer) =>
  sharp(input, { limitInputPixels: MAX_INPUT_PIXELS, failOn: 'error', sequentialRead: true });

/**
 * An image: oriented size, WebP variants (metadata stripped: sharp writes none unless asked), and a tiny WebP
 * data URL placeholder. Checks the header's size before decoding anything.
 */
async function processImage(
  file: string,
  keyOf: (name: string) => string,
  storage: MediaProcessPorts['storage'],
  dir: string,
): Promise<Outcome> {
  let meta: Awaited<ReturnType<ReturnType<typeof sharp>['metadata']>>;
  try {
    meta = await sharpOf(file).metadata();
  } catch (err) {
    throw new ProcessingFailed(`the image could not be read: ${(err as Error).message}`);
  }
  const rawW = meta.width ?? 0;
  const rawH = meta.height ?? 0;
  if (!rawW || !rawH) throw new ProcessingFailed('the image has no size');
  if (rawW > MAX_SIDE || rawH > MAX_SIDE || rawW * rawH > MAX_INPUT_PIXELS)
    throw new ProcessingFailed(
      `the image is ${rawW}×${rawH} pixels; at most ${MAX_SIDE} px a side and ${MAX_INPUT_PIXELS.toLocaleString('en-US')} pixels are processed`,
    );
  const swap = (meta.orientation ?? 1) >= 5;
  const width = swap ? rawH : rawW;
  const height = swap ? rawW : rawH;
  const widths: number[] = VARIANT_WIDTHS.filter((w) => w < width);
  if (widths.length === 0 || width <= VARIANT_WIDTHS[VARIANT_WIDTHS.length - 1]!) widths.push(width);
  const variants: MediaVariantRecord[] = [];
  try {
    for (const w of [...new Set(widths)]) {
      const out = path.join(dir, `w${w}.webp`);
      const info = await sharpOf(file)
        .rotate()
        .resize({ width: w, withoutEnlargement: true })
        .webp({ quality: 80 })
        .toFile(out);
      const key = keyOf(`w${w}.webp`);
      await storage.putFile(key, out, 'image/webp');
      variants.push({
        role: 'variant',
        key,
        width: info.width,
        height: info.height,
        contentType: 'image/webp',
        bytes: info.size,
      });
    }
    const tiny = await sharpOf(file)
      .rotate()
      .resize({ width: 16, height: 16, fit: 'inside' })
      .webp({ quality: 40 })
      .toBuffer();
    return {
      width,
      height,
      durationSeconds: null,
      variants,
      placeholder: `data:image/webp;base64,${tiny.toString('base64')}`,
    };
  } catch (err) {
    if (err instanceof ProcessingFailed) throw err;
    if ((err as { code?: string }).code === 'ECONNREFUSED') throw err;
    if (/Input|pixel|decode|corrupt|VipsJpeg|pngload|webp|gif|heif|unsupported/i.test((err as Error).message))
      throw new ProcessingFailed(`the image could not be processed: ${(err as Error).message}`);
    throw err;
  }
}

interface Probe {
  format?: { duration?: string };
  streams?: { codec_type?: string; width?: number; height?: number; duration?: string }[];
}

/** Video and audio: Debian's ffprobe (duration, dimensions), and for video a poster frame made WebP by sharp. */
async function processAv(
  kind: 'video' | 'audio',
  file: string,
  keyOf: (name: string) => string,
  storage: MediaProcessPorts['storage'],
  dir: string,
): Promise<Outcome> {
  let probe: Probe;
  try {
    const { stdout } = await run(
      'ffprobe',
      ['-v', 'error', '-print_format', 'json', '-show_format', '-show_streams', file],
      {
        timeout: 60_000,
        maxBuffer: 4 * 1024 * 1024,
      },
    );
    probe = JSON.parse(stdout) as Probe;
  } catch (err) {
    throw new ProcessingFailed(
      `ffprobe could not read the file: ${String((err as { stderr?: string }).stderr ?? (err as Error).message).slice(0, 300)}`,
    );
  }
  const duration = Number(probe.format?.duration ?? probe.streams?.find((s) => s.duration)?.duration ?? NaN);
  const video = probe.streams?.find((s) => s.codec_type === 'video');
  const out: Outcome = {
    width: kind === 'video' ? (video?.width ?? null) : null,
    height: kind === 'video' ? (video?.height ?? null) : null,
    durationSeconds: Number.isFinite(duration) ? Math.round(duration * 1000) / 1000 : null,
    variants: [],
    placeholder: null,
  };
  if (kind === 'video') {
    if (!video) throw new ProcessingFailed('the video has no video stream');
    const png = path.join(dir, 'poster.png');
    const at = out.durationSeconds && out.durationSeconds > 2 ? 1 : 0;
    try {
      await run(
        'ffmpeg',
        ['-nostdin', '-v', 'error', '-ss', String(at), '-i', file, '-frames:v', '1', '-y', png],
        { timeout: 60_000 },
      );
      await stat(png);
    } catch (err) {
      throw new ProcessingFailed(
        `no poster frame: ${String((err as { stderr?: string }).stderr ?? (err as Error).message).slice(0, 300)}`,
      );
    }
    const poster = path.join(dir, 'poster.webp');
    const info = await sharpOf(png)
      .resize({ width: 1920, withoutEnlargement: true })
      .webp({ quality: 80 })
      .toFile(poster);
    const key = keyOf('poster.webp');
    await storage.putFile(key, poster, 'image/webp');
    out.variants.push({
      role: 'poster',
      key,
      width: info.width,
      height: info.height,
      contentType: 'image/webp',
      bytes: info.size,
    });
    const tiny = await sharpOf(await readFile(png))
      .resize({ width: 16, height: 16, fit: 'inside' })
      .webp({ quality: 40 })
      .toBuffer();
    out.placeholder = `data:image/webp;base64,${tiny.toString('base64')}`;
  }
  return out;
}

interface Row {
  kind: 'image' | 'video' | 'audio';
  object_key: string;
}

/**
 * The `media.process` job (docs/media.md "Processing"): reads the upload to a temp file, derives what the player
 * needs, and records `ready` (or `failed` with the reason; the file stays usable as uploaded). Derived objects
 * have fixed keys, so a redelivery after a crash writes the same files again.
 */
export function mediaProcessJob(ports: MediaProcessPorts): JobWorkerOptions<'media.process'> {
  sharp.cache(false);
  return {
    kind: 'media.process',
    app: MEDIA_APP,
    readsOnly: true,
    async handler(job, ctx) {
      const em: EntityManager = ctx.em;
      const [row] = await boundQuery<Row>(
        em,
        'select kind, object_key from media where id = ? and workspace_id = ?',
        [job.input.mediaId, job.workspaceId],
      );
      if (!row) return { status: 'failed' }; // deleted before it was processed
      const dir = await mkdtemp(path.join(os.tmpdir(), 'lectern-media-job-'));
      const keyOf = (name: string) => `${row.object_key}.d/${name}`;
      try {
        const file = path.join(dir, 'original');
        await ports.storage.getToFile(row.object_key, file);
        let outcome: Outcome;
        try {
          outcome =
            row.kind === 'image'
              ? await processImage(file, keyOf, ports.storage, dir)
              : await processAv(row.kind, file, keyOf, ports.storage, dir);
        } catch (err) {
          if (!(err instanceof ProcessingFailed)) throw err;
          ctx.log.info({ mediaId: job.input.mediaId, reason: err.message }, 'media processing failed');
          await boundQuery(
            em,
            `update media set status = 'failed', error = ?, updated_at = now() where id = ?`,
            [err.message.slice(0, 1000), job.input.mediaId],
          );
          return { status: 'failed' };
        }
        await boundQuery(
          em,
          `update media set status = 'ready', error = null, width = ?, height = ?, duration_seconds = ?,
             variants = ?::jsonb, placeholder = ?, updated_at = now() where id = ?`,
          [
            outcome.width,
            outcome.height,
            outcome.durationSeconds,
            JSON.stringify(outcome.variants),
            outcome.placeholder,
            job.input.mediaId,
          ],
        );
        return { status: 'ready' };
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    },
  };
}
