export * from './common.js';
export * from './events.js';
export * from './identities.js';
export * from './workspace.js';
export * from './design.js';
export * from './webhooks.js';
export * from './courses.js';
export * from './jobs.js';
