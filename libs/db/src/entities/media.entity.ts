import { EntitySchema } from '@mikro-orm/core';
import { createdAt, oneOf, references, text } from './columns.js';

export const MEDIA_KINDS = ['image', 'video', 'audio'] as const;
export type MediaKind = (typeof MEDIA_KINDS)[number];
export const MEDIA_STATUSES = ['processing', 'ready', 'failed'] as const;
export type MediaStatus = (typeof MEDIA_STATUSES)[number];

/** An uploaded media file (migration Migration20261127001000_media); its bytes are in the object store. */
export interface Media {
  id: string;
  workspaceId: string;
  kind: MediaKind;
  /** The type the bytes say they are (sniffed), never the filename's or the part's label. */
  mime: string;
  bytes: number;
  status: MediaStatus;
  error: string | null;
  createdAt: Date;
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
    mime: { ...text },
    bytes: { type: 'integer' },
    status: { ...oneOf(MEDIA_STATUSES), default: 'processing' },
    error: { ...text, nullable: true },
    createdAt: { ...createdAt },
  },
});
