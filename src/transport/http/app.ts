/**
 * The HTTP adapter: assembles the route table (./routes.ts), fastify (./fastify-routes.ts,
 * ./fastify-errors.ts, ./hooks.ts) and the hot dispatcher (./hot-dispatch.ts) in front of it.
 * Nothing here knows about rules; every error goes through the catalog.
 */
import Fastify, { type FastifyInstance, type FastifyRequest } from 'fastify';
import type { Logger } from '../../log.js';
import type { Tracing } from '../../observe/tracing.js';
import { DEFAULT_MAX_RESPONSE_BYTES } from '../answer-bound.js';
import { unexpectedFields } from '../../service/errors.js';
import type { DataServiceApi } from '../../service/data-service.js';
import type { TenantManagerApi } from '../../service/tenant-manager.js';
import type { CallContext, RuleServiceApi } from '../../service/types.js';
import type { HttpAuth } from './auth.js';
import { callContextOf } from './call-context.js';
import { clientErrorHandler, headerTimeoutOptions } from './client-error.js';
import { Drain } from './drain.js';
import type { ReportUnexpected } from './errors.js';
import { frameworkErrors, registerErrorHandler, registerNotFound } from './fastify-errors.js';
import { registerRoutes } from './fastify-routes.js';
import { registerConsole } from './console.js';
import { registerDebugCors, registerDrainHooks } from './hooks.js';
import { createHotRoutes, MAX_PATH_PARAM } from './hot-dispatch.js';
import { readJsonBody } from './json-body.js';
import { charsetError } from './media-type.js';
import { registerRequestLog, type RequestLogger } from './request-log.js';
import { type RouteDeps, activeRoutes } from './route.js';
import { compileAllowedMethods } from './route-match.js';
import { ROUTES } from './routes.js';
import type { HttpsOptions } from './https.js';
import { httpServer } from './server-factory.js';
import { buildOpenApi } from './openapi.js';
import { VERSION } from '../../version.js';
import { registerHttpTracing } from './tracing.js';

/** Options of the HTTP adapter. */
export interface HttpAppOptions {
  readonly bodyLimit: number;
  /** `--max-response-bytes` (default 10 MiB): a larger answer is LIMIT_EXCEEDED. */
  readonly maxResponseBytes?: number;
  readonly requestTimeoutMs: number;
  readonly debugMode: boolean;
  readonly multiTenancy: boolean;
  /** Renders `/metrics`; undefined when metrics are disabled (404). */
  readonly metrics?: () => Promise<{ contentType: string; body: string }>;
  /** Debug rendering of a ruleset's conditions (`--debug-mode`). */
  readonly debugRuleset?: (ctx: CallContext, name: string) => unknown;
  readonly logger?: Pick<Logger, 'error' | 'debug'>;
  /** Request spans (`--otlp-endpoint`); undefined: no tracing hook is registered. */
  readonly tracing?: Tracing;
  /** Per-request debug lines; give it only with `--log-level debug` (otherwise no hook). */
  readonly requestLog?: RequestLogger;
  /** Tenant management (`--multi-tenancy-enabled`); absent: the `/api/v1/tenants` routes do not exist. */
  readonly tenants?: TenantManagerApi;
  /** Reference data (EXTENSIONS.md 3); absent: the `/api/v1/data` routes answer 404. */
  readonly data?: DataServiceApi;
  /**
   * The hot dispatcher (./hot-dispatch.ts); on unless false. It is never installed with
   * tracing, the request log or debug mode, whose hooks must see every request.
   */
  readonly hotDispatch?: boolean;
  /**
   * The HTTP/1.1 fast path of the hot routes on plain HTTP (./fast-path.ts); on unless false
   * (`--disable-http-fast-path`). Only with the hot dispatcher.
   */
  readonly httpFastPath?: boolean;
  /** Authentication (EXTENSIONS.md 1); absent: off, every route open. */
  readonly auth?: HttpAuth;
  /** HTTPS (`--http-tls-cert`, and mTLS with `--tls-client-ca`); absent: plain HTTP. */
  readonly https?: HttpsOptions;
  /** The web console's built files (./console.ts); absent: no `/console/` routes (`--disable-console`). */
  readonly consoleDir?: string;
}

