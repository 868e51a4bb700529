import type { ApiRouter } from '../http/router.js';
import type { Runtime } from '../../../../libs/runtime/src/index.js';
import type { Relay } from '../../../../libs/events/src/index.js';
import { identityRoutes } from './identities.routes.js';
import { meRoutes } from './me.routes.js';

export interface RouteDeps {
  rt: Runtime;
  relay: Relay;
}

/** Every keyed /api/v1 route module. Add new modules here. */
export function registerApiRoutes(api: ApiRouter, deps: RouteDeps): void {
  meRoutes(api);
  identityRoutes(api, deps);
}
