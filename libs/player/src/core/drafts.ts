/**
 * Answers a learner chose or typed but has not handed in (docs/player.md "Drafts"), kept in the browser's local
 * storage under the run's id so they survive moving between screens and reloading the page. Nothing here is
 * sent: a draft becomes an answer only when the learner submits it (or moves on with it, deferred mode).
 *
 * Local storage is the learner's own but still read defensively: a value of another shape, of a block the course
 * does not have, or over the bounds below is ignored, and the whole entry stays under `MAX_DRAFTS_BYTES`.
 */
import type { KeyValueStore } from './queue.js';

/** One draft at most this many characters of JSON (the Player API takes an answer of at most 16 KiB). */
export const MAX_DRAFT_CHARS = 16 * 1024;
/** All drafts of a run together at most this many characters of JSON; past it, new drafts live in memory only. */
export const MAX_DRAFTS_CHARS = 128 * 1024;

export const draftsKey = (runId: string) => `lectern:drafts:${runId}`;

export class Drafts {
  private values: Record<string, unknown> = {};

  constructor(
    private readonly store: KeyValueStore | null,
    private readonly key: string | null,
    private readonly known: ReadonlySet<string>,
  ) {
    this.values = this.load();
  }

  get(blockId: string): unknown {
    return Object.hasOwn(this.values, blockId) ? this.values[blockId] : undefined;
  }

  set(blockId: string, value: unknown): void {
    if (!this.known.has(blockId)) return;
    const text = JSON.stringify(value);
    if (text === undefined || text.length > MAX_DRAFT_CHARS) return;
    this.values = { ...this.values, [blockId]: value };
    this.save();
  }

  delete(blockId: string): void {
    if (!Object.hasOwn(this.values, blockId)) return;
    const next = { ...this.values };
    delete next[blockId];
    this.values = next;
    this.save();
  }

  clear(): void {
    this.values = {};
    this.save();
  }

  private load(): Record<string, unknown> {
    if (!this.store || !this.key) return {};
    let parsed: unknown;
    try {
      const raw = this.store.getItem(this.key);
      if (raw === null || raw.length > MAX_DRAFTS_CHARS) return {};
      parsed = JSON.parse(raw);
    } catch {
      return {};
    }
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return {};
    const out: Record<string, unknown> = {};
    for (const [id, v] of Object.entries(parsed)) {
      if (!this.known.has(id)) continue;
      const text = JSON.stringify(v);
      if (text !== undefined && text.length <= MAX_DRAFT_CHARS) out[id] = v;
    }
    return out;
  }

  private save(): void {
    if (!this.store || !this.key) return;
    try {
      if (Object.keys(this.values).length === 0) {
        this.store.removeItem(this.key);
        return;
      }
      const text = JSON.stringify(this.values);
      // Over the bound the stored copy stays as it was: the drafts still live in this page's memory.
      if (text.length <= MAX_DRAFTS_CHARS) this.store.setItem(this.key, text);
    } catch {
      // Storage full or refused (private mode): the drafts live in memory only.
    }
  }
}
