export * from './secrets.js';
export * from './signature.js';
export * from './ssrf.js';
export * from './retry.js';
export * from './deliver.js';
