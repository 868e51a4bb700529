export * from './env.js';
export * from './ssrf.js';
export * from './dns-cache.js';
export * from './request.js';
export * from './fetch-to-file.js';
export * from './guarded-fetch.js';
