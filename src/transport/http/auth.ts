/**
 * Authentication on the HTTP adapter (EXTENSIONS.md 1): each route's permission comes from its
 * route-table column, the check itself from the shared guard (src/auth/guard.ts). Both request
 * paths (the hot dispatcher and fastify's `onRequest`) run `requestCheck` before a byte of the
 * body is read, so an unauthenticated caller cannot make the server parse a large body.
 */
import { ALL_TENANTS, type AuthGuard, type Permission, type Principal } from '../../auth/index.js';
import { tenantOf, type RequestHead } from './call-context.js';
import type { Route } from './route.js';

/** Authentication of one HTTP adapter (absent: off). */
export interface HttpAuth {
  readonly guard: AuthGuard;
  /** `--auth-public-metrics`: `/metrics` is open. */
  readonly publicMetrics: boolean;
}

/** How one route is checked: its permission (null: open) and whether it is about one tenant. */
export interface RouteCheck {
  readonly need: Permission | null;
  readonly global: boolean;
}

/** The check of `route` under `auth`. */
export function routeCheck(route: Route, auth: Pick<HttpAuth, 'publicMetrics'>): RouteCheck {
  if (route.permission === 'public' || (route.id === 'metrics' && auth.publicMetrics)) return { need: null, global: false };
  return { need: route.permission, global: route.scope === 'global' };
}

/** Checks the caller of one request: its principal (a promise the first time a JWT is seen), or throws a ServiceError. */
export type RequestCheck = (req: RequestHead) => Principal | Promise<Principal>;

/**
 * The check of `route`'s requests under `auth` (401, 403, 429 thrown), or null for an open
 * route. The tenant is the request's (`X-Tenant-ID` in multi-tenancy mode, else `default`), or
 * every tenant for a global route.
 */
export function requestCheck(route: Route, auth: HttpAuth, multiTenancy: boolean): RequestCheck | null {
  const { need, global } = routeCheck(route, auth);
  if (need === null) return null;
  const guard = auth.guard;
  return global
    ? (req) => guard.check(req.headers.authorization, req.socket?.remoteAddress ?? null, need, ALL_TENANTS)
    : (req) => guard.check(req.headers.authorization, req.socket?.remoteAddress ?? null, need, tenantOf(req, multiTenancy));
}
