/**
 * The fastify hooks of the HTTP adapter that are not observability: draining for shutdown
 * (the fastify side of ./drain.ts) and CORS in debug mode.
 */
import type { FastifyInstance } from 'fastify';
import { type Drain, shuttingDown } from './drain.js';

/**
 * Draining: `preClose` starts it; a request that arrives on a kept-alive connection while the
 * server drains is shed with 503 NOT_READY, and an answer sent while draining carries
 * `Connection: close`.
 */
export function registerDrainHooks(app: FastifyInstance, drain: Drain): void {
  app.addHook('preClose', (done) => {
    drain.closing = true;
    done();
  });
  app.addHook('onRequest', (_req, reply, done) => {
    if (!drain.closing) return done();
    void reply.code(503).header('connection', 'close').send(shuttingDown().toBody());
  });
  app.addHook('onSend', (_req, reply, payload, done) => {
    if (drain.closing) void reply.header('connection', 'close');
    done(null, payload);
  });
}

/** The answer headers of svc a browser script may read across origins (`Access-Control-Expose-Headers`). */
export const EXPOSED_HEADERS = 'X-Svc-Decision-Id, Retry-After, ETag';

/** Debug mode (`--debug-mode`): CORS headers on every answer, and preflight requests answered 204. */
export function registerDebugCors(app: FastifyInstance): void {
  app.addHook('onRequest', (req, reply, done) => {
    void reply.header('access-control-allow-origin', '*').header('access-control-expose-headers', EXPOSED_HEADERS);
    if (req.method === 'OPTIONS') {
      void reply
        .header('access-control-allow-methods', 'GET, POST, PUT, DELETE, OPTIONS')
        .header('access-control-allow-headers', req.headers['access-control-request-headers'] ?? 'content-type')
        .code(204)
        .send();
      return;
    }
    done();
  });
  app.options('*', (_req, reply) => {
    void reply.code(204).send();
  });
}
