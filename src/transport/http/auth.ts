/**
 * Authentication on the HTTP adapter (EXTENSIONS.md 1): each route's permission comes from its
 * route-table column, the check itself from the shared guard (src/auth/guard.ts). Both request
 * paths (the hot dispatcher and fastify's `onRequest`) call `checkRoute` before a byte of the
 * body is read, so an unauthenticated caller cannot make the server parse a large body.
 */
import type { IncomingMessage } from 'node:http';
import { ALL_TENANTS, type AuthGuard, type Permission, type Principal } from '../../auth/index.js';
import { tenantOf } from './call-context.js';
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
export function routeCheck(route: Route, auth: HttpAuth): RouteCheck {
  if (route.permission === 'public' || (route.id === 'metrics' && auth.publicMetrics)) return { need: null, global: false };
  return { need: route.permission, global: route.scope === 'global' };
}

/**
 * Checks `req` for a route: the principal (a promise the first time a JWT is seen), or a
 * ServiceError thrown (401, 403, 429). The tenant is the request's (`X-Tenant-ID` in
 * multi-tenancy mode, else `default`), or every tenant for a global route.
 */
export function checkRoute(
  auth: HttpAuth,
  check: RouteCheck & { need: Permission },
  req: IncomingMessage,
  multiTenancy: boolean,
): Principal | Promise<Principal> {
  const authorization = req.headers.authorization;
  return auth.guard.check(authorization, req.socket?.remoteAddress ?? null, check.need, check.global ? ALL_TENANTS : tenantOf(req, multiTenancy));
}
