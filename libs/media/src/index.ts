/**
 * Media (docs/media.md): streamed uploads into the private object store, type sniffing, the storage quota, the
 * `media.process` job and the signing of `media://` references for learners.
 */
export * from './formats.js';
export * from './quota.js';
export * from './receive.js';
export * from './media.js';
export * from './process.js';
export * from './serve.js';
