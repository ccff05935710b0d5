/**
 * Tells 405 from 404 for a request no route took, from the route table: the methods of the
 * active routes whose path matches. Compiled once per adapter; used only on the not-found
 * path, never on a routed request.
 */
import type { Route } from './route.js';

/** The methods allowed on a path, in table order (empty: no route has this path). */
export type AllowedMethods = (path: string) => string[];

/** Compiles the paths of `routes` (fastify syntax, `:param` = one segment) into a lookup. */
export function compileAllowedMethods(routes: readonly Route[]): AllowedMethods {
  const table = routes.filter((r) => r.allowHeader !== false).map((r) => ({ method: r.method, re: pathPattern(r.path) }));
  return (path) => {
    const allowed: string[] = [];
    for (const { method, re } of table) if (re.test(path) && !allowed.includes(method)) allowed.push(method);
    return allowed;
  };
}

/** The regular expression of a fastify path: `:param` matches one non-empty segment. */
export function pathPattern(path: string): RegExp {
  const parts = path.split('/').map((seg) => (seg.startsWith(':') ? '[^/]+' : seg.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')));
  return new RegExp(`^${parts.join('\\/')}$`);
}
