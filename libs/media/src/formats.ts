import { AppError } from '@lectern/errors';
import type { MediaKind } from '@lectern/db';

/** SPEC.md Limits: a media upload of more than 25 MB (26,214,400 bytes) is a 413. */
export const MEDIA_MAX_BYTES = 25 * 1024 * 1024;

/**
 * The formats a browser plays, by the MIME type `file-type` sniffs from the bytes (docs/media.md "Formats").
 * Anything else (SVG, HTML, PDF, executables, archives, text) is refused whatever the filename or part type say.
 */
export const MEDIA_FORMATS: Record<string, { kind: MediaKind; label: string }> = {
  'image/png': { kind: 'image', label: 'PNG' },
  'image/jpeg': { kind: 'image', label: 'JPEG' },
  'image/gif': { kind: 'image', label: 'GIF' },
  'image/webp': { kind: 'image', label: 'WebP' },
  'image/avif': { kind: 'image', label: 'AVIF' },
  'video/mp4': { kind: 'video', label: 'MP4' },
  'video/webm': { kind: 'video', label: 'WebM' },
  'audio/mpeg': { kind: 'audio', label: 'MP3' },
  'audio/x-m4a': { kind: 'audio', label: 'M4A' },
  'audio/mp4': { kind: 'audio', label: 'M4A' },
  'audio/aac': { kind: 'audio', label: 'AAC' },
  'audio/ogg': { kind: 'audio', label: 'Ogg' },
  'audio/opus': { kind: 'audio', label: 'Ogg Opus' },
  'audio/wav': { kind: 'audio', label: 'WAV' },
  'audio/x-wav': { kind: 'audio', label: 'WAV' },
  'audio/webm': { kind: 'audio', label: 'WebM audio' },
};

/** How many leading bytes the sniffer reads (file-type's own sample size). */
export const SNIFF_BYTES = 4100;

const fileIssue = (code: string, message: string) =>
  new AppError('invalid_request', message, { issues: [{ code, path: ['file'], message }] });

/**
 * The sniffed type of the first bytes of an upload, checked against the declared `kind` (`any`: the kind is not
 * known yet, only the format is checked). `sniffed` is what `file-type` said (undefined: it recognised nothing,
 * e.g. SVG, HTML or plain text).
 */
export function checkSniffed(
  kind: MediaKind | 'any',
  bytes: number,
  sniffed: { mime: string } | undefined,
): { mime: string; kind: MediaKind } {
  if (bytes === 0) throw fileIssue('empty', 'The file is empty');
  if (!sniffed)
    throw fileIssue(
      'unsupported_type',
      'The file is not an image, video or audio format we accept (docs/media.md)',
    );
  const format = MEDIA_FORMATS[sniffed.mime];
  if (!format)
    throw fileIssue(
      'unsupported_type',
      `The file is ${sniffed.mime}, which is not a format we accept (docs/media.md)`,
    );
  // An MP4 holding only audio is sniffed as video/mp4 by some encoders; accept it as audio too.
  if (kind === 'any') return { mime: sniffed.mime, kind: format.kind };
  const fits =
    format.kind === kind ||
    (kind === 'audio' && sniffed.mime === 'video/mp4') ||
    (kind === 'video' && sniffed.mime === 'audio/webm');
  if (!fits)
    throw fileIssue(
      'kind_mismatch',
      `kind is "${kind}" but the file is ${format.label} (${sniffed.mime}), which is ${format.kind === 'image' ? 'an' : 'a'} ${format.kind}`,
    );
  return { mime: sniffed.mime, kind: format.kind === kind ? format.kind : kind };
}
