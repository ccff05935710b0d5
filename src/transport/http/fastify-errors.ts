/**
 * fastify's error and not-found handlers: every error answer is the catalog body, under the
 * same rules as the hot dispatcher's (`errorAnswer` of ./errors.ts); a request no route took
 * is 405 with `Allow` when another method has a route on its path (from the route table),
 * else 404.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ServiceError } from '../../service/errors.js';
import { closesEarly, errorAnswer, errorHeaders, type ReportUnexpected } from './errors.js';
import type { AllowedMethods } from './route-match.js';

/** Sets the error handler of `app`. */
export function registerErrorHandler(app: FastifyInstance, reportUnexpected: ReportUnexpected): void {
  app.setErrorHandler((err, req, reply) => {
    const e = errorAnswer(err, req.raw, reportUnexpected);
    if (closesEarly(e)) reply.header('connection', 'close');
    const headers = errorHeaders(e);
    if (headers !== null) void reply.headers(headers);
    void reply.code(e.httpStatus).send(e.toBody());
  });
}

/** Sets the not-found handler of `app`: 405 or 404, from `allowedMethods`. */
export function registerNotFound(app: FastifyInstance, allowedMethods: AllowedMethods): void {
  app.setNotFoundHandler((req, reply) => {
    const path = req.url.split('?')[0] ?? req.url;
    const allowed = allowedMethods(path);
    if (allowed.length > 0) {
      void reply
        .code(405)
        .header('allow', allowed.join(', '))
        .send(new ServiceError('METHOD_NOT_ALLOWED', `method ${req.method} is not allowed on ${path}; use ${allowed.join(', ')}`).toBody());
      return;
    }
    void reply.code(404).send(new ServiceError('NOT_FOUND', `no route for ${req.method} ${path}`).toBody());
  });
}

/**
 * fastify's `frameworkErrors`: errors its router raises before a route runs (a path parameter
 * longer than the router's `maxParamLength`, a URL that does not decode). Catalog body, 400,
 * and the URL is not echoed back (EXTENSIONS.md 6: it can be kilobytes long).
 */
export function frameworkErrors(err: Error & { code?: string }, _req: FastifyRequest, reply: FastifyReply): void {
  const message =
    err.code === 'FST_ERR_MAX_PARAM_LENGTH'
      ? 'a path parameter is longer than 128 characters'
      : err.code === 'FST_ERR_BAD_URL'
        ? 'the URL is not valid'
        : 'bad request';
  void reply.code(400).send(new ServiceError('BAD_REQUEST', message).toBody());
}
