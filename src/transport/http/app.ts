/**
 * The HTTP adapter (fastify): decodes a request, calls one façade method, encodes the answer.
 * Nothing here knows about rules; every error goes through the catalog.
 */
import { createServer } from 'node:http';
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest, type FastifyServerFactory } from 'fastify';
import { ServiceError } from '../../service/errors.js';
import type { CallContext, RuleServiceApi } from '../../service/types.js';
import { closesEarly, toHttpError } from './errors.js';
import { createFastPath, headerValue, tenantOf as tenantOfRaw } from './fast-path.js';
import { batchAnswer, evalAnswer, executeAnswer, objectBody } from './hot-routes.js';
import { readJsonBody } from './json-body.js';
import { JSON_TYPE } from './serialize.js';
import { clientErrorHandler, headerTimeoutOptions } from './client-error.js';
import { lingerOnClose } from './linger.js';
import { registerRequestLog, type RequestLogger } from './request-log.js';
import { registerHttpTracing } from './tracing.js';
import type { Tracing } from '../../observe/tracing.js';
import type { TenantManagerApi } from '../../service/tenant-manager.js';
import { TENANT_ROUTES, registerTenantRoutes } from './tenant-routes.js';

/** Options of the HTTP adapter. */
export interface HttpAppOptions {
  readonly bodyLimit: number;
  readonly requestTimeoutMs: number;
  readonly debugMode: boolean;
  readonly multiTenancy: boolean;
  /** Renders `/metrics`; undefined when metrics are disabled (404). */
  readonly metrics?: () => Promise<{ contentType: string; body: string }>;
  /** Debug rendering of a ruleset's conditions (`--debug-mode`). */
  readonly debugRuleset?: (ctx: CallContext, name: string) => unknown;
  readonly logger?: { error(obj: object, msg?: string): void; debug(obj: object, msg?: string): void };
  /** Request spans (`--otlp-endpoint`); undefined: no tracing hook is registered. */
  readonly tracing?: Tracing;
  /** Per-request debug lines; give it only with `--log-level debug` (otherwise no hook). */
  readonly requestLog?: RequestLogger;
  /** Tenant management (`--multi-tenancy-enabled`); absent: the `/api/v1/tenants` routes do not exist. */
  readonly tenants?: TenantManagerApi;
  /**
   * The fast path of the hot routes (./fast-path.ts); on unless false. It is never installed
   * with tracing, the request log or debug mode, whose hooks must see every request.
   */
  readonly fastPath?: boolean;
}


type Params = { name: string };

/** Routes as [method, path] pairs, also used to tell 405 from 404. */
const ROUTES: ReadonlyArray<readonly [string, RegExp]> = [
  ['GET', /^\/api\/v1\/rulesets$/],
  ['POST', /^\/api\/v1\/rulesets$/],
  ['GET', /^\/api\/v1\/rulesets\/[^/]+$/],
  ['DELETE', /^\/api\/v1\/rulesets\/[^/]+$/],
  ['GET', /^\/api\/v1\/rulesets\/[^/]+\/versions$/],
  ['POST', /^\/api\/v1\/rulesets\/[^/]+\/rollback$/],
  ['POST', /^\/api\/v1\/rulesets\/[^/]+\/filter$/],
  ['POST', /^\/api\/v1\/execute\/[^/]+$/],
  ['POST', /^\/api\/v1\/execute\/[^/]+\/batch$/],
  ['POST', /^\/api\/v1\/eval$/],
  ['GET', /^\/api\/v1\/config\/audit-sample-rate$/],
  ['PUT', /^\/api\/v1\/config\/audit-sample-rate$/],
  ['GET', /^\/health$/],
  ['GET', /^\/healthz\/live$/],
  ['GET', /^\/healthz\/ready$/],
  ['GET', /^\/metrics$/],
];

