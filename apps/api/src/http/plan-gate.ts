import type { Context, Middleware, Next } from 'koa';
import { requireFeature, type Feature } from '@lectern/plans';
import type { AuthState } from './auth.js';

/**
 * 403 `plan_required` naming the plan, for routes of a whole feature (themes,
 * translations, …). Placed before body parsing and validation: a workspace
 * without the feature learns that first, whatever it sent.
 */
export function planGate(feature: Feature): Middleware {
  return async (ctx: Context, next: Next) => {
    requireFeature((ctx.state.auth as AuthState).workspace.plan, feature);
    await next();
  };
}
