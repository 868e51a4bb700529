import { EntitySchema } from '@mikro-orm/core';
import { createdAt, jsonb, numeric, oneOf, references, text, updatedAt } from './columns.js';

export const MEDIA_KINDS = ['image', 'video', 'audio'] as const;
export type MediaKind = (typeof MEDIA_KINDS)[number];
export const MEDIA_STATUSES = ['processing', 'ready', 'failed'] as const;
export type MediaStatus = (typeof MEDIA_STATUSES)[number];

/** One uploaded file (docs/media.md): the object `objectKey` in the private store, and what processing found. */
export interface Media {
  id: string;
  workspaceId: string;
  kind: MediaKind;
  contentType: string;
  /** bigint: read as a string by the driver. */
  bytes: string;
  objectKey: string;
  status: MediaStatus;
  width: number | null;
  height: number | null;
  durationSeconds: number | null;
  /** Derived files: `[{ key, width, height, contentType, bytes, role }]` (role: variant | poster). */
  variants: unknown[];
  placeholder: string | null;
  error: string | null;
  createdAt: Date;
  updatedAt: Date;
}

export const MediaSchema = new EntitySchema<Media>({
  name: 'Media',
  tableName: 'media',
  indexes: [
    {
      name: 'media_ws_created_idx',
      expression: 'create index media_ws_created_idx on media (workspace_id, created_at desc, id desc)',
    },
  ],
  properties: {
    id: { ...text, primary: true },
    workspaceId: { ...references('Workspace', 'workspace_id', 'cascade') },
    kind: { ...oneOf(MEDIA_KINDS) },
    contentType: { ...text, fieldName: 'content_type' },
    bytes: { type: 'bigint' },
    objectKey: { ...text, fieldName: 'object_key' },
    status: { ...oneOf(MEDIA_STATUSES), default: 'processing' },
    width: { type: 'integer', nullable: true },
    height: { type: 'integer', nullable: true },
    durationSeconds: { ...numeric(), nullable: true, fieldName: 'duration_seconds' },
    variants: { ...jsonb('[]') },
    placeholder: { ...text, nullable: true },
    error: { ...text, nullable: true },
    createdAt: { ...createdAt },
    updatedAt: { ...updatedAt },
  },
});

/**
 * A workspace's stored bytes against its plan's storage line (docs/media.md "Quota"): `used_bytes` is settled,
 * `reserved_bytes` is held by uploads still streaming. An upload reserves before it reads the body and settles
 * after, so concurrent uploads at the edge cannot overshoot.
 */
export interface WorkspaceStorage {
  workspaceId: string;
  usedBytes: string;
  reservedBytes: string;
}

export const WorkspaceStorageSchema = new EntitySchema<WorkspaceStorage>({
  name: 'WorkspaceStorage',
  tableName: 'workspace_storage',
  properties: {
    workspaceId: { ...references('Workspace', 'workspace_id', 'cascade'), primary: true },
    usedBytes: { type: 'bigint', default: 0, fieldName: 'used_bytes' },
    reservedBytes: { type: 'bigint', default: 0, fieldName: 'reserved_bytes' },
  },
});
