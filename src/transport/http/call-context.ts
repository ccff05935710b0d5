/**
 * The call context of an HTTP request (tenant, source address, transport), built the same way
 * on every request path from the request's head: node's request, or the fast path's
 * (./fast-path.ts) parsed head.
 */
import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import type { Principal } from '../../auth/index.js';
import type { CallContext } from '../../service/types.js';

/**
 * What the request paths read of a request besides its body: node's `IncomingMessage` is one;
 * the fast path builds one from the bytes it parsed (header names lower-case, one value each).
 */
export interface RequestHead {
  readonly method?: string | undefined;
  readonly url?: string | undefined;
  readonly headers: IncomingHttpHeaders;
  readonly socket?: Socket | null;
}

/** The principal of a request checked by fastify's `onRequest` (./fastify-routes.ts). */
const principals = new WeakMap<IncomingMessage, Principal>();

/** Remembers the principal of a request until its handler builds the call context. */
export function setPrincipal(req: IncomingMessage, principal: Principal): void {
  principals.set(req, principal);
}

/** The call context of a request on fastify's path (its principal remembered by `setPrincipal`). */
export function callContextOf(req: IncomingMessage, multiTenancy: boolean): CallContext {
  return callContextWith(req, multiTenancy, principals.get(req));
}

/** The call context of `req` (without a trace context) for the checked caller `principal`. */
export function callContextWith(req: RequestHead, multiTenancy: boolean, principal: Principal | undefined): CallContext {
  // NOTE: fastify's `request.ip` is the socket's remote address (no trustProxy): the same value.
  const tenant = tenantOf(req, multiTenancy);
  const sourceIp = req.socket?.remoteAddress ?? null;
  return principal === undefined ? { tenant, sourceIp, transport: 'http' } : { tenant, sourceIp, transport: 'http', principal: principal.id };
}

/** The tenant of a request: `X-Tenant-Id` in multi-tenancy mode, else `default`. */
export function tenantOf(req: RequestHead, multiTenancy: boolean): string {
  if (!multiTenancy) return 'default';
  return headerValue(req, 'x-tenant-id') || 'default';
}

/** The first value of a request header (lower-case `name`), or undefined. */
export function headerValue(req: RequestHead, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
}