/** Builds the fastify instance with every route of the route table that exists for `options`. */
export function buildHttpApp(service: RuleServiceApi, options: HttpAppOptions): FastifyInstance {
  // NOTE: the OpenAPI document is built at its first request, then served as this text.
  let openApiText: string | undefined;
  const openApi = (): string =>
    (openApiText ??= JSON.stringify(
      buildOpenApi(routes, { version: VERSION, multiTenancy: options.multiTenancy, auth: options.auth ? { publicMetrics: options.auth.publicMetrics } : null }),
    ));
  const deps: RouteDeps = {
    service,
    debugMode: options.debugMode,
    maxResponseBytes: options.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES,
    ...(options.tenants ? { tenants: options.tenants } : {}),
    ...(options.data ? { data: options.data } : {}),
    ...(options.metrics ? { metrics: options.metrics } : {}),
    ...(options.debugRuleset ? { debugRuleset: options.debugRuleset } : {}),
    openApi,
  };
  const routes = activeRoutes(ROUTES, deps);
  const drain = new Drain();
  const reportUnexpected: ReportUnexpected = (err, e, url) =>
    options.logger?.error({ ...unexpectedFields(err), code: e.code, url: urlForLog(url) }, 'unexpected error');
  const { bodyLimit, requestTimeoutMs, multiTenancy, auth } = options;
  const hotOn = options.hotDispatch !== false && !options.tracing && !options.requestLog && !options.debugMode;
  const app = Fastify({
    // NOTE: always our server factory: it answers a request without Host with the catalog body
    // (node's own answer has an empty body), and puts the hot dispatcher in front when it is on.
    serverFactory: httpServer(
      hotOn
        ? {
            routes: createHotRoutes(routes, { deps, bodyLimit, requestTimeoutMs, multiTenancy, drain, reportUnexpected, ...(auth ? { auth } : {}) }),
            requestTimeoutMs,
            fastPath: options.httpFastPath !== false,
          }
        : null,
      options.https ?? null,
    ),
    logger: false,
    bodyLimit,
    // NOTE: body-read timeouts are enforced by readJsonBody so that the 408 carries the
    // catalog body; node's own requestTimeout would answer 408 with an empty body.
    requestTimeout: 0,
    forceCloseConnections: 'idle',
    // NOTE: fastify's own closing answer is a 503 without `code`; the drain hook sends the
    // catalog body instead (DECISIONS.md 3: every error body is {error, code}).
    return503OnClosing: false,
    // NOTE (EXTENSIONS.md 6): a path parameter over 128 characters (the longest ruleset name or
    // tenant id) is 400 BAD_REQUEST without the URL echoed back (`frameworkErrors`).
    routerOptions: { maxParamLength: MAX_PATH_PARAM },
    frameworkErrors,
    // Headers count against the request timeout too, and errors before a request exists
    // (malformed HTTP, header timeout) get the catalog body.
    http: { ...headerTimeoutOptions(requestTimeoutMs), requireHostHeader: false },
    clientErrorHandler: clientErrorHandler(requestTimeoutMs),
  });
  // Observability hooks first, so that requests answered by a later hook are seen too.
  const traceOf = options.tracing ? registerHttpTracing(app, options.tracing) : undefined;
  if (options.requestLog) registerRequestLog(app, options.requestLog);

  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', (request, _payload, done) => {
    // NOTE (EXTENSIONS.md 6): a charset other than UTF-8 is 415; the hot dispatcher only takes
    // the UTF-8 spellings, so the check lives on this path alone.
    const refused = charsetError(request.headers['content-type']);
    if (refused !== null) {
      done(refused);
      request.raw.resume();
      return;
    }
    readJsonBody(request.raw, bodyLimit, requestTimeoutMs, done);
  });
  // NOTE: chosen once here; without tracing the routes build the plain context only.
  const plainCtxOf = (req: FastifyRequest): CallContext => callContextOf(req.raw, multiTenancy);
  const ctxOf = traceOf === undefined ? plainCtxOf : (req: FastifyRequest): CallContext => ({ ...plainCtxOf(req), traceContext: traceOf(req) });

  registerErrorHandler(app, reportUnexpected);
  registerDrainHooks(app, drain);
  registerNotFound(app, compileAllowedMethods(routes));
  registerRoutes(app, routes, deps, ctxOf, auth ? { auth, multiTenancy } : undefined);
  if (options.consoleDir !== undefined) registerConsole(app, options.consoleDir);
  if (options.debugMode && options.debugRuleset) registerDebugCors(app);
  return app;
}

/** A request URL as logged: at most 256 characters (a long path parameter is not logged whole). */
function urlForLog(url: string): string {
  return url.length > 256 ? `${url.slice(0, 256)}...` : url;
}
