/**
 * Request spans of the HTTP adapter, registered only when tracing is on: one SERVER
 * span per request, named `<METHOD> <route pattern>` (`POST /api/v1/execute/:name`), joined to
 * the caller's trace by its `traceparent` header. The route handlers hand the span's context to
 * the façade through `CallContext.traceContext`, so executions become its children.
 */
import { SpanStatusCode, defaultTextMapGetter, type Attributes } from '@opentelemetry/api';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { RequestSpan, Tracing } from '../../observe/tracing.js';

/** Finds the context of a request's span (undefined when it has none). */
export type RequestTraceContext = (req: FastifyRequest) => unknown;

/** Adds the span hooks to `app`; returns the lookup the routes use for `traceContext`. */
export function registerHttpTracing(app: FastifyInstance, tracing: Tracing): RequestTraceContext {
  const spans = new WeakMap<FastifyRequest, RequestSpan>();

  app.addHook('onRequest', (req, _reply, done) => {
    const route = req.is404 ? undefined : req.routeOptions.url;
    const attributes: Attributes = {
      'http.request.method': req.method,
      'url.path': pathOf(req.url),
      'url.scheme': 'http',
      'client.address': req.ip,
    };
    if (route !== undefined) attributes['http.route'] = route;
    spans.set(req, tracing.startServerSpan(route !== undefined ? `${req.method} ${route}` : req.method, req.headers, defaultTextMapGetter, attributes));
    done();
  });

  app.addHook('onError', (req, _reply, error, done) => {
    spans.get(req)?.span.setAttribute('svc.error.message', error.message);
    done();
  });

  app.addHook('onResponse', (req, reply, done) => {
    const started = spans.get(req);
    if (started !== undefined) {
      spans.delete(req);
      const status = reply.statusCode;
      started.span.setAttribute('http.response.status_code', status);
      // Server spans: 5xx is an error, 4xx is the caller's problem (OpenTelemetry HTTP conventions).
      if (status >= 500) {
        started.span.setAttribute('error.type', String(status));
        started.span.setStatus({ code: SpanStatusCode.ERROR });
      }
      started.span.end();
    }
    done();
  });

  app.addHook('onRequestAbort', (req, done) => {
    const started = spans.get(req);
    if (started !== undefined) {
      spans.delete(req);
      started.span.setAttribute('error.type', 'aborted');
      started.span.setStatus({ code: SpanStatusCode.ERROR, message: 'client closed the connection' });
      started.span.end();
    }
    done();
  });

  return (req) => spans.get(req)?.context;
}

function pathOf(url: string): string {
  const q = url.indexOf('?');
  return q < 0 ? url : url.slice(0, q);
}