/** Builds the fastify instance with every route of SPEC.md "Endpoints" (filter included). */
export function buildHttpApp(service: RuleServiceApi, options: HttpAppOptions): FastifyInstance {
  // A request that arrives on a kept-alive connection while the server drains for shutdown
  // is shed with 503 NOT_READY (fastify already sets `Connection: close` on it).
  let closing = false;
  /** Logs a failure that is not a catalog error (a bug) and became a 5xx. */
  const reportUnexpected = (err: unknown, e: ServiceError, url: string): void => {
    if (e.httpStatus >= 500 && !(err instanceof ServiceError)) options.logger?.error({ err: (err as Error)?.message, url }, 'unexpected error');
  };
  const fastPathOn = options.fastPath !== false && !options.tracing && !options.requestLog && !options.debugMode;
  const app = Fastify({
    ...(fastPathOn
      ? {
          serverFactory: fastPathServer(
            createFastPath({
              service,
              bodyLimit: options.bodyLimit,
              requestTimeoutMs: options.requestTimeoutMs,
              multiTenancy: options.multiTenancy,
              isClosing: () => closing,
              reportUnexpected,
            }),
          ),
        }
      : {}),
    logger: false,
    bodyLimit: options.bodyLimit,
    // NOTE: body-read timeouts are enforced by readJsonBody so that the 408 carries the
    // catalog body; node's own requestTimeout would answer 408 with an empty body.
    requestTimeout: 0,
    forceCloseConnections: 'idle',
    // NOTE: fastify's own closing answer is a 503 without `code`; the onRequest hook below sends
    // the catalog body instead (DECISIONS.md 3: every error body is {error, code}).
    return503OnClosing: false,
    routerOptions: { maxParamLength: 1024 },
    // Headers count against the request timeout too, and errors before a request exists
    // (malformed HTTP, header timeout) get the catalog body.
    http: headerTimeoutOptions(options.requestTimeoutMs),
    clientErrorHandler: clientErrorHandler(options.requestTimeoutMs),
  });
  // Observability hooks first, so that requests answered by a later hook are seen too.
  const traceOf = options.tracing ? registerHttpTracing(app, options.tracing) : undefined;
  if (options.requestLog) registerRequestLog(app, options.requestLog);

  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', (request, _payload, done) => {
    readJsonBody(request.raw, options.bodyLimit, options.requestTimeoutMs, done);
  });

  const plainCtxOf = (req: FastifyRequest): CallContext => ({
    tenant: tenantOf(req, options.multiTenancy),
    sourceIp: req.ip ?? null,
    transport: 'http',
  });
  // NOTE: chosen once here; without tracing the routes build the plain context only.
  const ctxOf =
    traceOf === undefined ? plainCtxOf : (req: FastifyRequest): CallContext => ({ ...plainCtxOf(req), traceContext: traceOf(req) });

  app.setErrorHandler((err, req, reply) => {
    const e = toHttpError(err);
    reportUnexpected(err, e, req.url);
    if (closesEarly(e)) {
      reply.header('connection', 'close');
      lingerOnClose(req.raw.socket);
    }
    void reply.code(e.httpStatus).send(e.toBody());
  });

  app.addHook('preClose', (done) => {
    closing = true;
    done();
  });
  app.addHook('onRequest', (_req, reply, done) => {
    if (!closing) return done();
    void reply.code(503).header('connection', 'close').send(new ServiceError('NOT_READY', 'server is shutting down').toBody());
  });
  // A request in flight when the drain starts is answered with `Connection: close`: node closes
  // only the connections idle at that moment, so a kept-alive one would hold the shutdown open.
  app.addHook('onSend', (_req, reply, payload, done) => {
    if (closing) void reply.header('connection', 'close');
    done(null, payload);
  });

  app.setNotFoundHandler((req, reply) => {
    const path = req.url.split('?')[0] ?? req.url;
    const allowed = (options.tenants ? ROUTES.concat(TENANT_ROUTES) : ROUTES).filter(([, re]) => re.test(path)).map(([m]) => m);
    if (allowed.length > 0) {
      void reply
        .code(405)
        .header('allow', allowed.join(', '))
        .send(new ServiceError('METHOD_NOT_ALLOWED', `method ${req.method} is not allowed on ${path}; use ${allowed.join(', ')}`).toBody());
      return;
    }
    void reply.code(404).send(new ServiceError('NOT_FOUND', `no route for ${req.method} ${path}`).toBody());
  });

  // ------------------------------------------------------------- rulesets
  app.get('/api/v1/rulesets', (req, reply) => {
    void reply.send(service.listRulesets(ctxOf(req)));
  });
  app.post('/api/v1/rulesets', async (req) =>
    service.putRuleset(ctxOf(req), req.body, {
      signature: header(req, 'x-svc-signature'),
      publicKey: header(req, 'x-svc-public-key'),
    }),
  );
  app.get<{ Params: Params }>('/api/v1/rulesets/:name', (req, reply) => {
    void reply.send(service.getRuleset(ctxOf(req), req.params.name));
  });
  app.delete<{ Params: Params }>('/api/v1/rulesets/:name', async (req, reply) => {
    await service.deleteRuleset(ctxOf(req), req.params.name);
    return reply.code(204).send();
  });
  app.get<{ Params: Params }>('/api/v1/rulesets/:name/versions', async (req) => service.versions(ctxOf(req), req.params.name));
  app.post<{ Params: Params }>('/api/v1/rulesets/:name/rollback', async (req) => {
    const body = objectBody(req.body, 'a JSON object with "seq"');
    return service.rollback(ctxOf(req), req.params.name, body['seq']);
  });
  app.post<{ Params: Params }>('/api/v1/rulesets/:name/filter', (req, reply) => {
    void reply.send(service.filter(ctxOf(req), req.params.name, req.body));
  });

  // ------------------------------------------------------------- execution
  // NOTE (speed, issue 9): plain requests of these two routes are answered by the fast path
  // (./fast-path.ts) before fastify sees them; these routes answer the rest with the same code.
  app.post<{ Params: Params }>('/api/v1/execute/:name', (req, reply) => {
    void reply.type(JSON_TYPE).send(executeAnswer(service, ctxOf(req), req.params.name, req.body));
  });
  app.post<{ Params: Params }>('/api/v1/execute/:name/batch', (req, reply) => {
    void reply.type(JSON_TYPE).send(batchAnswer(service, ctxOf(req), req.params.name, req.body));
  });
  app.post('/api/v1/eval', (req, reply) => {
    void reply.type(JSON_TYPE).send(evalAnswer(service, ctxOf(req), req.body));
  });

  // ------------------------------------------------------------- config
  app.get('/api/v1/config/audit-sample-rate', (req, reply) => {
    void reply.send(service.getAuditSampleRate(ctxOf(req)));
  });
  app.put('/api/v1/config/audit-sample-rate', (req, reply) => {
    const body = objectBody(req.body, 'a JSON object with "sample_rate"');
    void reply.send(service.setAuditSampleRate(ctxOf(req), body['sample_rate']));
  });

  // ------------------------------------------------------------- tenants (multi-tenancy)
  if (options.tenants) registerTenantRoutes(app, options.tenants, ctxOf);

  // ------------------------------------------------------------- debug
  if (options.debugMode && options.debugRuleset) {
    const debugRuleset = options.debugRuleset;
    app.get<{ Params: Params }>('/api/v1/debug/rulesets/:name', (req, reply) => {
      void reply.send(debugRuleset(ctxOf(req), req.params.name));
    });
    app.addHook('onRequest', (req, reply, done) => {
      void reply.header('access-control-allow-origin', '*');
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

  // ------------------------------------------------------------- health and metrics
  const readiness = async (_req: FastifyRequest, reply: FastifyReply) => {
    try {
      return await service.ready();
    } catch (err) {
      const e = toHttpError(err);
      return reply.code(e.httpStatus).send(e.toBody());
    }
  };
  app.get('/health', readiness);
  app.get('/healthz/ready', readiness);
  app.get('/healthz/live', (_req, reply) => {
    void reply.send({ status: 'alive' });
  });
  app.get('/metrics', async (_req, reply) => {
    if (!options.metrics) throw new ServiceError('NOT_FOUND', 'metrics are disabled (--metrics-enabled=false)');
    const { contentType, body } = await options.metrics();
    return reply.header('content-type', contentType).send(body);
  });

  return app;
}

function tenantOf(req: FastifyRequest, multiTenancy: boolean): string {
  return tenantOfRaw(req.raw, multiTenancy);
}

function header(req: FastifyRequest, name: string): string | undefined {
  return headerValue(req.raw, name);
}

/**
 * fastify's own HTTP/1 server (fastify/lib/server.js, the same settings) with the fast path in
 * front of its request handler: a request the fast path does not take goes to fastify as is.
 */
function fastPathServer(fast: ReturnType<typeof createFastPath>): FastifyServerFactory {
  return (handler, opts) => {
    const server = createServer((opts['http'] ?? {}) as object, (req, res) => {
      if (!fast(req, res)) handler(req, res);
    });
    server.keepAliveTimeout = opts['keepAliveTimeout'] as number;
    server.requestTimeout = opts['requestTimeout'] as number;
    server.setTimeout(opts['connectionTimeout'] as number);
    const perSocket = opts['maxRequestsPerSocket'] as number | null | undefined;
    if (typeof perSocket === 'number' && perSocket > 0) server.maxRequestsPerSocket = perSocket;
    return server;
  };
}
