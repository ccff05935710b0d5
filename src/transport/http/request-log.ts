/**
 * Per-request log lines of the HTTP adapter: registered only with `--log-level
 * debug`, so at info and above no request does any logging work. One debug line per answered
 * request: `{"level":"debug","msg":"http request","method":"POST","url":"/api/v1/execute/loan",
 * "status":200,"duration_ms":0.42,"source_ip":"127.0.0.1"}`.
 */
import type { FastifyInstance } from 'fastify';
import type { Logger } from '../../log.js';

/** What the request log needs from the logger. */
export type RequestLogger = Pick<Logger, 'debug'>;

/** Adds the request-log hook to `app`. */
export function registerRequestLog(app: FastifyInstance, logger: RequestLogger): void {
  app.addHook('onResponse', (req, reply, done) => {
    logger.debug(
      {
        method: req.method,
        url: req.url,
        status: reply.statusCode,
        duration_ms: Math.round(reply.elapsedTime * 1000) / 1000,
        source_ip: req.ip ?? null,
      },
      'http request',
    );
    done();
  });
}
