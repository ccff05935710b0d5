/**
 * The listener of the HTTP adapter: fastify's own HTTP/1 server (fastify/lib/server.js, the
 * same settings), HTTPS with `--http-tls-cert`, with, in front of fastify's request handler,
 * the Host rule and the hot dispatcher when it is on; a request the dispatcher does not take
 * goes to fastify as is. On plain HTTP with the hot routes on, the fast path (./fast-path.ts)
 * is in front of node's own connection handling.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { FastifyServerFactory } from 'fastify';
import { ServiceError } from '../../service/errors.js';
import { installFastPath } from './fast-path.js';
import { createHotDispatch, type HotRoutes } from './hot-dispatch.js';
import type { HttpsOptions } from './https.js';
import { JSON_TYPE } from './serialize.js';

/** How the hot routes are served in front of fastify. */
export interface HotServing {
  readonly routes: HotRoutes;
  /** Body read timeout of the hot dispatcher (ms; 0: none). */
  readonly requestTimeoutMs: number;
  /** The HTTP/1.1 fast path on plain HTTP (./fast-path.ts); false: node's request objects only. */
  readonly fastPath: boolean;
}

/**
 * A fastify `serverFactory` that puts the hot routes (or nothing) in front of fastify's
 * handler. The server is created with `requireHostHeader: false` (app.ts): an HTTP/1.1 request
 * without Host is answered here, 400 with the catalog body (node's own answer has an empty body).
 */
export function httpServer(hotServing: HotServing | null, tls: HttpsOptions | null = null): FastifyServerFactory {
  const hot = hotServing === null ? null : createHotDispatch(hotServing.routes, hotServing.requestTimeoutMs);
  return (handler, opts) => {
    const listener = (req: IncomingMessage, res: ServerResponse): void => {
      // NOTE: one property read per request (fastify and the dispatcher read headers anyway).
      if (req.headers.host === undefined && req.httpVersionMajor === 1 && req.httpVersionMinor === 1) {
        missingHost(res);
        return;
      }
      if (hot === null || !hot(req, res)) handler(req, res);
    };
    const httpOptions = (opts['http'] ?? {}) as object;
    // NOTE: the same request handling over TLS; node's HTTPS server takes the HTTP options too
    // (header timeout, Host rule), which fastify's own https path would drop.
    const server = tls === null ? createServer(httpOptions, listener) : createHttpsServer({ ...httpOptions, ...tls }, listener);
    server.keepAliveTimeout = opts['keepAliveTimeout'] as number;
    server.requestTimeout = opts['requestTimeout'] as number;
    server.setTimeout(opts['connectionTimeout'] as number);
    const perSocket = opts['maxRequestsPerSocket'] as number | null | undefined;
    if (typeof perSocket === 'number' && perSocket > 0) server.maxRequestsPerSocket = perSocket;
    // NOTE: the fast path counts no requests per connection, so it stays off with a per-socket limit.
    if (hotServing !== null && hotServing.fastPath && tls === null && !((server.maxRequestsPerSocket ?? 0) > 0)) {
      installFastPath(server, hotServing.routes, { keepAliveTimeoutMs: server.keepAliveTimeout, headersTimeoutMs: server.headersTimeout });
    }
    return server;
  };
}

const MISSING_HOST = JSON.stringify(new ServiceError('BAD_REQUEST', 'an HTTP/1.1 request must have a Host header').toBody());

/** The answer to an HTTP/1.1 request without Host; the connection is closed, as node does. */
function missingHost(res: ServerResponse): void {
  res.writeHead(400, { 'content-type': JSON_TYPE, 'content-length': Buffer.byteLength(MISSING_HOST), connection: 'close' });
  res.end(MISSING_HOST);
}
