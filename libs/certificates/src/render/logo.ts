import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fetchToFile, type HostResolver } from '@lectern/outbound';

export interface LogoFetchOptions {
  /** ALLOW_PRIVATE_NETWORKS: the same policy as webhook deliveries. */
  allowPrivate: boolean;
  maxBytes: number;
  timeoutMs: number;
  lookup?: HostResolver;
}

export type LogoFetch = { ok: true; bytes: Buffer } | { ok: false; reason: string };

const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/** PNG or JPEG by their magic bytes: a `.png` URL serving SVG or WebP must not reach pdfkit. */
export function imageKind(bytes: Buffer): 'png' | 'jpeg' | null {
  if (bytes.length >= 8 && bytes.subarray(0, 8).equals(PNG)) return 'png';
  if (bytes.length >= 3 && bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff) return 'jpeg';
  return null;
}

/**
 * Fetches a template logo for the PDF with the service's one guarded download (`fetchToFile` of
 * libs/outbound: the SSRF policy, connected to exactly the address that was checked, no
 * redirect, `maxBytes`, `timeoutMs` in all), through a temp file that is removed at once. Never
 * throws: a logo that cannot be had, or is not PNG/JPEG, is left out of the certificate and the
 * reason is returned for the log.
 */
export async function fetchLogo(url: string, opts: LogoFetchOptions): Promise<LogoFetch> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'lectern-logo-'));
  try {
    const got = await fetchToFile(url, {
      allowPrivate: opts.allowPrivate,
      maxBytes: opts.maxBytes,
      timeoutMs: opts.timeoutMs,
      accept: 'image/png, image/jpeg',
      userAgent: 'Lectern-Certificates',
      file: path.join(dir, 'logo'),
      lookup: opts.lookup,
      // Refused at the first bytes, before the rest of a wrong file is downloaded.
      check: (head) =>
        imageKind(head) === null ? 'not a PNG or JPEG image (SVG, WebP and others cannot be embedded)' : null,
    });
    if (!got.ok) return got;
    return { ok: true, bytes: await readFile(got.file) };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
