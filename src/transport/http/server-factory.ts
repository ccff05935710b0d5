/**
 * The listener of the HTTP adapter when the hot dispatcher is on: fastify's own HTTP/1 server
 * (fastify/lib/server.js, the same settings) with the hot dispatcher in front of fastify's
 * request handler; a request the dispatcher does not take goes to fastify as is.
 */
import { createServer } from 'node:http';
import type { FastifyServerFactory } from 'fastify';
import type { HotDispatch } from './hot-dispatch.js';

/** A fastify `serverFactory` that puts `hot` in front of fastify's handler. */
export function hotDispatchServer(hot: HotDispatch): FastifyServerFactory {
  return (handler, opts) => {
    const server = createServer((opts['http'] ?? {}) as object, (req, res) => {
      if (!hot(req, res)) handler(req, res);
    });
    server.keepAliveTimeout = opts['keepAliveTimeout'] as number;
    server.requestTimeout = opts['requestTimeout'] as number;
    server.setTimeout(opts['connectionTimeout'] as number);
    const perSocket = opts['maxRequestsPerSocket'] as number | null | undefined;
    if (typeof perSocket === 'number' && perSocket > 0) server.maxRequestsPerSocket = perSocket;
    return server;
  };
}
