/** The API app's public face: the Koa app builder (tests drive it) and the server `lectern start` runs. */
export { API_PREFIX, buildApp, type BuiltApp } from './app.js';
export { OPERATION_VERBS } from './http/router.js';
export { startApiServer, type ApiServer } from './server.js';
export type { ApiAppConfig, ApiDeps, RouteDeps } from './deps.js';
export { PlayerEnv, type PlayerConfig } from './player-env.js';
export { lazyPlayerKeys, type PlayerKeys } from './player-keys.js';
export { contentSecurityPolicy, newNonce, type PagePolicyInput } from './http/page-security.js';
