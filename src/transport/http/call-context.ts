/**
 * The call context of an HTTP request (tenant, source address, transport), built the same way
 * on both request paths from node's request.
 */
import type { IncomingMessage } from 'node:http';
import type { CallContext } from '../../service/types.js';

/** The call context of `req` (without a trace context). */
export function callContextOf(req: IncomingMessage, multiTenancy: boolean): CallContext {
  // NOTE: fastify's `request.ip` is the socket's remote address (no trustProxy): the same value.
  return { tenant: tenantOf(req, multiTenancy), sourceIp: req.socket?.remoteAddress ?? null, transport: 'http' };
}

/** The tenant of a request: `X-Tenant-Id` in multi-tenancy mode, else `default`. */
export function tenantOf(req: IncomingMessage, multiTenancy: boolean): string {
  if (!multiTenancy) return 'default';
  return headerValue(req, 'x-tenant-id') || 'default';
}

/** The first value of a request header (lower-case `name`), or undefined. */
export function headerValue(req: IncomingMessage, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
}
