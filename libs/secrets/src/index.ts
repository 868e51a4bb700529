export * from './encryption.js';
export * from './installation-secret.js';
