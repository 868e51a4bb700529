import { z } from 'zod';
import { Pagination, Timestamp } from './common.js';

export const MediaKindField = z.enum(['image', 'video', 'audio']);

/** A derived file of a processed upload (a WebP width variant, or a video's poster frame). */
export const MediaVariant = z
  .object({
    role: z.enum(['variant', 'poster']),
    width: z.number().int(),
    height: z.number().int(),
    contentType: z.string(),
    bytes: z.number().int(),
  })
  .meta({ id: 'MediaVariant' });

/** SPEC "Media upload result", plus the processing state of GET /media. */
export const Media = z
  .object({
    id: z.string(),
    url: z.string().meta({
      description: 'durable `media://<id>`: what to store in a block',
      example: 'media://med_0mhx2k3l9AbCdEfGhIjKlMn',
    }),
    previewUrl: z
      .string()
      .meta({ description: 'signed, expires shortly (MEDIA_URL_TTL_SECONDS); for the uploader only' }),
    kind: MediaKindField,
    bytes: z.number().int(),
    contentType: z.string().meta({ description: 'sniffed from the bytes' }),
    status: z.enum(['processing', 'ready', 'failed']),
    width: z.number().int().nullable(),
    height: z.number().int().nullable(),
    durationSeconds: z.number().nullable(),
    placeholder: z
      .string()
      .nullable()
      .meta({ description: 'tiny base64 WebP data URL shown while the image loads' }),
    variants: z.array(MediaVariant),
    error: z
      .string()
      .nullable()
      .meta({ description: 'why processing failed; the file stays usable as uploaded' }),
    createdAt: Timestamp,
  })
  .meta({ id: 'Media' });
export type MediaDto = z.infer<typeof Media>;

export const MediaList = z.object({ data: z.array(Media), pagination: Pagination });

/** Job input of `media.process`. */
export const MediaProcessJobInput = z.object({ mediaId: z.string() });
export const MediaProcessJobResult = z.object({ status: z.enum(['ready', 'failed']) });
