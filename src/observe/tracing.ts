/**
 * Trace export (docs/observability.md): OTLP over HTTP with protobuf bodies, on when `--otlp-endpoint` is
 * set. Spans: one SERVER span per HTTP or gRPC request (made by the transports through
 * `startServerSpan`) and one INTERNAL span per ruleset execution (made by the façade through
 * the `ServiceTracer` port), the child of its request span. A W3C `traceparent` from the caller
 * makes the request span join the caller's trace.
 *
 * NOTE: parents are passed explicitly (`CallContext.traceContext`); no global context manager
 * (async hooks) and no global tracer provider are registered, so a server without
 * `--otlp-endpoint` never loads this module's SDK objects and pays nothing.
 */
import {
  DiagLogLevel,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  diag,
  trace,
  type Attributes,
  type Context,
  type Span,
  type TextMapGetter,
  type Tracer,
} from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { defaultResource, resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';
import type { ExecutionSpan, ServiceTracer } from '../service/ports.js';
import type { Logger } from './logger.js';

/** Path of the OTLP/HTTP traces resource. */
const TRACES_PATH = '/v1/traces';

/** Options of `Tracing`. */
export interface TracingOptions {
  /** `--otlp-endpoint`: the collector's base URL or its full traces URL (see `tracesUrl`). */
  readonly endpoint: string;
  /** `--service-name`: resource attribute `service.name`. */
  readonly serviceName: string;
  /** Resource attribute `service.version`. */
  readonly serviceVersion: string;
  /** Resource attribute `service.instance.id`, when known. */
  readonly instanceId?: string;
  /** Where export failures are reported (warn). */
  readonly logger?: Pick<Logger, 'warn'>;
}

/** A started request span and the context its children start in. */
export interface RequestSpan {
  readonly span: Span;
  readonly context: Context;
}

/**
 * The URL spans are posted to. An endpoint whose path ends in `/v1/traces` is used as it is;
 * any other is a base URL and gets `/v1/traces` appended (`http://collector:4318` posts to
 * `http://collector:4318/v1/traces`, `http://gw/otlp` to `http://gw/otlp/v1/traces`), like
 * `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` and `OTEL_EXPORTER_OTLP_ENDPOINT` respectively.
 */
export function tracesUrl(endpoint: string): string {
  const url = new URL(endpoint);
  if (url.pathname.endsWith(TRACES_PATH)) return url.href;
  url.pathname = url.pathname.replace(/\/+$/, '') + TRACES_PATH;
  return url.href;
}

/** The tracer of the server: span factory for the transports and the façade, and the exporter. */
export class Tracing implements ServiceTracer {
  /** The URL spans are posted to. */
  readonly url: string;
  private readonly provider: BasicTracerProvider;
  private readonly tracer: Tracer;
  private readonly propagator = new W3CTraceContextPropagator();
  private closing: Promise<void> | undefined;

  constructor(options: TracingOptions) {
    this.url = tracesUrl(options.endpoint);
    const logger = options.logger;
    if (logger) {
      // Export failures reach the OpenTelemetry diagnostic logger; only warnings and errors
      // are passed on to the server log.
      const warn = (message: string, ...args: unknown[]) =>
        logger.warn({ component: 'otlp', detail: args.map((a) => (a instanceof Error ? a.message : String(a))) }, message);
      const drop = () => {};
      diag.setLogger({ error: warn, warn, info: drop, debug: drop, verbose: drop }, { logLevel: DiagLogLevel.WARN, suppressOverrideMessage: true });
    }
    const resource = defaultResource().merge(
      resourceFromAttributes({
        'service.name': options.serviceName,
        'service.version': options.serviceVersion,
        ...(options.instanceId !== undefined ? { 'service.instance.id': options.instanceId } : {}),
      }),
    );
    // NOTE: batching follows the standard OTEL_BSP_* variables (default: every 5 s or 512 spans).
    const processor = new BatchSpanProcessor(new OTLPTraceExporter({ url: this.url }));
    this.provider = new BasicTracerProvider({ resource, spanProcessors: [processor] });
    this.tracer = this.provider.getTracer('svc');
  }

  /**
   * Starts the SERVER span of an incoming request. The caller's W3C trace context
   * (`traceparent`, `tracestate`) is read from `carrier` with `getter`; without a valid one the
   * span starts a new trace.
   */
  startServerSpan<C>(name: string, carrier: C, getter: TextMapGetter<C>, attributes: Attributes): RequestSpan {
    const parent = this.propagator.extract(ROOT_CONTEXT, carrier, getter);
    const span = this.tracer.startSpan(name, { kind: SpanKind.SERVER, attributes }, parent);
    return { span, context: trace.setSpan(parent, span) };
  }

  /** Starts the span of one ruleset execution under `parent` (a request span's context). */
  startExecution(parent: unknown, ruleset: string, version: string, tenant: string): ExecutionSpan {
    const span = this.tracer.startSpan(
      `execute ${ruleset}`,
      {
        kind: SpanKind.INTERNAL,
        attributes: { 'svc.ruleset.name': ruleset, 'svc.ruleset.version': version, 'svc.tenant': tenant },
      },
      (parent as Context | undefined) ?? ROOT_CONTEXT,
    );
    return new OtelExecutionSpan(span);
  }

  /** Exports every finished span still buffered. */
  async flush(): Promise<void> {
    await this.provider.forceFlush();
  }

  /** Exports the buffered spans, then stops the exporter. Idempotent. */
  shutdown(): Promise<void> {
    this.closing ??= this.provider.shutdown();
    return this.closing;
  }
}

/** An execution span over an OpenTelemetry span. */
class OtelExecutionSpan implements ExecutionSpan {
  readonly traceId: string;
  readonly spanId: string;

  constructor(private readonly span: Span) {
    const sc = span.spanContext();
    this.traceId = sc.traceId;
    this.spanId = sc.spanId;
  }

  succeeded(code: string, steps: number): void {
    this.span.setAttributes({ 'svc.execution.result': 'success', 'svc.execution.result_code': code, 'svc.execution.step_count': steps });
    this.span.end();
  }

  failed(code: string, message: string, steps: number): void {
    this.span.setAttributes({ 'svc.execution.result': 'error', 'error.type': code, 'svc.execution.step_count': steps });
    this.span.setStatus({ code: SpanStatusCode.ERROR, message });
    this.span.end();
  }
}
